# survey::svyolr on post-stratified designs (R's postStratify): the weights are scaled to
# the population count of each post-stratum and the linearisation uses the influence
# functions' residuals from their (pre-post-stratification) weighted post-stratum means.
#
# Run from the repository root (R 4.2, survey 4.1-1, jsonlite), after tests/r/survey_refs.R
# (which writes the api csv files read here):
#   Rscript tests/r/survey_poststratify_refs.R
# Writes tests/data/survey/poststratify_refs.json, one entry per case:
#   design       the R calls building the design (rows with a missing mealcat, avg.ed or
#                mobility dropped first: svyolr's starting values fail on them after
#                postStratify); rows: the `row` ids kept
#   by, population  the post-strata columns (size: enroll cut at 400 and 800) and the population counts (column Freq)
#   weights      weights(design) after postStratify
#   formula, names, coef, var  svyolr with a precise optim Hessian (slopes, then cut-points)
#   plain_var    vcov of svyolr on the same weights as an ordinary design (no postStrata)
#   total_var    vcov(svytotal(~api00 + meals, design)) (svyrecvar with postStrata)
#   degf
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)  # apipop: the population counts
apistrat <- read_complete_api("apistrat"); apiclus1 <- read_complete_api("apiclus1")
apiclus2 <- read_complete_api("apiclus2")
# school size, a made-up second post-stratifier (apipop's yr.rnd is mostly missing)
size <- function(enroll) cut(enroll, c(0, 400, 800, Inf), labels = c("small", "mid", "large"))
apistrat$size <- size(apistrat$enroll)
pop_stype <- as.data.frame(table(stype = apipop$stype))
pop_stype_size <- as.data.frame(table(stype = apipop$stype, size = size(apipop$enroll)))
cases <- list(
  clus1_stype = list(data = "apiclus1", by = "stype", pop = pop_stype,
    design = "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)"),
  clus1_stype_domain = list(data = "apiclus1", by = "stype", pop = pop_stype,
    design = "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)",
    domain = "yr.rnd == 'No'"),
  strat_stype_size = list(data = "apistrat", by = c("stype", "size"), pop = pop_stype_size,
    design = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)"),
  clus2_stype = list(data = "apiclus2", by = "stype", pop = pop_stype,
    design = "svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)")
)
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  des <- eval(parse(text = case$design))
  plain_des <- des
  des <- postStratify(des, as.formula(paste("~", paste(case$by, collapse = "+"))), case$pop)
  w <- weights(des)
  d <- get(case$data)
  d$.w <- w
  plain <- update(plain_des, .w = w)
  plain$prob <- 1 / w
  if (!is.null(case$domain)) {
    des <- eval(parse(text = paste0("subset(des, ", case$domain, ")")))
    plain <- eval(parse(text = paste0("subset(plain, ", case$domain, ")")))
  }
  fit <- svyolr(f, des, control = precise(5))
  fit_plain <- svyolr(f, plain, control = precise(5))
  cf <- c(fit$coefficients, fit$zeta)
  refs[[name]] <- list(design = case$design, domain = case$domain, rows = d$row, by = case$by,
                       population = case$pop, weights = unname(w), formula = deparse(f),
                       names = names(cf), coef = unname(cf), var = unname(vcov(fit)),
                       plain_coef = unname(c(fit_plain$coefficients, fit_plain$zeta)),
                       plain_var = unname(vcov(fit_plain)),
                       total_var = unname(vcov(svytotal(~api00 + meals, des))),
                       degf = degf(des))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "poststratify_refs.json"))
