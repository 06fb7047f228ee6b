# emmeans(mode = "scale") builds its reference grid from the scale formula alone: a
# location-only variable is "not in the reference grid".  (Its weights = "proportional"
# cells sum the prior weights Freq, which ordstats does not follow: see the docstring of
# ordstats/results/margins/emmeans.py.)
#
# Run from the repository root (R 4.2, emmeans 1.8.4, ordinal 2022.11.16, jsonlite):
#   Rscript tests/r/emmeans_scale_grid.R
# Writes tests/data/reference/emmeans/scale_grid.json: for each call, its estimates and
# SEs (as.data.frame(summary(obj))), or the error message R gives.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # write_json()
housing <- read_dataset("housing", "ordstats/datasets")
fit_call <- "clm(Sat ~ Infl + Type + Cont, scale = ~ Type + Cont, weights = Freq, data = housing)"
fit <- eval(parse(text = fit_call))
calls <- c(
  'emmeans(fit, ~ Type, mode = "scale")',
  'emmeans(fit, ~ Cont | Type, mode = "scale")',
  'emmeans(fit, ~ Infl, mode = "scale")',
  'emmeans(fit, ~ Type | Infl, mode = "scale")'
)
one <- function(text) {
  obj <- try(eval(parse(text = text)), silent = TRUE)
  if (inherits(obj, "try-error"))
    return(list(call = text, error = conditionMessage(attr(obj, "condition"))))
  d <- as.data.frame(summary(obj))
  list(call = text, estimate = d$emmean, se = d$SE)
}
write_json(list(fit_call = fit_call, calls = lapply(calls, one),
                packages = list(R = R.version.string, emmeans = as.character(packageVersion("emmeans")),
                                ordinal = as.character(packageVersion("ordinal")))),
           "tests/data/reference/emmeans/scale_grid.json")
