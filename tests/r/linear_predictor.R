# predict.clm(type = "linear.predictor", se.fit = TRUE, interval = TRUE): eta1 and eta2.
#
# Run from the repository root (R with ordinal, jsonlite):
#   Rscript tests/r/linear_predictor.R
# Reads ordstats/datasets/wine.csv; writes tests/data/r/linear_predictor.json for
# tests/results/test_prediction_linear.py.  For each case: the R call; eta1, eta2 and their
# se and 90% limits for newdata = the data with the response (R's +-1e5 at the ends, where
# ordstats gives +-Inf); eta1 of the first K - 1 levels for the first 6 rows without the
# response (R's matrix form); and x'beta with sqrt(diag(X V X')) (the exact delta method).
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")  # write_json(), rows()
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
calls <- list(
  wine = "clm(rating ~ temp + contact, data = wine)",
  wine_nominal_scale_probit =
    "clm(rating ~ temp, nominal = ~ contact, scale = ~ temp, link = 'probit', data = wine)"
)
case <- function(call) {
  fit <- eval(parse(text = call))
  p <- predict(fit, newdata = wine, type = "linear.predictor", se.fit = TRUE,
               interval = TRUE, level = 0.9)
  bare <- predict(fit, newdata = wine[1:6, c("temp", "contact")], type = "linear.predictor",
                  se.fit = TRUE)
  K <- nlevels(wine$rating)
  X <- model.matrix(fit)$X[, -1, drop = FALSE]
  beta <- fit$beta
  V <- vcov(fit)[names(beta), names(beta)]
  list(call = call,
       eta1 = as.numeric(p$eta1), eta2 = as.numeric(p$eta2),
       se_eta1 = as.numeric(p$se.eta1), se_eta2 = as.numeric(p$se.eta2),
       lwr1 = as.numeric(p$lwr1), upr1 = as.numeric(p$upr1),
       lwr2 = as.numeric(p$lwr2), upr2 = as.numeric(p$upr2),
       bare_eta1 = rows(bare$eta1[, -K, drop = FALSE]),
       bare_se_eta1 = rows(bare$se.eta1[, -K, drop = FALSE]),
       xb = as.numeric(X %*% beta), se_xb = sqrt(diag(X %*% V %*% t(X))))
}
write_json(lapply(calls, case), "tests/data/r/linear_predictor.json")
