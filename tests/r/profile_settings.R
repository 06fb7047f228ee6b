# Profile likelihood against R's profile.clm / confint.clm beyond level 0.95: levels 0.9 and
# 0.99, scale (zeta) parameters, weights, an offset, structured thresholds, and the
# profile's signed root at R's own grid values (profile(fit)$<par>: lroot, par.vals).
# confint.clm profiles with alpha = (1 - level) / 4 and interpolates a spline through the
# steps, so each case also holds the exact ends: uniroot (tol 1e-12) of the signed root,
# the parameter fixed through an offset (location or scale formula) and the model refitted
# on the remaining model-matrix columns.
# Run from the repository root: Rscript tests/r/profile_settings.R
# Writes tests/data/reference/profile_settings.json (tests/results/test_profile_settings.py).
suppressMessages({library(ordinal); library(MASS); library(jsonlite)})
source("tests/r/json_output.R")
data(wine, package = "ordinal"); data(soup, package = "ordinal")
housing <- MASS::housing
tight <- clm.control(gradTol = 1e-10, maxIter = 500)

# the model refitted with parameter `name` (location "x" or scale "sca.x") held at `value`
refit_at <- function(fit, data, name, value, threshold, weights) {
  X <- model.matrix(fit)$X; S <- model.matrix(fit)$S
  is_scale <- startsWith(name, "sca.")
  M <- if (is_scale) S else X
  col <- if (is_scale) sub("^sca\\.", "", name) else name
  d <- data.frame(y = fit$y)
  xo <- setdiff(colnames(X), c("(Intercept)", if (!is_scale) col))
  so <- if (is.null(S)) character() else setdiff(colnames(S), c("(Intercept)", if (is_scale) col))
  for (i in seq_along(xo)) d[[paste0("x", i)]] <- X[, xo[i]]
  for (i in seq_along(so)) d[[paste0("s", i)]] <- S[, so[i]]
  d$lo <- fit$model[["(offset)"]] %||% model.offset(model.frame(fit)) %||% 0
  d$held <- value * M[, col]
  d$w <- if (is.null(weights)) 1 else weights
  num <- function(prefix, n) if (n) paste0(prefix, seq_len(n)) else character()
  loc <- paste(c("y ~ 1", num("x", length(xo)),
                 if (!is_scale) "offset(lo + held)" else "offset(lo)"), collapse = " + ")
  sca <- paste(c("~ 1", num("s", length(so)), if (is_scale) "offset(held)"), collapse = " + ")
  clm(as.formula(loc), scale = as.formula(sca), data = d, weights = w,
      threshold = threshold, link = fit$link, control = tight)
}
`%||%` <- function(a, b) if (is.null(a) || length(a) == 0) b else a

exact_ends <- function(fit, data, name, level, threshold, weights, estimate, se) {
  z <- qnorm(1 - (1 - level) / 2)
  r <- function(v) sign(v - estimate) *
    sqrt(max(2 * (fit$logLik - refit_at(fit, data, name, v, threshold, weights)$logLik), 0))
  c(uniroot(function(v) r(v) + z, estimate - se * c(6, 0.2), tol = 1e-12)$root,
    uniroot(function(v) r(v) - z, estimate + se * c(0.2, 6), tol = 1e-12)$root)
}

case <- function(r_call, data, params, threshold = "flexible", weights = NULL) {
  fit <- eval(parse(text = r_call))
  cf <- coef(summary(fit))
  rownames(cf) <- names(coef(fit))
  if (!is.null(fit$zeta)) rownames(cf)[length(coef(fit)) - length(fit$zeta) + seq_along(fit$zeta)] <-
    paste0("sca.", names(fit$zeta))
  pr <- profile(fit, alpha = 0.001)
  out <- list(r_call = r_call, logLik = fit$logLik, params = list())
  for (p in params) {
    est <- cf[p, 1]; se <- cf[p, 2]
    grid <- pr[[p]]
    out$params[[p]] <- list(
      estimate = est,
      confint90 = unname(confint(fit, level = 0.9)[p, ]),
      confint99 = unname(confint(fit, level = 0.99)[p, ]),
      exact90 = exact_ends(fit, data, p, 0.9, threshold, weights, est, se),
      exact99 = exact_ends(fit, data, p, 0.99, threshold, weights, est, se),
      profile_value = unname(grid$par.vals[, p]),
      profile_lroot = unname(grid$lroot))
  }
  out
}

wine$off <- wine$response / 50
cases <- list(
  wine_logit = case("clm(rating ~ temp + contact, data = wine)", wine, c("tempwarm", "contactyes")),
  wine_scale = case("clm(rating ~ temp + contact, scale = ~ temp, data = wine)", wine,
                    c("tempwarm", "sca.tempwarm")),
  wine_offset_probit = case("clm(rating ~ temp + contact + offset(response / 50), data = wine, link = \"probit\")",
                            wine, c("contactyes")),
  wine_equidistant = case("clm(rating ~ temp + contact, data = wine, threshold = \"equidistant\")",
                          wine, c("contactyes"), threshold = "equidistant"),
  housing_scale_weights = case(
    "clm(Sat ~ Infl + Type + Cont, scale = ~ Cont, data = housing, weights = Freq)", housing,
    c("TypeAtrium", "sca.ContHigh"), weights = housing$Freq),
  soup_symmetric_cloglog = case(
    "clm(SURENESS ~ PROD + GENDER, scale = ~ GENDER, data = soup, threshold = \"symmetric\", link = \"cloglog\")",
    soup, c("PRODTest", "sca.GENDERFemale"), threshold = "symmetric")
)
# MASS's confint.polr: profile.polr steps in units of the SE (del = zmax / 5, at most
# maxsteps = 10 per side) and interpolates a spline; the exact ends are clm's (same model).
polr_case <- function(r_call, clm_call, data, params, weights = NULL) {
  fit <- eval(parse(text = r_call)); cfit <- eval(parse(text = clm_call))
  se <- sqrt(diag(vcov(fit)))
  ci <- suppressMessages(confint(fit))
  out <- list(r_call = r_call, logLik = as.numeric(logLik(fit)), params = list())
  for (p in params) out$params[[p]] <- list(
    estimate = coef(fit)[[p]], confint95 = unname(ci[p, ]),
    exact95 = exact_ends(cfit, data, p, 0.95, "flexible", weights, coef(fit)[[p]], se[[p]]))
  out
}
polr_cases <- list(
  housing = polr_case("polr(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)",
                      "clm(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)", housing,
                      c("InflHigh", "TypeTerrace", "ContHigh"), weights = housing$Freq),
  wine_probit = polr_case("polr(rating ~ temp + contact, data = wine, method = \"probit\")",
                          "clm(rating ~ temp + contact, data = wine, link = \"probit\")", wine,
                          c("tempwarm", "contactyes")))

# Flexible links: clm neither profiles lambda nor anything else (confint.clm reports Wald
# intervals with a message); the exact ends of lambda's profile are the roots of the signed
# root with clm2 refits at lambda held (clm2(..., lambda = l) fixes it).  Aranda-Ordaz's
# lambda > 0 (the cloglog as lambda -> 0): its profile on wine stays above the cut-off down
# to lambda = 1e-3 (clm2 fails below), so the lower end is NA here (the edge of the domain).
lambda_case <- function(link, bracket) {
  fit <- clm(rating ~ temp + contact, data = wine, link = link)
  refit <- function(l) clm2(rating ~ temp + contact, data = wine, link = link, lambda = l,
                            control = clm2.control(gradTol = 1e-10))
  est <- fit$lambda; llf <- max(fit$logLik, -optimize(function(l) -refit(l)$logLik,
                                                      est + c(-0.2, 0.2), tol = 1e-10)$objective)
  r <- function(l) sign(l - est) * sqrt(max(2 * (llf - refit(l)$logLik), 0))
  # NA: the profile stays above the cut-off down to the edge of lambda's domain
  ends <- function(z) c(if (r(bracket[1]) > -z) NA else
                          uniroot(function(l) r(l) + z, c(bracket[1], est - 0.05), tol = 1e-12)$root,
                        uniroot(function(l) r(l) - z, c(est + 0.05, bracket[2]), tol = 1e-12)$root)
  list(r_call = sprintf("clm(rating ~ temp + contact, data = wine, link = \"%s\")", link),
       lambda = est, logLik_max = llf,
       exact95 = ends(qnorm(0.975)), exact90 = ends(qnorm(0.95)),
       lower_bracket = bracket[1], signed_root_at_lower_bracket = r(bracket[1]),
       confint_message = tryCatch({confint(fit); "none"}, message = function(m) conditionMessage(m)))
}
lambda_cases <- list(aranda_ordaz = lambda_case("Aranda-Ordaz", c(1e-3, 20)),
                     log_gamma = lambda_case("log-gamma", c(-3, 5)))

write_json(list(
  case = "profile_settings", kind = "table", package_version = as.character(packageVersion("ordinal")),
  cases = cases, polr = polr_cases, lambda = lambda_cases,
  notes = paste("confint90/99 = confint(fit, level = 0.9/0.99) (spline through profile steps);",
                "exact90/99 = uniroot roots of the signed root deviance (refits, gradTol 1e-10);",
                "profile_value/profile_lroot = profile(fit, alpha = 0.001)[[p]]: R's lroot is",
                "-sign(value - estimate) sqrt(2 (logLik - logLik_p)), the opposite sign of ordstats'")
), "tests/data/reference/profile_settings.json")
