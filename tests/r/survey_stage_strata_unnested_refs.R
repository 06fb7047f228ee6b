# survey::svydesign references for second-stage clusters that span several second-stage
# strata: apiclus2 with districts (dnum), then the school types (stype) within a district as
# the second-stage clusters, stratified by yr.rnd.  A district's schools of one type can be
# both year-round and not, so a cluster has rows in both strata.  R checks only the first
# stage's nesting; at later stages svyrecvar totals each stratum's rows by cluster, so
# such a cluster counts as one cluster in each of its strata (3 of the 70 district-type
# pairs have schools in both).
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite), after tests/r/survey_refs.R
# (which writes tests/data/survey/apiclus2.csv):
#   Rscript tests/r/survey_stage_strata_unnested_refs.R
# Writes tests/data/survey/stage_strata_unnested_refs.json:
#   design            the R call (`one`, a constant: no first-stage strata)
#   lonely_psu        options(survey.lonely.psu =)
#   total, total_var  svytotal(~api00 + meals, design) and its vcov (svyrecvar)
#   degf              degf(design)
#   svyolr            names, coef, var, df_residual of svyolr(mealcat ~ avg.ed + mobility) with a
#                     precise optim Hessian (reltol 1e-15, ndeps 1e-5)
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apiclus2 <- read_api("apiclus2")
apiclus2$one <- 1
call <- "svydesign(id = ~dnum + stype, strata = ~one + yr.rnd, fpc = ~fpc1 + fpc2, data = apiclus2)"
options(survey.lonely.psu = "adjust")
des <- eval(parse(text = call))
tot <- svytotal(~api00 + meals, des)
fit <- svyolr(mealcat ~ avg.ed + mobility, design = des, control = precise(5))
cf <- c(fit$coefficients, fit$zeta)
ref <- list(
  design = call, lonely_psu = "adjust", total = unname(coef(tot)), total_var = unname(vcov(tot)),
  degf = degf(des),
  svyolr = list(names = names(cf), coef = unname(cf), var = unname(vcov(fit)),
                df_residual = fit$df.residual))
writeLines(toJSON(ref, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "stage_strata_unnested_refs.json"))
