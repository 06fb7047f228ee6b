## anova() of two clm (and clmm) fits on the rows complete for both models, as
## `ordstats compare` fits them when a term of one model has missing values.
## z is 0, 1, 2 repeating down the wine rows, missing in every 7th row (1, 8, ...).
## Run from the repository root as
##   Rscript tests/r/cli_compare_common_rows.R
## writes tests/data/reference/cli_compare_common_rows.json.
suppressMessages({library(ordinal); library(jsonlite)})

i <- seq_len(nrow(wine)) - 1
wine$z <- ifelse(i %% 7 == 0, NA, i %% 3)
complete <- na.omit(wine)
## anova.clmm evaluates the models' calls, so it is called where they are defined
row <- function(tab) {
  list(logLik = as.numeric(tab$logLik), LR.stat = tab$LR.stat[2], df = tab$df[2],
       pvalue = tab[["Pr(>Chisq)"]][2], nobs = nrow(complete))
}
clm0 <- clm(rating ~ temp, data = complete)
clm1 <- clm(rating ~ temp + z, data = complete)
clmm0 <- clmm(rating ~ temp + (1 | judge), data = complete)
clmm1 <- clmm(rating ~ temp + z + (1 | judge), data = complete)
out <- list(
  package_version = as.character(packageVersion("ordinal")),
  clm = row(anova(clm0, clm1)),
  clmm = row(anova(clmm0, clmm1))
)
write_json(out, "tests/data/reference/cli_compare_common_rows.json", digits = NA,
           auto_unbox = TRUE, pretty = TRUE)
