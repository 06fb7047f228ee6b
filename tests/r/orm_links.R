# rms::orm (rms 6.5) under each of its five families on data sets the other
# orm references do not use: the fit (all intercepts, slopes, the full vcov's
# standard errors, log-likelihoods, LR chi2), predict(type = "lp"), Mean(),
# Quantile() and ExProb() with 95% limits at new rows, some beyond the observed range.
#   warpbreaks: breaks ~ wool + tension (factor predictors, 31 distinct y)
#   faithful:   waiting ~ eruptions (272 rows, 51 distinct y, many ties)
#   lung:       time ~ age + sex (survival::lung, complete rows; 186 distinct y;
#               the event indicator is ignored: orm fits the uncensored times)
# faithful under "cauchit" is where orm stops short: "singularity problem", Max
# Deriv 36.6 and a log-likelihood 126 below the maximum; the tests say so.
# orm's weights= stops in rms 6.5 (orm.fit has no weights argument), so weighted
# fits are checked in Python against the same rows replicated.
# Writes tests/data/reference/orm_links/<data>_<family>.json.
# Run from the repository root:  Rscript tests/r/orm_links.R
suppressMessages({library(rms); library(survival); library(jsonlite)})

out_dir <- "tests/data/reference/orm_links"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

families <- c(logistic = "logit", probit = "probit", loglog = "cloglog",
              cloglog = "loglog", cauchit = "cauchit")
probs <- c(0.1, 0.5, 0.9)

case <- function(name, data, formula, family, newdata, ys) {
  data <- as.data.frame(data)
  fit <- orm(formula, data = data, family = family, x = TRUE, eps = 1e-12, maxit = 200)
  X <- predict(fit, newdata, type = "x")
  qu <- Quantile(fit)
  k <- fit$non.slopes
  se <- sqrt(diag(vcov(fit, intercepts = "all")))
  factors <- Filter(is.factor, data[, all.vars(formula)[-1], drop = FALSE])
  list(
    dataset = name, family = family, ordstats_link = unname(families[family]),
    rms_version = as.character(packageVersion("rms")),
    r_call = sprintf("orm(%s, family = \"%s\", eps = 1e-12, maxit = 200)",
                     deparse(formula), family),
    formula = deparse(formula),
    data = lapply(data[, all.vars(formula)], function(v) if (is.factor(v)) as.character(v) else v),
    factor_levels = lapply(factors, levels),
    newdata = lapply(newdata, function(v) if (is.factor(v)) as.character(v) else v),
    yunique = fit$yunique,
    intercepts = unname(coef(fit)[seq_len(k)]),
    intercept_se = unname(se[seq_len(k)]),
    slopes = as.list(coef(fit)[-seq_len(k)]),
    slope_se = as.list(se[-seq_len(k)]),
    interceptRef = fit$interceptRef,
    loglik = as.numeric(logLik(fit)),
    deviance = fit$deviance,
    lr_chi2 = unname(fit$stats["Model L.R."]),
    max_deriv = unname(fit$stats["Max Deriv"]),
    lp = unname(predict(fit, newdata, type = "lp")),
    mean = with_limits(function(...) Mean(fit)(X = X, ...)),
    quantile = lapply(probs, function(q) c(list(q = q), with_limits(function(...) qu(q, X = X, ...)))),
    exprob = c(list(y = ys), with_limits(function(...) ExProb(fit)(X = X, y = ys, ...)))
  )
}

# estimate and 95% limits of Mean, Quantile (vectors) or ExProb (rows x y matrices)
limits <- function(z) {
  lim <- attr(z, "limits")
  if (is.null(lim)) lim <- list(lower = z$lower, upper = z$upper)
  est <- if (is.list(z)) z$prob else as.vector(z)
  list(estimate = unname(est), lower = unname(lim$lower), upper = unname(lim$upper))
}

# rms 6.5's Quantile and ExProb stop with conf.int ("non-conformable arguments")
# on fits with a factor predictor: they pick the covariance rows by matching
# names(coef(fit)) to colnames(X), and predict(type = "x") names a factor's
# columns otherwise; then the estimate alone, and the message
with_limits <- function(f) {
  tryCatch(limits(f(conf.int = 0.95)), error = function(e) {
    z <- f()
    list(estimate = unname(if (is.list(z)) z$prob else as.vector(z)),
         interval_error = conditionMessage(e))
  })
}

write_case <- function(x, file) {
  writeLines(toJSON(x, digits = NA, auto_unbox = TRUE), file.path(out_dir, paste0(file, ".json")))
}

wb <- warpbreaks
wb_new <- data.frame(wool = factor(c("A", "B", "B", "A"), levels = levels(wb$wool)),
                     tension = factor(c("L", "M", "H", "H"), levels = levels(wb$tension)))
fa_new <- data.frame(eruptions = c(1.6, 3.5, 4.5, 0.5, 7))
lung_d <- na.omit(lung[, c("time", "age", "sex")])
lung_d$sex <- factor(lung_d$sex, levels = 1:2, labels = c("male", "female"))
lung_new <- data.frame(age = c(40, 63, 82, 20, 100),
                       sex = factor(c("male", "female", "male", "female", "male"),
                                    levels = c("male", "female")))
for (family in names(families)) {
  write_case(case("warpbreaks", wb, breaks ~ wool + tension, family, wb_new,
                  ys = c(5, 10, 26, 26.5, 70, 80)), paste0("warpbreaks_", family))
  write_case(case("faithful", faithful, waiting ~ eruptions, family, fa_new,
                  ys = c(40, 43, 70, 70.5, 96, 100)), paste0("faithful_", family))
  write_case(case("lung", lung_d, time ~ age + sex, family, lung_new,
                  ys = c(1, 5, 300, 301.5, 1022, 2000)), paste0("lung_", family))
}
cat("wrote", length(list.files(out_dir)), "files\n")
