## Reference fits for issue 14 "Trust" (items 8 and 14): run from the repository root as
##   Rscript tests/r/trust_fits.R
## writes tests/data/reference/trust_fits.json (R's ordinal; wine and soup as shipped with it).
library(ordinal)
library(jsonlite)

cy <- with(wine, which(temp == "cold" & contact == "yes"))
wine2 <- subset(wine, subset = (!1:nrow(wine) %in% cy))
wine2[c(9, 15, 46), "rating"] <- NA

fit_case <- function(call_text, data) {
  fit <- eval(parse(text = call_text))
  list(r_call = call_text, loglik = as.numeric(logLik(fit)), coef = as.list(coef(fit)),
       aliased = lapply(fit$aliased, function(a) names(a)[a]),
       convergence_code = fit$convergence$code)
}
table_case <- function(call_text, fit) {
  tab <- eval(parse(text = call_text))
  list(r_call = call_text, row_names = rownames(tab), Df = tab$Df,
       logLik = tab$logLik, LRT = tab$LRT)
}
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  fits = list(
    wine_scale_aliased_nominal = fit_case(
      "clm(rating ~ temp * contact, nominal = ~ contact, scale = ~ contact, data = wine)"),
    convergence_wine2 = fit_case(
      "clm(rating ~ temp, scale = ~ contact, nominal = ~ contact, data = wine2)  # wine2: tests/test.clm.convergence.R")
  ),
  tables = list(
    soup_scale_test = table_case("scale_test(fit)", clm(SURENESS ~ PRODID, data = soup)),
    soup_nominal_test = table_case("nominal_test(fit)", clm(SURENESS ~ PRODID, data = soup)),
    wine_scale_test_interaction = table_case("scale_test(fit)", clm(rating ~ temp:contact, data = wine)),
    wine_nominal_test_scale_terms = table_case("nominal_test(fit)", clm(rating ~ temp, scale = ~ contact, data = wine)),
    wine_scale_test_nominal_terms = table_case("scale_test(fit)", clm(rating ~ temp + contact, nominal = ~ contact, data = wine))
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE, na = "string"),
           "tests/data/reference/trust_fits.json")
