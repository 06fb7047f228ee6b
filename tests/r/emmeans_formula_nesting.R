# emmeans of a clm whose formula nests a factor (temp/b2: b2 has no main effect) while
# the data do not (b2 = 1-4 in both temperatures: wine's bottles renumbered within
# temp).  R's emmeans finds "b2 %in% temp" in the model's terms, not in the data.
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_formula_nesting.R
# writes tests/data/reference/emmeans_formula_nesting.json for tests/test_emmeans.py:
# the logLik and, per specs, the levels, emmean and SE (15 significant digits).
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
w <- wine
w$b2 <- factor((as.integer(as.character(w$bottle)) - 1) %% 4 + 1)
fit <- clm(rating ~ temp/b2, data = w)
table_of <- function(emm) {
  tab <- as.data.frame(summary(emm))
  list(b2 = if ("b2" %in% names(tab)) as.character(tab$b2) else NULL,
       temp = as.character(tab$temp), emmean = tab$emmean, SE = tab$SE)
}
write_json(list(
  fit_call = "clm(rating ~ temp/b2, data = w)",
  logLik = as.numeric(logLik(fit)),
  emmeans = list(
    "b2" = table_of(emmeans(fit, "b2")),
    "temp" = table_of(emmeans(fit, "temp")),
    "~ b2 | temp" = table_of(emmeans(fit, ~ b2 | temp))
  )
), "tests/data/reference/emmeans_formula_nesting.json")
