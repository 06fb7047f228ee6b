# R ordinal's parameter names (names(coef(fit))), which slice(parm =), profile and
# confint(parm =) take.
#
# Run from the repository root (R with ordinal, jsonlite):
#   Rscript tests/r/r_parameter_names.R
# Reads ordstats/datasets/wine.csv; writes tests/data/r/r_parameter_names.json for
# tests/results/test_r_parameter_names.py.
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
fits <- list(
  interaction_poly = clm(rating ~ temp * contact + poly(as.numeric(judge), 2), data = wine),
  nominal = clm(rating ~ temp, nominal = ~ contact, data = wine),
  scale = clm(rating ~ temp + contact, scale = ~ temp, data = wine)
)
write_json(lapply(fits, function(fit) names(coef(fit))), "tests/data/r/r_parameter_names.json")
