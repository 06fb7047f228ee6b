# predict.clm with the response in newdata: each row's probability of its own level.
#
# Run from the repository root (R with ordinal, jsonlite):
#   Rscript tests/r/observed_probabilities.R
# Reads ordstats/datasets/wine.csv and housing.csv; writes
# tests/data/reference/observed_probabilities.json for tests/results/test_predict_observed.py.
# For each case: the R call, predict(fit, newdata)$fit (newdata: the data with the
# response) and predict(fit)$fit (no newdata: the fitted rows).
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
housing <- read.csv("ordstats/datasets/housing.csv")
housing$Sat <- factor(housing$Sat, levels = c("Low", "Medium", "High"), ordered = TRUE)
fits <- list(
  wine_interaction = list(call = "clm(rating ~ temp * contact, data = wine)",
                          fit = clm(rating ~ temp * contact, data = wine), data = wine),
  wine_nominal_scale_probit = list(
    call = "clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, link = 'probit', data = wine)",
    fit = clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, link = "probit", data = wine),
    data = wine),
  housing_weighted = list(call = "clm(Sat ~ Infl + Type + Cont, weights = Freq, data = housing)",
                          fit = clm(Sat ~ Infl + Type + Cont, weights = Freq, data = housing),
                          data = housing)
)
out <- lapply(fits, function(case) list(
  call = case$call,
  newdata = as.numeric(predict(case$fit, newdata = case$data)$fit),
  fitted = as.numeric(predict(case$fit)$fit)
))
write_json(out, "tests/data/reference/observed_probabilities.json")
