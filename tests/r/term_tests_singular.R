## scale_test / nominal_test rows whose refit ends with a singular Hessian (R's
## convergence code 1): R keeps the row.  Run from the repository root as
##   Rscript tests/r/term_tests_singular.R
## writes tests/data/reference/term_tests_singular.json: each table (row names,
## Df, logLik, AIC, LRT, Pr(>Chi)) and, for the refit, its logLik, edf and code.
suppressMessages({library(ordinal); library(jsonlite)})

table_of <- function(tab) {
  list(row_names = rownames(tab), Df = tab$Df, logLik = tab$logLik, AIC = tab$AIC,
       LRT = tab$LRT, pvalue = tab[["Pr(>Chi)"]])
}
base <- clm(rating ~ temp + temp:contact, nominal = ~ contact, data = wine,
            link = "cloglog")
scale_tab <- suppressWarnings(scale_test(base))
nominal_tab <- suppressWarnings(nominal_test(base))
refit <- suppressWarnings(clm(rating ~ temp + temp:contact, nominal = ~ contact,
                              scale = ~ temp:contact, data = wine, link = "cloglog"))
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  formula = "rating ~ temp + temp:contact", nominal = "~ contact", link = "cloglog",
  scale_test = table_of(scale_tab),
  nominal_test = table_of(nominal_tab),
  refit = list(scale = "~ temp:contact", logLik = as.numeric(logLik(refit)),
               edf = refit$edf, code = refit$convergence$code,
               messages = refit$convergence$messages)
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE, na = "string"),
           "tests/data/reference/term_tests_singular.json")
