# Predicted probabilities of clmm fits with standard errors, from emmeans (R's clmm has no
# predict method; emmeans predicts with the random effects at zero, ordstats' re_form=0).
#
# Run from the repository root (ordinal 2022.11.16, emmeans 1.8.4, jsonlite):
#   Rscript tests/r/clmm_predictions.R
# Writes tests/data/reference/clmm_predictions.json: per case the fit's coefficients
# and vcov (R's numerical Hessian), and emmeans' estimates and SEs per cell of the
# reference grid for modes "prob", "cum.prob" and "linear.predictor", plus emmeans #154
# (`~ rating | temp`, averaged over contact).
# The fits use clmm's default control: a tighter inner tolerance (gradTol = 1e-8) hits
# the inner iteration limit and leaves R's numerical Hessian ~1% off the exact one,
# while the default's is within ~1e-4 of it (tests/r/clmm_indep.R).
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})

data_dir <- "ordstats/datasets"
source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine")
soup <- read_dataset("soup")

cases <- list(
  wine_logit = list(data = "wine", formula = rating ~ temp + contact + (1|judge),
                    link = "logit", grid = ~ temp + contact),
  wine_probit = list(data = "wine", formula = rating ~ temp + contact + (1|judge),
                     link = "probit", grid = ~ temp + contact),
  soup_logit = list(data = "soup", formula = SURENESS ~ PROD + (1|RESP),
                    link = "logit", grid = ~ PROD)
)

frame <- function(emm) {
  s <- as.data.frame(summary(emm))
  s[] <- lapply(s, function(col) if (is.factor(col)) as.character(col) else col)
  s
}

out <- list(versions = list(R = R.version.string,
                            ordinal = as.character(packageVersion("ordinal")),
                            emmeans = as.character(packageVersion("emmeans"))))
for (name in names(cases)) {
  cs <- cases[[name]]
  d <- if (cs$data == "wine") wine else soup
  fit <- clmm(cs$formula, data = d, link = cs$link)
  resp <- all.vars(cs$formula)[1]
  by <- paste(all.vars(cs$grid), collapse = " + ")
  spec <- as.formula(paste("~", resp, "|", by))
  cut_spec <- as.formula(paste("~ cut |", by))
  res <- list(coef = as.list(coef(fit)), vcov = unname(vcov(fit)),
              vcov_names = colnames(vcov(fit)), logLik = as.numeric(logLik(fit)))
  res$prob <- frame(emmeans(fit, spec, mode = "prob"))
  res$cum_prob <- frame(emmeans(fit, cut_spec, mode = "cum.prob"))
  res$linear_predictor <- frame(emmeans(fit, cs$grid, mode = "linear.predictor"))
  if (name == "wine_logit") {
    res$issue154 <- frame(emmeans(fit, ~ rating | temp, mode = "prob"))
  }
  out[[name]] <- res
}
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE, pretty = TRUE),
           "tests/data/reference/clmm_predictions.json")
