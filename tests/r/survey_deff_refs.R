# Design effects of survey regression fits (issue 27): R's convention, the references of
# ordstats' SurveyResults.design_effects().
#
# Run from the repository root (R 4.2, survey 4.1-1, ordinal, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files read here):
#   Rscript tests/r/survey_deff_refs.R
# Writes tests/data/survey/deff_refs.json, one entry per design (the designs of refs.json):
#   binary   svyglm(high ~ ..., family = binomial, deff = TRUE) with high = mealcat above
#            (50,75] or not, missing where mealcat is (meals = 0: clus2 and strat):
#            names, coef, var (vcov) and deff = deff(fit), survey's own design effects of
#            regression coefficients.  svyglm.survey.design computes them as
#            diag(vcov(fit)) / diag(V0), V0 the covariance of the glm fitted with the
#            weights rescaled to mean one over ALL the design's rows (rows later dropped for
#            missing values, and a domain's zero-weight rows, count in that mean), times
#            that mean (one): no n/(n - 1) and no finite-population factor, unlike
#            svymean(deff = TRUE).
#   ordinal  svyolr has no deff; the same convention for the svyolr fits of refs.json:
#            deff = diag(vcov(svyolr, precise)) / diag(V0), V0 = vcov(ordinal::clm) with
#            the weights rescaled as above (clm's analytic Hessian), slopes first.
#   mean     svymean(~api00, deff = TRUE) and deff = "replace": survey's design effect of a
#            mean (SRS variance svyvar(x) / n, svyvar with n / (n - 1), times (N - n) / N
#            unless "replace"); ordstats estimates no means, this records the difference.
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
options(survey.lonely.psu = "fail")
read <- function(name) {
  d <- read_api(name)
  d$high <- as.numeric(unclass(d$mealcat) > 2)  # missing where mealcat is (meals = 0)
  d
}
apiclus1 <- read("apiclus1"); apiclus2 <- read("apiclus2"); apistrat <- read("apistrat")
designs <- api_designs
refs <- list()
for (name in names(designs)) {
  des <- eval(parse(text = designs[[name]]))
  rhs <- if (name == "strat") "avg.ed + mobility + enroll" else "avg.ed + mobility + stype"
  fb <- as.formula(paste("high ~", rhs))
  fo <- as.formula(paste("mealcat ~", rhs))
  # binomial with non-integer weights warns ("non-integer #successes"): the estimates are
  # the weighted ML ones all the same
  gb <- suppressWarnings(svyglm(fb, design = des, family = binomial, deff = TRUE,
                                control = glm.control(epsilon = 1e-14, maxit = 100)))
  binary <- list(formula = deparse(fb), names = names(coef(gb)), coef = unname(coef(gb)),
                 var = unname(vcov(gb)), deff = unname(deff(gb)))
  fit0 <- svyolr(fo, design = des)
  k <- length(fit0$coefficients) + length(fit0$zeta)
  fit <- svyolr(fo, design = des, control = precise(k))
  w_all <- weights(des)
  mf <- model.frame(des)
  used <- complete.cases(model.frame(fo, mf, na.action = na.pass)) & w_all > 0
  d <- mf[used, ]
  d$w0 <- w_all[used] / mean(w_all)
  naive <- ordinal::clm(fo, data = d, weights = w0,
                        control = ordinal::clm.control(gradTol = 1e-11))
  v0 <- vcov(naive)
  v0 <- v0[c(names(naive$beta), names(naive$alpha)), c(names(naive$beta), names(naive$alpha))]
  ordinal <- list(formula = deparse(fo), names = c(names(fit$coefficients), names(fit$zeta)),
                  var = unname(vcov(fit)), naive_var = unname(v0),
                  deff = unname(diag(vcov(fit)) / diag(v0)), mean_weight_all = mean(w_all),
                  mean_weight_used = mean(w_all[used]))
  m <- svymean(~api00, des, deff = TRUE)
  mr <- svymean(~api00, des, deff = "replace")
  refs[[name]] <- list(design = designs[[name]], binary = binary, ordinal = ordinal,
                       mean = list(variable = "api00", mean = unname(coef(m)),
                                   var = unname(drop(vcov(m))), deff = unname(deff(m)),
                                   deff_replace = unname(deff(mr))))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "deff_refs.json"))
