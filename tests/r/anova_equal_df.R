## anova() of clm fits with equal numbers of parameters: R's anova.clm sorts the
## models by edf (ties keep their order), and a step between fits of the same size
## gets LR.stat = 2 * (logLik - logLik above), df 0 and p-value NA.  Run from the
## repository root as
##   Rscript tests/r/anova_equal_df.R
## writes tests/data/reference/anova_equal_df.json: per case the clm calls in the
## order given to anova(), the order of the table's rows (1-based indices into the
## calls) and its columns.
suppressMessages({library(ordinal); library(jsonlite)})

anova_case <- function(...) {
  calls <- c(...)
  fits <- lapply(calls, function(call) eval(parse(text = call)))
  tab <- do.call(anova, unname(fits))
  list(calls = calls, order = order(sapply(fits, function(f) f$edf)),
       no.par = tab$no.par, AIC = tab$AIC, logLik = tab$logLik,
       LR.stat = tab$LR.stat, df = tab$df, pvalue = tab[["Pr(>Chisq)"]])
}
temp <- "clm(rating ~ temp, data = wine)"
aliased <- "clm(rating ~ temp + I(temp == \"warm\"), data = wine)"  # the I() column is NA
contact <- "clm(rating ~ contact, data = wine)"
additive <- "clm(rating ~ temp + contact, data = wine)"
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  cases = list(
    aliased = anova_case(temp, aliased),
    aliased_first = anova_case(aliased, temp),
    not_nested = anova_case(temp, contact),
    three = anova_case(additive, temp, contact)
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE, na = "string"),
           "tests/data/reference/anova_equal_df.json")
