# Column order of contrasts of nested means: emmeans lists the by variables (a nested
# factor's nesting factors among them) before "contrast", unlike crossed contrasts.
# wine: bottles 1-4 are served cold, 5-8 warm (bottle %in% temp).
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_nested_columns.R
# Reads ordstats/datasets/wine.csv; writes tests/data/reference/emmeans_nested_columns.json
# for tests/results/test_emmeans_layout.py.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
wine$temp <- factor(wine$temp, levels = c("cold", "warm"))
wine$judge <- factor(wine$judge, levels = 1:9)
wine$bottle <- factor(wine$bottle, levels = 1:8)
fit <- suppressWarnings(clm(rating ~ temp + bottle + judge, data = wine))
table_of <- function(call) {
  tab <- as.data.frame(summary(eval(parse(text = call))))
  list(r_call = call, columns = names(tab), contrast = as.character(tab$contrast),
       estimate = tab$estimate, SE = tab$SE)
}
calls <- c('pairs(emmeans(fit, ~ bottle | temp), adjust = "none")',
           'contrast(emmeans(fit, ~ judge | bottle), "consec", adjust = "none")',
           'contrast(emmeans(fit, ~ judge | bottle, mode = "mean.class"), "pairwise", adjust = "none")',
           'contrast(emmeans(fit, ~ temp | judge), "pairwise", adjust = "none")')
write_json(list(
  fit_call = "clm(rating ~ temp + bottle + judge, data = wine)",
  versions = list(R = R.version.string, emmeans = as.character(packageVersion("emmeans")),
                  ordinal = as.character(packageVersion("ordinal"))),
  calls = lapply(calls, table_of)
), "tests/data/reference/emmeans_nested_columns.json")
