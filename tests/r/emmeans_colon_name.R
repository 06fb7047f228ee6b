# emmeans of a clm whose factor's name has a colon in it: wine with temp renamed "t:1".
# R's emmeans takes the character specs "t:1" as one variable's name, and reads the
# backticked name in a formula (~ `t:1` | contact) as one variable.
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_colon_name.R
# writes tests/data/reference/emmeans_colon_name.json for tests/test_emmeans.py: the
# logLik and, per specs, the levels, emmean and SE (15 significant digits).
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
w <- wine
names(w)[names(w) == "temp"] <- "t:1"
fit <- clm(rating ~ `t:1` + contact, data = w)
table_of <- function(emm) {
  tab <- as.data.frame(summary(emm))
  list(t1 = as.character(tab[["t:1"]]),
       contact = if ("contact" %in% names(tab)) as.character(tab$contact) else NULL,
       emmean = tab$emmean, SE = tab$SE)
}
write_json(list(
  fit_call = "clm(rating ~ `t:1` + contact, data = w)",
  logLik = as.numeric(logLik(fit)),
  emmeans = list(
    "t:1" = table_of(emmeans(fit, "t:1")),
    "~ `t:1` | contact" = table_of(emmeans(fit, ~ `t:1` | contact))
  )
), "tests/data/reference/emmeans_colon_name.json")
