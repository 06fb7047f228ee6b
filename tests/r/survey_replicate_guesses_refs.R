# svrepdesign's guesses for replicate weights given as multipliers (combined.weights = FALSE)
# without scale= (JK1) or rscales= (JKn): R takes scale = 1 / max(first replicate's
# multipliers) and rscales = 1 / (each replicate's largest multiplier), i.e. (n - 1)/n from
# the weights, not from the number of replicates.
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after tests/r/survey_refs.R
# (which writes the api csv files):
#   Rscript tests/r/survey_replicate_guesses_refs.R
# Writes tests/data/survey/replicate_guesses_refs.json, one entry per design:
#   design       the svrepdesign call
#   multipliers  the replicate multipliers (rows of the csv file x replicates)
#   scale, rscales, warning  what svrepdesign guessed, and its warning
#   formula, degf, df_residual, coef (slopes, then cut-points)
#   var_newton   svrVar of replicate estimates converged by polr (reltol 1e-15, from the
#                full-sample estimates), as svyolr computes it with its default (early-stopping)
#                polr refits
suppressMessages({library(survey); library(MASS); library(jsonlite)})
source("tests/r/survey_common.R")
apistrat <- read_api("apistrat")
apiclus1 <- read_api("apiclus1")
# JK1 on apiclus1: replicates that drop each of the first 10 of the 15 districts (so the
# number of replicates, 10, is not the number of PSUs, 15)
psus <- sort(unique(apiclus1$dnum))
jk1 <- sapply(psus[1:10], function(p) ifelse(apiclus1$dnum == p, 0, 15 / 14))
# JKn on apistrat: in each school type, four groups of schools (row number mod 4); each
# replicate drops one group of one type and multiplies the type's other groups by 4/3
group <- seq_len(nrow(apistrat)) %% 4
jkn <- do.call(cbind, lapply(c("E", "H", "M"), function(h) sapply(0:3, function(g)
  ifelse(apistrat$stype != h, 1, ifelse(group == g, 0, 4 / 3)))))
cases <- list(
  clus1_JK1 = list(data = "apiclus1", type = "JK1", m = jk1,
                   call = "svrepdesign(data = apiclus1, repweights = jk1, weights = ~pw, type = 'JK1', combined.weights = FALSE)"),
  strat_JKn = list(data = "apistrat", type = "JKn", m = jkn,
                   call = "svrepdesign(data = apistrat, repweights = jkn, weights = ~pw, type = 'JKn', combined.weights = FALSE)")
)
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  warning_text <- NULL
  des <- withCallingHandlers(eval(parse(text = case$call)), warning = function(w) {
    warning_text <<- conditionMessage(w); invokeRestart("muffleWarning")
  })
  fit <- svyolr(f, des)
  conv <- converged_replicates(f, des)
  refs[[name]] <- list(
    design = case$call, multipliers = unname(case$m), scale = des$scale,
    rscales = des$rscales, warning = warning_text, formula = deparse(f),
    degf = degf(des), df_residual = fit$df.residual, coef = conv$coef,
    var_newton = conv$var)
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "replicate_guesses_refs.json"))
