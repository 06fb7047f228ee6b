# svrepdesign's other replicate types: "successive-difference" and "ACS" (scale 4/R, the
# American Community Survey's), "JK2" (scale 1) and "other" (scale and rscales given by
# hand, or 1 with a warning), and svyolr on them.
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files):
#   Rscript tests/r/survey_replicate_types_refs.R
# Writes tests/data/survey/replicate_types_refs.json, one entry per design:
#   design       the svrepdesign call; repweights: as.svrepdesign(dclus1, type = "JK1")'s
#                combined weights (any replicate weights serve: the types differ in scale)
#   scale, rscales, warnings  what svrepdesign set, and its warnings
#   formula, degf, df_residual, coef (slopes, then cut-points)
#   var_newton   svrVar of replicate estimates converged by polr (reltol 1e-15, from the
#                full-sample estimates), as svyolr computes it with its early-stopping refits
#   var          vcov(svyolr(...)) itself
suppressMessages({library(survey); library(MASS); library(jsonlite)})
source("tests/r/survey_common.R")
apiclus1 <- read_api("apiclus1")
jk <- as.svrepdesign(svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc),
                     type = "JK1", compress = FALSE)
repw <- { w <- as.matrix(weights(jk, "analysis")); matrix(as.numeric(w), nrow = nrow(w)) }
rscales <- seq(0.5, 1.2, length.out = ncol(repw))
calls <- list(
  successive_difference = "svrepdesign(data = apiclus1, repweights = repw, weights = ~pw, type = 'successive-difference')",
  ACS = "svrepdesign(data = apiclus1, repweights = repw, weights = ~pw, type = 'ACS', scale = 2)",
  JK2 = "svrepdesign(data = apiclus1, repweights = repw, weights = ~pw, type = 'JK2')",
  other = "svrepdesign(data = apiclus1, repweights = repw, weights = ~pw, type = 'other', scale = 0.9, rscales = rscales)",
  other_mse = "svrepdesign(data = apiclus1, repweights = repw, weights = ~pw, type = 'other', scale = 0.9, rscales = rscales, mse = TRUE)",
  other_default = "svrepdesign(data = apiclus1, repweights = repw, weights = ~pw, type = 'other')"
)
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(calls)) {
  warns <- character(0)
  des <- withCallingHandlers(eval(parse(text = calls[[name]])), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning")
  })
  fit <- svyolr(f, des)
  conv <- converged_replicates(f, des)
  refs[[name]] <- list(
    design = calls[[name]], type = des$type, repweights = unname(repw), scale = des$scale,
    rscales = des$rscales, mse = isTRUE(des$mse), warnings = warns, formula = deparse(f),
    degf = degf(des), df_residual = fit$df.residual, coef = conv$coef,
    var_newton = conv$var, var = unname(vcov(fit)))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "replicate_types_refs.json"))
