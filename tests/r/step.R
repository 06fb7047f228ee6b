# R's step() of clm fits: the path of a stepwise search by AIC (or BIC with k = log(n)),
# as `step(fit, ...)$anova`, and the terms of the chosen model, for tests/results/test_step.py.
# stats::step on a clm calls drop1/add1 (stats' default methods: update() and
# ordinal's extractAIC.clm, -2 logLik + k edf).
# Run from the repository root: Rscript tests/r/step.R
suppressMessages({library(ordinal); library(MASS); library(jsonlite)})
out_dir <- "tests/data/reference/step"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
write_step <- function(name, call, fit, ...) {
  s <- step(fit, trace = 0, ...)
  a <- s$anova
  writeLines(toJSON(list(r_call = call, steps = as.character(a$Step), df = a$Df,
                         deviance = a$Deviance, resid_df = a[["Resid. Df"]],
                         resid_dev = a[["Resid. Dev"]], aic = a$AIC,
                         terms = attr(terms(s), "term.labels"), logLik = as.numeric(logLik(s)),
                         coef = coef(s), names = names(coef(s))),
                    digits = NA, auto_unbox = TRUE, null = "null", na = "null"),
             file.path(out_dir, paste0(name, ".json")))
}
hs <- housing
fit <- clm(rating ~ temp * contact, data = wine)
write_step("wine_backward", "step(clm(rating ~ temp * contact, data = wine))", fit)
write_step("wine_bic", "step(clm(rating ~ temp * contact, data = wine), k = log(72))", fit, k = log(72))
fit <- clm(rating ~ 1, data = wine)
write_step("wine_forward", "step(clm(rating ~ 1, data = wine), scope = ~ temp * contact, direction = 'forward')",
           fit, scope = ~ temp * contact, direction = "forward")
fit <- clm(Sat ~ Infl + Type + Cont, weights = Freq, data = hs)
write_step("housing_both_pairs", "step(clm(Sat ~ Infl + Type + Cont, weights = Freq, data = housing), scope = ~ .^2)",
           fit, scope = ~ .^2)
fit <- clm(Sat ~ Infl * Type + Cont, weights = Freq, data = hs, link = "probit")
write_step("housing_lower_upper_probit",
           "step(clm(Sat ~ Infl * Type + Cont, weights = Freq, data = housing, link = 'probit'), scope = list(lower = ~ Infl, upper = ~ Infl * Type * Cont))",
           fit, scope = list(lower = ~ Infl, upper = ~ Infl * Type * Cont))
fit <- clm(Sat ~ Infl + Type + Cont, weights = Freq, data = hs, link = "cloglog")
write_step("housing_forward_one_step",
           "step(clm(Sat ~ Infl + Type + Cont, weights = Freq, data = housing, link = 'cloglog'), scope = ~ Infl * Type * Cont, steps = 1)",
           fit, scope = ~ Infl * Type * Cont, steps = 1)
fit <- clm(SURENESS ~ PROD + DAY + GENDER + AGEGROUP + COLD, scale = ~ PROD, data = soup)
write_step("soup_scale_backward",
           "step(clm(SURENESS ~ PROD + DAY + GENDER + AGEGROUP + COLD, scale = ~ PROD, data = soup))", fit)
fit <- clm(SURENESS ~ PROD + GENDER, nominal = ~ DAY, data = soup)
write_step("soup_nominal_both",
           "step(clm(SURENESS ~ PROD + GENDER, nominal = ~ DAY, data = soup), scope = ~ PROD * GENDER + AGEGROUP + COLD, k = 3)",
           fit, scope = ~ PROD * GENDER + AGEGROUP + COLD, k = 3)
# an aliased term (z = 2 * (temp == "warm")) has Df 0 and is dropped first, without a search
al <- wine; al$z <- 2 * as.numeric(al$temp == "warm")
fit <- clm(rating ~ temp + contact + z, data = al)
write_step("wine_aliased", "step(clm(rating ~ temp + contact + z, data = wine with z = 2 * (temp == 'warm')))", fit)
