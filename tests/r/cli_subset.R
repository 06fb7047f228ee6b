## clm() and confint() with R's subset=, as `ordstats fit --subset` fits them.
## Run from the repository root as
##   Rscript tests/r/cli_subset.R
## writes tests/data/reference/cli_subset.json.
suppressMessages({library(ordinal); library(MASS); library(jsonlite)})

case <- function(fit, query) {
  list(query = query, coef = as.list(coef(fit)), logLik = as.numeric(logLik(fit)),
       nobs = nobs(fit), profile_ci = lapply(as.data.frame(t(confint(fit))), as.numeric))
}
wine_fit <- clm(rating ~ temp + contact, data = wine, subset = judge != 1)
housing_fit <- clm(Sat ~ Infl + Type, data = housing, weights = Freq,
                   subset = Cont == "High" & Freq > 5)
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  wine = c(list(r_call = "clm(rating ~ temp + contact, data = wine, subset = judge != 1)"),
           case(wine_fit, "judge != '1'")),
  housing = c(list(r_call = paste("clm(Sat ~ Infl + Type, data = housing, weights = Freq,",
                                  "subset = Cont == \"High\" & Freq > 5)")),
              case(housing_fit, "Cont == 'High' & Freq > 5"))
)
write_json(out, "tests/data/reference/cli_subset.json", digits = NA,
           auto_unbox = TRUE, pretty = TRUE)
