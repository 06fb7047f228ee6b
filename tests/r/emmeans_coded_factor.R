# emmeans of a clm whose numeric column enters as a factor: factor(k) (ordstats: C(k)).
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_coded_factor.R
# Reads tests/data/coded_factor.csv (300 rows: x normal, k in 1..3, y in 0..3 from
# y* = x + k/2 + logistic noise) and writes tests/data/reference/emmeans_coded_factor.json
# for tests/results/test_margins_coded_factors.py: logLik, emmeans(fit, ~ k) and
# pairs(emmeans(fit, ~ k)) (Tukey), 15 significant digits.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
d <- read.csv("tests/data/coded_factor.csv")
d$y <- factor(d$y, ordered = TRUE)
fit <- clm(y ~ x + factor(k), data = d)
emm <- as.data.frame(summary(emmeans(fit, ~ k)))
prs <- as.data.frame(summary(pairs(emmeans(fit, ~ k))))
write_json(list(
  fit_call = "clm(y ~ x + factor(k), data = d)",
  logLik = as.numeric(logLik(fit)),
  emmeans = list(k = as.character(emm$k), emmean = emm$emmean, SE = emm$SE),
  pairs = list(contrast = as.character(prs$contrast), estimate = prs$estimate, SE = prs$SE,
               p.value = prs$p.value)
), "tests/data/reference/emmeans_coded_factor.json")
