## anova() of two fits with the same number of parameters where one or both are
## clmm fits: R's anova.clmm (which calls anova.clm) gives the table anyway, the
## second row with LR.stat = 2 * (logLik - logLik above), df 0 and p-value NA, as
## for two clm fits (tests/r/anova_equal_df.R).  ordstats.lr_test(first, second)
## of such a pair gives that row.  Run from the repository root as
##   Rscript tests/r/anova_equal_df_clmm.R
## writes tests/data/reference/anova_equal_df_clmm.json: per case the calls in the
## order given to anova() and the table's columns (rows in that order: ties keep it).
suppressMessages({library(ordinal); library(jsonlite)})

anova_case <- function(first, second) {
  ## anova.clmm re-evaluates its call, which finds m1 and m2 only in the global
  ## environment when it is called from a function
  assign("m1", eval(parse(text = first)), envir = globalenv())
  assign("m2", eval(parse(text = second)), envir = globalenv())
  tab <- eval(quote(anova(m1, m2)), globalenv())
  list(calls = c(first, second), no.par = tab$no.par, AIC = tab$AIC,
       logLik = tab$logLik, LR.stat = tab$LR.stat, df = tab$df,
       pvalue = tab[["Pr(>Chisq)"]])
}
clm_temp <- "clm(rating ~ temp, data = wine)"
clm_contact <- "clm(rating ~ contact, data = wine)"
clmm_temp <- "clmm(rating ~ temp + (1|judge), data = wine)"
clmm_contact <- "clmm(rating ~ contact + (1|judge), data = wine)"
clm_additive <- "clm(rating ~ temp + contact, data = wine)"
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  cases = list(
    clm_temp_contact = anova_case(clm_temp, clm_contact),
    clm_contact_temp = anova_case(clm_contact, clm_temp),
    clmm_temp_contact = anova_case(clmm_temp, clmm_contact),
    clmm_contact_temp = anova_case(clmm_contact, clmm_temp),
    clm_clmm = anova_case(clm_additive, clmm_temp),
    clmm_clm = anova_case(clmm_temp, clm_additive)
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE, na = "string"),
           "tests/data/reference/anova_equal_df_clmm.json")
