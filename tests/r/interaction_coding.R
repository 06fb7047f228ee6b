# Interactions without their main effects: R's model.matrix codes a factor by one indicator
# per level when the term without it is in no preceding term, and clm drops the column
# aliased with the thresholds (NA). ordstats must give the same estimates and SEs.
#
# Run from the repository root (R with ordinal, jsonlite):
#   Rscript tests/r/interaction_coding.R
# Reads ordstats/datasets/wine.csv and housing.csv; writes
# tests/data/reference/interaction_coding.json for tests/test_formula_r_habits.py.
# For each case: the R call, the estimates and SEs by R's names (aliased ones left out:
# clm's coefficients are NA there), and the log-likelihood.
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")  # write_json(), named()
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
housing <- read.csv("ordstats/datasets/housing.csv")
housing$Sat <- factor(housing$Sat, levels = c("Low", "Medium", "High"), ordered = TRUE)
wine$x <- sin(seq_len(nrow(wine)))
calls <- c(
  wine_location = "clm(rating ~ temp:contact, data = wine)",
  wine_location_x = "clm(rating ~ x + temp:contact, data = wine)",
  wine_scale = "clm(rating ~ temp + contact, scale = ~ temp:contact, data = wine)",
  housing_location = "clm(Sat ~ Infl:Type + Cont, weights = Freq, data = housing)"
)
out <- lapply(calls, function(call) {
  fit <- eval(parse(text = call))
  kept <- !is.na(coef(fit))
  list(call = call, coefficients = named(coef(fit)[kept]),
       se = named(sqrt(diag(vcov(fit)))), logLik = as.numeric(logLik(fit)))
})
write_json(out, "tests/data/reference/interaction_coding.json")
