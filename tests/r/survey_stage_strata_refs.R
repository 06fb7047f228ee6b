# survey::svydesign references for strata below the first stage (issue 27):
# svydesign(ids = ~dnum + snum, strata = ~s1 + s2, fpc = ~fpc1 + fpc2), where R stratifies the
# second stage by s2 within each first-stage cluster.
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite), after tests/r/survey_refs.R
# (which writes tests/data/survey/apiclus2.csv):
#   Rscript tests/r/survey_stage_strata_refs.R
# Writes tests/data/survey/stage_strata_refs.json, one entry per design and lonely-PSU choice:
#   design          the R call (data: apiclus2 with `half`, districts below 400 or not, and
#                   `one`, a constant: no first-stage strata)
#   lonely_psu      options(survey.lonely.psu =)
#   weights         weights(design) (from the fpc: product over the stages of N / n)
#   total, total_var  svytotal(~api00 + meals, design) and its vcov (svyrecvar)
#   degf            degf(design)
#   svyolr          names, coef, vcov of svyolr(mealcat ~ avg.ed + mobility + stype) with a
#                   precise optim Hessian (reltol 1e-15, ndeps 1e-5)
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apiclus2 <- read_api("apiclus2")
apiclus2$half <- ifelse(apiclus2$dnum < 400, "low", "high")
apiclus2$one <- 1
designs <- c(
  both = "svydesign(id = ~dnum + snum, strata = ~half + stype, fpc = ~fpc1 + fpc2, data = apiclus2)",
  second = "svydesign(id = ~dnum + snum, strata = ~one + stype, fpc = ~fpc1 + fpc2, data = apiclus2)"
)
refs <- list()
for (name in names(designs)) for (lonely in c("remove", "adjust", "certainty", "average")) {
  options(survey.lonely.psu = lonely)
  des <- eval(parse(text = designs[[name]]))
  tot <- svytotal(~api00 + meals, des)
  fit <- svyolr(mealcat ~ avg.ed + mobility + stype, design = des,
                control = precise(7))
  cf <- c(fit$coefficients, fit$zeta)
  refs[[paste(name, lonely, sep = "_")]] <- list(
    design = designs[[name]], lonely_psu = lonely, weights = unname(weights(des)),
    total = unname(coef(tot)), total_var = unname(vcov(tot)), degf = degf(des),
    svyolr = list(names = names(cf), coef = unname(cf), var = unname(vcov(fit)),
                  df_residual = fit$df.residual))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "stage_strata_refs.json"))
