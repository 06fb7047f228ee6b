# svyolr's method = "cloglog" on a replicate-weight design.  svyolr on a svydesign uses its own
# pgumbel, exp(-exp(-x)), for "cloglog" (ordstats' "loglog": survey_links_refs.R), but on a
# svyrep.design it refits with MASS::polr, whose "cloglog" is the complementary log-log,
# 1 - exp(-exp(x)): ordstats' "cloglog".
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after tests/r/survey_refs.R
# (which writes the api csv files):
#   Rscript tests/r/survey_replicate_links_refs.R
# Writes tests/data/survey/replicate_links_refs.json:
#   design      the R call: the JK1 replicates of apiclus1's cluster design
#   repweights, scale, rscales  of that design (weights(design, "analysis"), rows of the csv)
#   formula, df_residual
#   svyolr_coef svyolr(formula, design, method = "cloglog")'s slopes, then cut-points
#   coef        the same full-sample fit converged (polr, reltol 1e-15)
#   var_newton  svrVar of replicate estimates converged by polr (reltol 1e-15), as svyolr
#               computes it from its default (early-stopping) polr refits
suppressMessages({library(survey); library(MASS); library(jsonlite)})
source("tests/r/survey_common.R")
apiclus1 <- read_api("apiclus1")
call <- "as.svrepdesign(svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc), type = 'JK1', compress = FALSE)"
des <- eval(parse(text = call))
f <- mealcat ~ avg.ed + mobility
fit <- suppressWarnings(svyolr(f, des, method = "cloglog"))
conv <- suppressWarnings(converged_replicates(f, des, method = "cloglog"))
ref <- list(
  design = call, repweights = unname(matrix(as.numeric(as.matrix(weights(des, "analysis"))), nrow(apiclus1))), scale = des$scale,
  rscales = des$rscales, formula = deparse(f), df_residual = fit$df.residual,
  svyolr_coef = unname(c(fit$coefficients, fit$zeta)), coef = conv$coef,
  var_newton = conv$var)
writeLines(toJSON(ref, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "replicate_links_refs.json"))
