# svyolr on designs with trimmed weights: R's trimWeights(design, upper, lower, strict) on
# apistrat (sampling weights of three sizes) and on apiclus1 calibrated to ~stype + enroll
# (the calibration keeps its own weights in the linearisation; the trimmed weights are the
# sampling weights), once as it is and once strict.
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files):
#   Rscript tests/r/survey_trim_refs.R
# Writes tests/data/survey/trim_refs.json, one entry per case:
#   design, rows (read_complete_api's `row` ids), calibration (null or calibrate's formula
#   with population: totals named as R's model matrix), upper, lower, strict; weights (the
#   trimmed sampling weights), formula, coef, var (svyolr, precise optim Hessian), degf,
#   total_var vcov(svytotal(~api00 + meals))
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)
apistrat <- read_complete_api("apistrat"); apiclus1 <- read_complete_api("apiclus1")
totals <- c(`(Intercept)` = nrow(apipop), stypeH = sum(apipop$stype == "H"),
            stypeM = sum(apipop$stype == "M"), enroll = sum(apipop$enroll, na.rm = TRUE))
clus1 <- "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)"
strat <- "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)"
cases <- list(
  strat_trim = list(design = strat, upper = 40, lower = 18, strict = FALSE),
  clus1_cal_trim = list(design = clus1, calibrate = TRUE, upper = 55, lower = 36,
                        strict = FALSE),
  clus1_cal_trim_strict = list(design = clus1, calibrate = TRUE, upper = 45, lower = 29,
                               strict = TRUE)
)
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  des <- eval(parse(text = case$design))
  if (isTRUE(case$calibrate)) {
    des <- calibrate(des, ~stype + enroll, totals, calfun = "linear")
    case$calibration <- "~stype + enroll"
    case$population <- as.list(totals)
  }
  des <- trimWeights(des, upper = case$upper, lower = case$lower, strict = case$strict)
  fit <- svyolr(f, des, control = precise(5))
  refs[[name]] <- c(case, list(
    rows = des$variables$row, formula = deparse(f), degf = degf(des),
    weights = unname(weights(des, "sampling")),
    coef = unname(c(fit$coefficients, fit$zeta)), var = unname(vcov(fit)),
    total_var = unname(vcov(svytotal(~api00 + meals, des)))))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "trim_refs.json"))
