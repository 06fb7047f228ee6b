# emmeans' reference grid on datasets::esoph (tests/data/r_datasets/esoph.csv) fitted with
# weights = ncontrols, 12 of whose 88 rows are 0: R's clm and polr keep those rows in the
# model frame, so ref_grid counts them in its cells (weights = "proportional"/"cells") and
# in its covariate means; rows with NAs are left out (na.omit).  A factor used only through
# as.integer() is a numeric covariate of the grid (its codes' mean, then as.integer() of it),
# and log(), I() and poly() of a numeric are evaluated at its mean.  Where the formula has a
# call (factor(k)), R's ref_grid sums the prior weights in its cells instead (not followed).
# Run from the repository root:  Rscript tests/r/emmeans_esoph_grid.R
# Writes tests/data/r/emmeans_esoph_grid.json.
suppressMessages({library(ordinal); library(MASS); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")
source("tests/r/json_output.R")
esoph <- read_dataset("esoph", "tests/data/r_datasets")
emm <- function(fit, spec, ...) {
  s <- as.data.frame(summary(emmeans(fit, spec, ...)))
  list(levels = as.character(s[[1]]), emmean = s$emmean, SE = s$SE)
}
alc <- clm(alcgp ~ agegp + tobgp, data = esoph, weights = ncontrols)
alc_polr <- polr(alcgp ~ agegp + tobgp, data = esoph, weights = ncontrols, Hess = TRUE,
                 control = list(reltol = 1e-14))
int_polr <- polr(alcgp ~ as.integer(agegp) + tobgp, data = esoph, weights = ncontrols,
                 Hess = TRUE, control = list(reltol = 1e-14))
alc_cov <- clm(alcgp ~ agegp + tobgp + ncases, data = esoph, weights = ncontrols)
with_na <- esoph
with_na$agegp[c(3, 40)] <- NA
with_na$ncases[c(5, 41)] <- NA
esoph_k <- transform(esoph, k = as.integer(agegp))
alc_k <- clm(alcgp ~ factor(k) + tobgp, data = esoph_k, weights = ncontrols)
alc_na <- clm(alcgp ~ agegp + tobgp + ncases, data = with_na, weights = ncontrols)
out <- list(
  proportional = emm(alc, ~ tobgp, weights = "proportional"),
  cells = emm(alc, ~ tobgp, weights = "cells"),
  outer = emm(alc, ~ tobgp, weights = "outer"),
  polr_proportional = emm(alc_polr, ~ tobgp, weights = "proportional"),
  covariate = emm(alc_cov, ~ tobgp, weights = "proportional"),
  with_na = emm(alc_na, ~ tobgp, weights = "proportional"),
  as_integer = emm(clm(alcgp ~ as.integer(agegp) + tobgp, data = esoph,
                       weights = ncontrols), ~ tobgp),
  as_integer_polr = emm(int_polr, ~ tobgp),
  log = emm(clm(alcgp ~ tobgp + log(ncases + 1), data = esoph, weights = ncontrols), ~ tobgp),
  square = emm(clm(alcgp ~ tobgp + ncases + I(ncases^2), data = esoph, weights = ncontrols),
               ~ tobgp),
  # factor() is a call: R's recover_data evaluates the model frame again, with "(weights)",
  # and ref_grid then sums the prior weights (alc above, the same model, counts rows)
  factor_k_proportional = emm(alc_k, ~ tobgp, weights = "proportional"),
  factor_k = emm(alc_k, ~ k),
  poly = emm(clm(alcgp ~ tobgp + poly(ncases, 2), data = esoph, weights = ncontrols), ~ tobgp)
)
write_json(out, "tests/data/r/emmeans_esoph_grid.json")
