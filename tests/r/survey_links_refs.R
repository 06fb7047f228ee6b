# svyolr's other methods (links) on apiclus1, for ordstats' link= with design=.
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite):
#   Rscript tests/r/survey_links_refs.R
# Writes tests/data/survey/links_refs.json: per svyolr method, the precise fit (optim reltol
# 1e-15, ndeps 1e-5, as tests/r/survey_refs.R) of mealcat ~ avg.ed + mobility + stype on
# svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc): coefficients (slopes,
# then cut-points), standard errors and regTermTest(fit, ~stype).  svyolr's "cloglog" is
# pgumbel, exp(-exp(-x)): ordstats' (and ordinal's) "loglog".  method = "cauchit" is left
# out: svyolr stops where the gradient is far from zero (about 5 in the first cut-point).
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)
apiclus1$mealcat <- cut(apiclus1$meals, c(0, 25, 50, 75, 100))
des <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
f <- mealcat ~ avg.ed + mobility + stype
refs <- list()
for (method in c("probit", "cloglog")) {
  fit <- svyolr(f, design = des, method = method,
                control = precise(7))
  tt <- regTermTest(fit, ~stype)
  refs[[method]] <- list(coef = unname(c(fit$coefficients, fit$zeta)),
                         names = names(c(fit$coefficients, fit$zeta)),
                         se = unname(sqrt(diag(vcov(fit)))), df_residual = fit$df.residual,
                         Ftest = drop(tt$Ftest), p = drop(tt$p))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE), "tests/data/survey/links_refs.json")
