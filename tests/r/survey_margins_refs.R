# Average predicted probabilities of svyolr fits with design-based standard errors (issue 27),
# the references of ordstats' avg_predictions on survey fits.
#
# Run from the repository root (R 4.2, survey 4.1-1, numDeriv, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files read here):
#   Rscript tests/r/survey_margins_refs.R
# Writes tests/data/survey/margins_refs.json, one entry per (design, averaging weights):
#   design, formula  the R calls; wts: "none" (each fitted row counts once) or "pw"
#   coef, var        svyolr with a precise optim Hessian (reltol 1e-15, ndeps 1e-5): the
#                    linearisation covariance that the ordstats tests match to 1e-4
#   estimate         sum_i w_i P(Y_i = j | x_i, coef) / sum_i w_i over the rows the fit used
#   std_error        the delta method with vcov(fit): J V J' with J = d estimate / d coef
#                    (numDeriv's Richardson jacobian). The rows are fixed: only the
#                    coefficients vary, as marginaleffects' avg_predictions(fit, wts = ...)
#                    with vcov(fit) and ordstats' avg_predictions(wts=...) compute it.
#   sampled_se       (wts = "pw" only) the other estimand, the population mean of the
#                    predicted probabilities, whose rows are a sample too: svyrecvar of the
#                    influence functions w_i (P_ij - estimate_j) / sum(w) + J infl_i, with
#                    infl_i = H^-1 w_i s_i (numDeriv's Hessian and scores), as svymean of a
#                    variable that depends on estimated coefficients (Stata's margins,
#                    vce(unconditional)). ordstats does not compute it; the tests show that
#                    it differs from std_error.
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apiclus1 <- read_api("apiclus1"); apistrat <- read_api("apistrat")
designs <- api_designs[c("clus1", "strat")]
f <- mealcat ~ avg.ed + stype
refs <- list()
for (name in names(designs)) {
  des <- eval(parse(text = designs[[name]]))
  fit <- svyolr(f, design = des, control = precise(6))
  par <- c(fit$coefficients, fit$zeta)
  mf <- model.frame(f, model.frame(des), na.action = na.pass)
  ok <- complete.cases(mf)
  sub <- des[ok, ]
  x <- model.matrix(f, mf[ok, , drop = FALSE])[, -1, drop = FALSE]
  y <- as.integer(model.response(mf[ok, , drop = FALSE]))
  pw <- weights(sub)
  pc <- ncol(x)
  probs <- function(p) {
    cum <- cbind(0, plogis(outer(-drop(x %*% p[seq_len(pc)]), p[-seq_len(pc)], "+")), 1)
    cum[, -1, drop = FALSE] - cum[, -ncol(cum), drop = FALSE]
  }
  rowll <- function(p) pw * log(probs(p)[cbind(seq_along(y), y)])
  H <- numDeriv::hessian(function(p) -sum(rowll(p)), par)
  S <- numDeriv::jacobian(rowll, par)
  infl <- S %*% solve(H)
  for (wts in c("none", "pw")) {
    w <- if (wts == "pw") pw else rep(1, length(y))
    average <- function(p) colSums(w * probs(p)) / sum(w)
    est <- average(par)
    J <- numDeriv::jacobian(average, par)
    e <- list(design = designs[[name]], formula = deparse(f), wts = wts,
              names = names(par), coef = unname(par), var = unname(vcov(fit)),
              levels = levels(mf$mealcat), estimate = unname(est),
              std_error = sqrt(diag(J %*% vcov(fit) %*% t(J))))
    if (wts == "pw") {
      h <- w * sweep(probs(par), 2, est) / sum(w) + infl %*% t(J)
      v <- svyrecvar(h, sub$cluster, sub$strata, sub$fpc, postStrata = sub$postStrata)
      e$sampled_se <- sqrt(diag(v))
    }
    refs[[paste(name, wts, sep = "_")]] <- e
  }
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "margins_refs.json"))
