# svyolr on post-stratified and calibrated replicate designs (R's postStratify and
# calibrate(calfun = "linear") of a svyrep.design): the full-sample weights and each
# replicate's are adjusted to the population counts or totals, and the variance is the
# replicates' (svrVar).
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files):
#   Rscript tests/r/survey_replicate_calibration_refs.R
# Writes tests/data/survey/replicate_calibration_refs.json, one entry per design:
#   design       the as.svrepdesign call (on the rows with mealcat, avg.ed and mobility:
#                read_complete_api); rows: their `row` ids
#   type, scale, rscales, mse, repweights: the replicate design before post-stratifying
#   by, population  postStratify's variables and counts (apipop's), or (entries "_cal")
#                calibration, population: calibrate's formula and totals (apipop's)
#   weights, post_repweights  the full-sample and replicate weights after it
#   formula, degf, df_residual, coef and var_newton (converged_replicates), var (svyolr's)
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)
apiclus1 <- read_complete_api("apiclus1")
pop <- as.data.frame(table(stype = apipop$stype))
totals <- c(`(Intercept)` = nrow(apipop), enroll = sum(apipop$enroll, na.rm = TRUE))
dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
set.seed(20261128)
calls <- c(
  clus1_JK1 = "as.svrepdesign(dclus1, type = 'JK1', compress = FALSE)",
  clus1_bootstrap = "as.svrepdesign(dclus1, type = 'bootstrap', replicates = 40, compress = FALSE)"
)
matrix_of <- function(w) { w <- as.matrix(w); unname(matrix(as.numeric(w), nrow = nrow(w))) }
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(calls)) {
  rd <- eval(parse(text = calls[[name]]))
  before <- matrix_of(weights(rd, "analysis"))
  adjusted <- list(
    post = list(des = postStratify(rd, ~stype, pop), key = name,
                extra = list(by = "stype", population = pop)),
    cal = list(des = calibrate(rd, ~enroll, totals, calfun = "linear", compress = FALSE),
               key = paste0(name, "_cal"),
               extra = list(calibration = "~enroll", population = as.list(totals))))
  for (a in adjusted) {
    des <- a$des
    fit <- svyolr(f, des)
    conv <- converged_replicates(f, des)
    refs[[a$key]] <- c(list(
      design = calls[[name]], rows = apiclus1$row, type = des$type, scale = des$scale,
      rscales = des$rscales, mse = isTRUE(des$mse), repweights = before,
      weights = unname(weights(des, "sampling")),
      post_repweights = matrix_of(weights(des, "analysis")), formula = deparse(f),
      degf = degf(des), df_residual = fit$df.residual, coef = conv$coef,
      var_newton = conv$var, var = unname(vcov(fit))), a$extra)
  }
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "replicate_calibration_refs.json"))
