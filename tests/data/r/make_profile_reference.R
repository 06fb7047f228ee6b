# Exact profile-likelihood interval ends from R, for tests/test_profile.py.
# confint.clm interpolates a spline through 8 profile steps per side, so its
# ends can be ~1e-4 from the exact roots; here each end is the root (uniroot,
# tol 1e-12) of the signed root deviance, the parameter fixed through an offset
# and every other parameter refitted by clm. Run from the repository root:
#   Rscript tests/data/r/make_profile_reference.R
library(ordinal)
library(jsonlite)

wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
wine$temp <- factor(wine$temp, levels = c("cold", "warm"))
wine$contact <- factor(wine$contact, levels = c("no", "yes"))
warm <- as.numeric(wine$temp == "warm")
tight <- clm.control(gradTol = 1e-10)

exact_ends <- function(fit, refit, estimate) {
  z <- qnorm(0.975)
  r <- function(b) sign(b - estimate) * sqrt(2 * (fit$logLik - refit(b)$logLik))
  lower <- uniroot(function(b) r(b) + z, estimate + c(-4, -0.1), tol = 1e-12)$root
  upper <- uniroot(function(b) r(b) - z, estimate + c(0.1, 4), tol = 1e-12)$root
  c(lower, upper)
}

cases <- list()
fit <- clm(rating ~ temp + contact, data = wine)
cases$clm_wine_logit <- list(
  r_call = "clm(rating ~ temp + contact, data = wine)", param = "tempwarm",
  confint = unname(confint(fit)["tempwarm", ]),
  exact = exact_ends(fit, function(b) clm(rating ~ contact + offset(b * warm), data = wine,
                                          control = tight), coef(fit)[["tempwarm"]]))
fit <- clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, data = wine)
cases$clm_wine_nominal_scale <- list(
  r_call = "clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, data = wine)",
  param = "tempwarm",
  confint = unname(confint(fit)["tempwarm", ]),
  exact = exact_ends(fit, function(b) clm(rating ~ 1 + offset(b * warm), nominal = ~ contact,
                                          scale = ~ temp, data = wine, control = tight),
                     coef(fit)[["tempwarm"]]))
write(toJSON(list(case = "profile_exact", kind = "table",
                  notes = "exact = roots of the signed root deviance (uniroot on refits); confint = confint.clm",
                  cases = cases), auto_unbox = TRUE, digits = 15, pretty = TRUE),
      "tests/data/reference/profile_exact.json")
