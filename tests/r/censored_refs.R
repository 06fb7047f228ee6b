# References for censored responses (issue 28, item 2): Kaplan-Meier, Turnbull's NPMLE and
# Cox (Breslow ties) from R's survival package.
#
# Run from the repository root (R 4.2, survival 3.5-3, jsonlite):
#   Rscript tests/r/censored_refs.R
# Writes tests/data/reference/censored/{kaplan_meier,turnbull,cox}.json. Every data set is
# simulated here from a fixed seed and vendored with its results, so the Python tests need
# neither R nor this script.
#
# kaplan_meier.json  25 right-censored samples: time, status (1 = event) and
#                    survfit(Surv(time, status) ~ 1): time, surv, std.err (Greenwood: the SE of
#                    -log S, so SE(S) = S * std.err), n.event, n.censor.
# turnbull.json      10 samples of exact, left-, right- and interval-censored values, given as
#                    the interval (lower, upper] with lower == upper for an exact value and
#                    null for an infinite end; survfit(Surv(lower, upper, type = "interval2")
#                    ~ 1): time, surv. Censoring bounds are drawn among the exact values, so
#                    that every Turnbull interval is a single exact value.
#                    survfit's Turnbull EM stops when no survival value moves by more than
#                    5e-5 in an iteration, so its printed curve is accurate to about 1e-5;
#                    `turnbull` is that curve and `turnbull_converged` the same survfit with
#                    the EM iterated until the change is below 1e-13 (survival's own
#                    survfitTurnbull with only that constant changed, set below).
# cox.json           right-censored samples with covariates x1, x2: continuous times (no
#                    ties) at n = 200, 800 and 3200, and n = 400 rounded up to whole days
#                    (many ties); coxph(..., ties = "breslow"): coef, se, loglik.
suppressMessages({library(survival); library(jsonlite)})
out_dir <- "tests/data/reference/censored"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
num <- function(x) signif(x, 17)

set.seed(20261126)
km <- lapply(seq_len(25), function(k) {
  n <- sample(15:80, 1)
  event <- round(rexp(n, 1 / 10), 1)
  censor <- round(runif(n, 0, 25), 1)
  time <- pmin(event, censor)
  status <- as.integer(event <= censor)
  if (k %% 5 == 0) status[which.max(time)] <- 0L  # the largest time censored
  if (k %% 7 == 0) {  # a censored row tied with the largest event time
    time <- c(time, max(time[status == 1]))
    status <- c(status, 0L)
  }
  fit <- survfit(Surv(time, status) ~ 1)
  list(time = num(time), status = status,
       km = list(time = num(fit$time), surv = num(fit$surv), std_err = num(fit$std.err),
                 n_event = fit$n.event, n_censor = fit$n.censor))
})
write_json(km, file.path(out_dir, "kaplan_meier.json"), digits = NA, auto_unbox = TRUE, pretty = FALSE)

# survfit's Turnbull EM with its stopping rule (max change 5e-5) tightened to 1e-13
with_tight_turnbull <- function(expr) {
  original <- survival:::survfitTurnbull
  tight <- original
  body(tight) <- parse(text = sub("5e-05", "1e-13", deparse(body(original)), fixed = TRUE))
  assignInNamespace("survfitTurnbull", tight, "survival")
  on.exit(assignInNamespace("survfitTurnbull", original, "survival"))
  expr
}

set.seed(20261127)
tb <- lapply(seq_len(10), function(k) {
  n_exact <- sample(20:40, 1)
  exact <- round(rexp(n_exact, 1 / 10))
  v <- sort(unique(exact))
  n_int <- sample(5:20, 1); n_left <- sample(2:8, 1); n_right <- sample(2:8, 1)
  a <- sapply(seq_len(n_int), function(i) { p <- sort(sample(v, 2)); p })
  lower <- c(exact, a[1, ], rep(NA, n_left), sample(v[-length(v)], n_right, replace = TRUE))
  upper <- c(exact, a[2, ], sample(v[-1], n_left, replace = TRUE), rep(NA, n_right))
  fit <- survfit(Surv(lower, upper, type = "interval2") ~ 1)
  tight <- with_tight_turnbull(survfit(Surv(lower, upper, type = "interval2") ~ 1))
  list(lower = num(lower), upper = num(upper),
       turnbull = list(time = num(fit$time), surv = num(fit$surv)),
       turnbull_converged = list(time = num(tight$time), surv = num(tight$surv)))
})
write_json(tb, file.path(out_dir, "turnbull.json"), digits = NA, auto_unbox = TRUE, pretty = FALSE, na = "null")

set.seed(20261128)
cox <- lapply(list(c(200, 0), c(800, 0), c(3200, 0), c(400, 1)), function(setting) {
  n <- setting[1]; tied <- setting[2] == 1
  x1 <- rnorm(n); x2 <- rbinom(n, 1, 0.4)
  event <- rexp(n, exp(0.5 * x1 - 0.7 * x2) / 10)
  censor <- runif(n, 0, 30)
  time <- pmin(event, censor)
  if (tied) time <- ceiling(time)  # whole days: many ties
  status <- as.integer(event <= censor)
  fit <- coxph(Surv(time, status) ~ x1 + x2, ties = "breslow")
  list(time = num(time), status = status, x1 = num(x1), x2 = x2, ties = tied,
       coef = num(unname(coef(fit))), se = num(unname(sqrt(diag(vcov(fit))))),
       loglik = num(fit$loglik[2]))
})
write_json(cox, file.path(out_dir, "cox.json"), digits = NA, auto_unbox = TRUE, pretty = FALSE)
cat("wrote", out_dir, "\n")
