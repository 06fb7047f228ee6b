# svyolr with method = "probit", "cloglog" and "cauchit" on the two-stage apiclus2 design
# with an fpc at both stages (survey_links_refs.R has the one-stage apiclus1 design).
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite), after tests/r/survey_refs.R:
#   Rscript tests/r/survey_multistage_links_refs.R
# Writes tests/data/survey/multistage_links_refs.json, one entry per method: names, coef
# (slopes, then cut-points), var (precise optim Hessian), df_residual, Ftest and p of
# regTermTest(~stype), and nll: the weighted negative log-likelihood at coef.
# svyolr's default starting values fail on this design for these methods ("attempt to
# find suitable starting values failed"): the fits start at the logit fit over 1.7.
# cauchit: svyolr's BFGS stops short of the optimum (its nll is above ordstats'); the
# entry records it, and the test checks ordstats' optimum is lower.
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apiclus2 <- read_api("apiclus2")
des <- svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)
f <- mealcat ~ avg.ed + mobility + stype
logit <- svyolr(f, des, control = precise(7))
start <- c(logit$coefficients, logit$zeta) / 1.7
dist <- list(probit = pnorm, cloglog = function(q) exp(-exp(-q)), cauchit = pcauchy)
mf <- model.frame(des)
ok <- complete.cases(mf[, c("mealcat", "avg.ed", "mobility")])
x <- model.matrix(~avg.ed + mobility + stype, mf[ok, ])[, -1]
y <- as.integer(mf$mealcat[ok])
w <- weights(des)[ok]
refs <- list()
for (method in names(dist)) {
  fit <- svyolr(f, des, method = method, start = start, control = precise(7))
  cf <- c(fit$coefficients, fit$zeta)
  z <- c(-Inf, fit$zeta, Inf)
  eta <- drop(x %*% fit$coefficients)
  nll <- -sum(w * log(dist[[method]](z[y + 1] - eta) - dist[[method]](z[y] - eta)))
  tt <- regTermTest(fit, ~stype)
  refs[[method]] <- list(names = names(cf), coef = unname(cf), var = unname(vcov(fit)),
                         df_residual = fit$df.residual, Ftest = drop(tt$Ftest),
                         p = drop(tt$p), nll = nll)
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE),
           file.path(survey_out, "multistage_links_refs.json"))
