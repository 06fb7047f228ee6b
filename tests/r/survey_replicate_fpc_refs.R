# svyolr on replicate designs with a finite-population correction per replicate
# (svrepdesign's fpc= and fpctype=: rscales are multiplied by 1 - fpc for "fraction", by
# fpc for "correction"; R refuses fpc for BRR, Fay, JK2, ACS, successive-difference and
# bootstrap). The jackknife of apistrat (JKn, one stratum per replicate) with each
# replicate's stratum sampling fraction n_h / N_h.
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files):
#   Rscript tests/r/survey_replicate_fpc_refs.R
# Writes tests/data/survey/replicate_fpc_refs.json, one entry per fpctype:
#   rows, dropped (the row, from 1, each replicate drops: the replicate weights are pw
#   times n_h / (n_h - 1) in its stratum, pw elsewhere, 0 for that row), type, rscales_given (JKn's (n_h - 1)/n_h), fpc, fpctype, the
#   design's rscales, formula, coef and var (converged_replicates; svyolr's own refits
#   stop early), and as_svrepdesign_var: the same from as.svrepdesign of the design with
#   its fpc (which R folds in the same way)
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apistrat <- read_complete_api("apistrat")
ds <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
plain <- as.svrepdesign(svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat),
                        type = "JKn", compress = FALSE)
repw <- unname(matrix(as.numeric(as.matrix(weights(plain, "analysis"))), nrow(apistrat)))
# each replicate drops one school: its stratum is that school's
dropped <- apply(repw, 2, function(w) which(w == 0))
fraction <- (table(apistrat$stype) / tapply(apistrat$fpc, apistrat$stype, unique))[
  as.character(apistrat$stype[dropped])]
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (fpctype in c("fraction", "correction")) {
  fpc <- as.numeric(if (fpctype == "fraction") fraction else 1 - fraction)
  des <- svrepdesign(data = apistrat, repweights = repw, weights = ~pw, type = "JKn",
                     rscales = plain$rscales, fpc = fpc, fpctype = fpctype)
  conv <- converged_replicates(f, des)
  refs[[fpctype]] <- list(rows = apistrat$row, dropped = unname(dropped), type = "JKn",
                          rscales_given = plain$rscales, fpc = fpc, fpctype = fpctype,
                          rscales = des$rscales, formula = deparse(f), coef = conv$coef,
                          var = conv$var,
                          as_svrepdesign_var = converged_replicates(
                            f, as.svrepdesign(ds, type = "JKn", compress = FALSE))$var)
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "replicate_fpc_refs.json"))
