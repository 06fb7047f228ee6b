# emmeans' emtrends() on datasets::esoph (tests/data/r_datasets/esoph.csv): the slope in
# ncases of the latent mean, the probabilities and the mean class of a clm with a
# tobgp:ncases interaction, by tobgp.  emtrends differentiates numerically: a forward
# difference of the reference grid at the covariate's mean, h = 0.001 * range(ncases).
# Run from the repository root:  Rscript tests/r/emtrends_esoph.R
# Writes tests/data/r/emtrends_esoph.json.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")
source("tests/r/json_output.R")
esoph <- read_dataset("esoph", "tests/data/r_datasets")
fit <- clm(alcgp ~ agegp + tobgp * ncases, data = esoph, weights = ncontrols)
trend <- function(spec, ...) {
  s <- as.data.frame(summary(emtrends(fit, spec, var = "ncases", ...)))
  c(lapply(s[sapply(s, is.factor)], as.character),
    list(trend = s$ncases.trend, SE = s$SE))
}
out <- list(
  latent = trend(~ tobgp),
  proportional = trend(~ tobgp, weights = "proportional"),
  prob = trend(~ tobgp | alcgp, mode = "prob"),
  mean_class = trend(~ tobgp, mode = "mean.class")
)
write_json(out, "tests/data/r/emtrends_esoph.json")
