# survey::svyrecvar references for domains with a single PSU in a stratum (issue 27):
# R's options(survey.adjust.domain.lonely = TRUE) under each survey.lonely.psu choice.
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite), after tests/r/survey_refs.R
# (which writes the api csv files read here):
#   Rscript tests/r/survey_domain_refs.R
# Writes tests/data/survey/domain_refs.json, one entry per (design, domain, lonely choice,
# adjust.domain.lonely):
#   design, domain  the R calls; rows: the data's `row` ids in the domain
#   lonely_psu, adjust_domain_lonely  the two options
#   total_var       vcov(svytotal(~api00 + meals, subset(design, domain))): svyrecvar of
#                   the weighted values of the domain's rows (the meat of a linearisation)
#   warnings        R's warnings of that call
#   svyolr          (apiclus1 cases) names, coef and vcov of svyolr(mealcat ~ avg.ed +
#                   mobility + stype) on the domain with a precise optim Hessian
# Designs: apistrat (strata stype, each school its PSU, fpc) with a domain holding one high
# school; apiclus1 with made-up strata (districts below 400 / the rest) and a domain holding
# one district of the first; apiclus2 (districts then schools, fpc at both stages) with a
# domain holding one school of a district that sampled 5 of its schools (lonely at stage 2).
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
apistrat <- read_api("apistrat"); apiclus1 <- read_api("apiclus1"); apiclus2 <- read_api("apiclus2")
apiclus1$half <- ifelse(apiclus1$dnum < 400, "low", "high")
one_high <- min(apistrat$row[apistrat$stype == "H"])
low <- sort(unique(apiclus1$dnum[apiclus1$half == "low"]))
five <- as.integer(names(which(table(apiclus2$dnum) == 5))[1])
one_school <- min(apiclus2$snum[apiclus2$dnum == five])
cases <- list(
  strat = list(
    design = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)",
    domain = sprintf("apistrat$stype != 'H' | apistrat$row == %d", one_high), data = "apistrat"),
  clus1 = list(
    design = "svydesign(id = ~dnum, strata = ~half, weights = ~pw, data = apiclus1)",
    domain = sprintf("apiclus1$half == 'high' | apiclus1$dnum == %d", low[1]), data = "apiclus1"),
  clus2 = list(
    design = "svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)",
    domain = sprintf("apiclus2$dnum != %d | apiclus2$snum == %d", five, one_school),
    data = "apiclus2")
)
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  for (adjust in c(FALSE, TRUE)) for (lonely in c("remove", "adjust", "certainty", "average")) {
    options(survey.lonely.psu = lonely, survey.adjust.domain.lonely = adjust)
    des <- eval(parse(text = case$design))
    inside <- eval(parse(text = case$domain))
    seen <- character(0)
    keep <- function(w) { seen <<- c(seen, conditionMessage(w)); invokeRestart("muffleWarning") }
    v <- withCallingHandlers({
      sub <- subset(des, inside)
      vcov(svytotal(~api00 + meals, sub))
    }, warning = keep)
    e <- list(design = case$design, domain = case$domain, data = case$data,
              rows = get(case$data)$row[inside], lonely_psu = lonely,
              adjust_domain_lonely = adjust, total_var = unname(v), warnings = I(seen))
    if (name == "clus1") {
      fit <- suppressWarnings(svyolr(mealcat ~ avg.ed + mobility + stype, design = sub,
        control = precise(7)))
      cf <- c(fit$coefficients, fit$zeta)
      e$svyolr <- list(names = names(cf), coef = unname(cf), var = unname(vcov(fit)))
    }
    refs[[sprintf("%s_%s_%s", name, lonely, if (adjust) "adjusted" else "plain")]] <- e
  }
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "domain_refs.json"))
