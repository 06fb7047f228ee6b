# survey::svyolr on linearly calibrated designs (R's calibrate, calfun = "linear"): the
# weights d_i (1 + x_i' lambda) reproduce the population totals of x, and the linearisation
# uses the influence functions' residuals from their d-weighted regression on x.
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite), after tests/r/survey_refs.R
# (which writes the api csv files read here):
#   Rscript tests/r/survey_calibrate_refs.R
# Writes tests/data/survey/calibrate_refs.json, one entry per case:
#   design, domain  the R calls (rows with a missing mealcat, avg.ed or mobility dropped
#                first, as in survey_poststratify_refs.R); rows: the `row` ids kept
#   calibration  the calibrate formula; population: its totals, named as R's model matrix
#                (from apipop: 6194 schools and the totals of enroll and api00)
#   weights, formula, names, coef, var (svyolr with a precise optim Hessian), degf,
#   total_var    vcov(svytotal(~api00 + meals, design))
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)  # apipop: the population totals
apistrat <- read_complete_api("apistrat"); apiclus1 <- read_complete_api("apiclus1")
apiclus2 <- read_complete_api("apiclus2")
N <- nrow(apipop)
enroll <- sum(apipop$enroll, na.rm = TRUE)
api00 <- sum(apipop$api00)
clus1 <- "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)"
cases <- list(
  clus1_enroll = list(design = clus1, cal = ~enroll, pop = c(`(Intercept)` = N, enroll = enroll)),
  clus1_enroll_domain = list(design = clus1, cal = ~enroll, domain = "yr.rnd == 'No'",
                             pop = c(`(Intercept)` = N, enroll = enroll)),
  clus1_enroll_only = list(design = clus1, cal = ~enroll - 1, pop = c(enroll = enroll)),
  strat_enroll_api00 = list(
    design = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)",
    cal = ~enroll + api00, pop = c(`(Intercept)` = N, enroll = enroll, api00 = api00)),
  clus2_api00 = list(design = "svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)",
                     cal = ~api00, pop = c(`(Intercept)` = N, api00 = api00))
)
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  des <- calibrate(eval(parse(text = case$design)), case$cal, case$pop, calfun = "linear")
  if (!is.null(case$domain)) des <- eval(parse(text = paste0("subset(des, ", case$domain, ")")))
  fit <- svyolr(f, des, control = precise(5))
  cf <- c(fit$coefficients, fit$zeta)
  refs[[name]] <- list(design = case$design, domain = case$domain, rows = des$variables$row,
                       calibration = deparse(case$cal), population = as.list(case$pop),
                       weights = unname(1 / des$prob), formula = deparse(f),
                       names = names(cf), coef = unname(cf), var = unname(vcov(fit)),
                       total_var = unname(vcov(svytotal(~api00 + meals, des))),
                       degf = degf(des))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "calibrate_refs.json"))
