# R's regTermTest of several terms at once (one Wald F on all their coefficients), for
# ordstats' reg_term_test(..., joint=True).
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite):
#   Rscript tests/r/survey_joint_refs.R
# Writes tests/data/survey/joint_refs.json: per design, svyolr's precise fit (optim reltol
# 1e-15, ndeps 1e-5, as tests/r/survey_refs.R) and regTermTest(fit, ~mobility + stype) with
# the default ddf (fit$df.residual) and with df = Inf (chi-squared).
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)
cats <- function(d) { d$mealcat <- cut(d$meals, c(0, 25, 50, 75, 100)); d }
apiclus1 <- cats(apiclus1); apiclus2 <- cats(apiclus2)
designs <- api_designs[c("clus1", "clus2")]
f <- mealcat ~ avg.ed + mobility + stype
refs <- list()
for (name in names(designs)) {
  des <- eval(parse(text = designs[[name]]))
  fit <- svyolr(f, design = des, control = precise(7))
  wald <- regTermTest(fit, ~mobility + stype)
  chisq <- regTermTest(fit, ~mobility + stype, df = Inf)
  refs[[name]] <- list(design = designs[[name]], terms = c("mobility", "stype"),
                       Ftest = drop(wald$Ftest), df = wald$df, ddf = wald$ddf, p = drop(wald$p),
                       chisq = drop(chisq$chisq), p_chisq = drop(chisq$p))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE), "tests/data/survey/joint_refs.json")
