# Degrees of freedom of replicate designs restricted to a domain (R's subset of a
# svyrep.design recomputes degf on the rows it keeps; svyolr's df.residual and
# regTermTest's denominator df follow it).
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite):
#   Rscript tests/r/survey_replicate_domain_refs.R
# Writes tests/data/survey/replicate_domain_refs.json, one entry per design:
#   design       the R call of the full replicate design (on the vendored api csv files)
#   domain       the subset condition
#   degf_full    degf(full design)
#   degf         degf(subset(design, domain))
#   df_residual  svyolr(formula, subset(design, domain))$df.residual
#   formula      the svyolr formula
# The full designs are those of refs.json (survey_refs.R), whose repweights a test reads.
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apistrat <- read_api("apistrat")
apiclus1 <- read_api("apiclus1")
dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
cases <- list(
  strat_JKn = list(call = "as.svrepdesign(dstrat, type = 'JKn', compress = FALSE)",
                   domain = "stype != 'E'", f = mealcat ~ avg.ed + mobility),
  clus1_JK1 = list(call = "as.svrepdesign(dclus1, type = 'JK1', compress = FALSE)",
                   domain = "yr.rnd == 'No'", f = mealcat ~ avg.ed + mobility),
  clus1_JK1_fewer_psus = list(call = "as.svrepdesign(dclus1, type = 'JK1', compress = FALSE)",
                              domain = "dnum > 400", f = mealcat ~ avg.ed + mobility)
)
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  rd <- suppressWarnings(eval(parse(text = case$call)))
  dom <- eval(parse(text = paste0("subset(rd, ", case$domain, ")")))
  fit <- svyolr(case$f, design = dom)
  refs[[name]] <- list(design = case$call, domain = case$domain, formula = deparse(case$f),
                       degf_full = degf(rd), degf = degf(dom), df_residual = fit$df.residual)
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE),
           file.path(survey_out, "replicate_domain_refs.json"))
