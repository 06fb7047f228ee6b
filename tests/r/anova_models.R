## Reference anova tables with their model descriptions (issue 29, item 15): run from the
## repository root as
##   Rscript tests/r/anova_models.R
## writes tests/data/reference/anova_models.json: for each comparison R's table and its
## attr(, "models") (formula, nominal and scale parts where a model has one, link, threshold).
suppressMessages({library(ordinal); library(jsonlite)})

anova_case <- function(restricted, full) {
  m1 <- eval(parse(text = restricted))
  m2 <- eval(parse(text = full))
  tab <- anova(m1, m2)
  models <- attr(tab, "models")
  names(models) <- sub(":$", "", names(models))
  list(restricted = restricted, full = full,
       models = lapply(models, as.character),
       no.par = tab$no.par, logLik = tab$logLik, LR.stat = tab$LR.stat, df = tab$df,
       pvalue = tab[["Pr(>Chisq)"]])
}
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  cases = list(
    nominal = anova_case("clm(rating ~ temp, data = wine)",
                         "clm(rating ~ temp, nominal = ~contact, data = wine)"),
    scale = anova_case("clm(rating ~ temp, data = wine)",
                       "clm(rating ~ temp, scale = ~contact, data = wine)"),
    nominal_scale_probit = anova_case(
      "clm(rating ~ temp + contact, link = \"probit\", threshold = \"equidistant\", data = wine)",
      paste0("clm(rating ~ temp + contact, nominal = ~contact, scale = ~temp, ",
             "link = \"probit\", threshold = \"equidistant\", data = wine)"))
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE, na = "string"),
           "tests/data/reference/anova_models.json")
