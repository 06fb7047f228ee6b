# Profiles, slices and intervals of nominal and scale effects, and flexible links with
# nominal/scale effects, against R ordinal.
# - confint(fit) (type "profile") covers beta and zeta only: R's profile.clm has which.beta and
#   which.zeta, no argument for the thresholds or nominal effects.
# - slice(fit) covers every parameter (nominal effects included).
# - flexible links: clm (nlminb without a gradient, stops early) and a refined optimum:
#   optimize() over lambda of clm2's log-likelihood with lambda fixed; predictions with newdata.
# Run from the repository root: Rscript tests/r/profile_nominal_scale.R
# Writes tests/data/reference/profile_nominal_scale.json
# (tests/results/test_profile_nominal_scale.py).
suppressMessages({library(ordinal); library(MASS); library(jsonlite)})
source("tests/r/json_output.R")
data(wine, package = "ordinal"); data(soup, package = "ordinal")
housing <- MASS::housing

slices <- function(fit, grid) {
  s <- slice(fit, grid = grid)
  # by position: clm names a scale effect as its location twin (wine's two "tempwarm")
  lapply(seq_along(s), function(i) list(parameter = names(s)[i], value = s[[i]][[1]],
                                        logLik = s[[i]]$logLik, quad = s[[i]]$quad))
}
profile_cases <- list(
  wine_nominal_scale = list(
    call = 'clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, data = wine)',
    fit = clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, data = wine)),
  housing_nominal_probit = list(
    call = 'clm(Sat ~ Infl + Type, nominal = ~ Cont, scale = ~ Cont, weights = Freq, data = housing, link = "probit")',
    fit = clm(Sat ~ Infl + Type, nominal = ~ Cont, scale = ~ Cont, weights = Freq, data = housing,
              link = "probit"))
)
profiles <- lapply(profile_cases, function(case) {
  fit <- case$fit
  list(r_call = case$call, names = names(coef(fit)), coef = unname(coef(fit)),
       logLik = as.numeric(logLik(fit)), confint = rows(confint(fit)),
       confint_names = rownames(confint(fit)), slices = slices(fit, grid = 5))
})

# clm2's log-likelihood at a fixed lambda, maximised over lambda by optimize()
refine <- function(f, data, weights = NULL, link, interval) {
  ll <- function(l) {
    args <- c(f, list(data = data, link = link, lambda = l))
    if (!is.null(weights)) args$weights <- weights
    -as.numeric(logLik(do.call(clm2, args)))
  }
  opt <- optimize(ll, interval, tol = 1e-10)
  list(lambda = opt$minimum, loglik = -opt$objective)
}
flex_cases <- list(
  wine_log_gamma_nominal = list(
    call = 'clm(rating ~ temp, nominal = ~ contact, data = wine, link = "log-gamma")',
    f = list(location = rating ~ temp, nominal = ~ contact), data = wine, w = NULL,
    link = "log-gamma", interval = c(-3, 3), new = data.frame(temp = c("cold", "warm", "warm"),
                                                            contact = c("yes", "no", "yes"))),
  wine_aranda_ordaz_scale = list(
    call = 'clm(rating ~ contact, scale = ~ temp, data = wine, link = "Aranda-Ordaz")',
    f = list(location = rating ~ contact, scale = ~ temp), data = wine, w = NULL,
    link = "Aranda-Ordaz", interval = c(1e-3, 20),
    new = data.frame(temp = c("cold", "warm", "warm"), contact = c("yes", "no", "yes"))),
  housing_log_gamma_nominal_scale = list(
    call = 'clm(Sat ~ Infl + Type, nominal = ~ Cont, scale = ~ Cont, weights = Freq, data = housing, link = "log-gamma")',
    f = list(location = Sat ~ Infl + Type, nominal = ~ Cont, scale = ~ Cont), data = housing,
    w = housing$Freq, link = "log-gamma", interval = c(-3, 3),
    new = data.frame(Infl = c("Low", "High"), Type = c("Tower", "Terrace"), Cont = c("High", "Low"))),
  soup_aranda_ordaz_nominal = list(
    call = 'clm(SURENESS ~ PROD, nominal = ~ GENDER, data = soup, link = "Aranda-Ordaz")',
    f = list(location = SURENESS ~ PROD, nominal = ~ GENDER), data = soup, w = NULL,
    link = "Aranda-Ordaz", interval = c(1e-3, 20),
    new = data.frame(PROD = c("Ref", "Test"), GENDER = c("Female", "Male")))
)
flexible <- lapply(flex_cases, function(case) {
  fit <- tryCatch(eval(parse(text = case$call)), error = function(e) conditionMessage(e))
  if (is.character(fit)) return(list(r_call = case$call, r_error = fit))
  new <- case$new
  for (v in names(new)) new[[v]] <- factor(new[[v]], levels = levels(case$data[[v]]))
  list(r_call = case$call, names = names(coef(fit)), coef = unname(coef(fit)),
       se = unname(sqrt(diag(vcov(fit)))), logLik = as.numeric(logLik(fit)),
       convergence_code = fit$convergence$code, max_abs_grad = max(abs(fit$gradient)),
       refined = refine(case$f, case$data, case$w, case$link, case$interval),
       newdata = as.list(lapply(case$new, as.character)),
       pred_prob = rows(predict(fit, newdata = new, type = "prob")$fit))
})
write_json(list(profiles = profiles, flexible = flexible),
           "tests/data/reference/profile_nominal_scale.json")
