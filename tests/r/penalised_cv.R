# cv.glmnet's cross-validated loss with folds of unequal size: the reference for
# OrdinalModel.cv's fold means and standard errors (glmnet weights each fold by the
# sum of its held-out weights).
#
# Run from the repository root (glmnet 4.1-6, jsonlite), after tests/r/penalised.R
# has written the binary data set:
#   Rscript tests/r/penalised_cv.R
# Writes tests/data/reference/penalised/cv_glmnet_unequal_folds.json.
suppressMessages({library(glmnet); library(jsonlite)})

source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # named(), rows(), write_json()
wb <- read_dataset("wine_binary", "tests/data/r_datasets")
X <- model.matrix(~ temp + contact + z1 + z2, data = wb)[, -1]
y <- wb$y
# 72 rows in 5 folds of 20, 20, 12, 12 and 8 rows, in row order
foldid <- rep(1:5, times = c(20, 20, 12, 12, 8))
case_weights <- rep(c(1, 2, 0.5), length.out = nrow(X))
lambdas <- c(0.1, 0.03, 0.01, 0.003)

run <- function(w) {
  fit <- cv.glmnet(X, y, family = "binomial", weights = w, foldid = foldid, lambda = lambdas,
                   alpha = 1, standardize = FALSE, thresh = 1e-14, maxit = 1e6,
                   type.measure = "deviance")
  list(lambda = fit$lambda, cvm = fit$cvm, cvsd = fit$cvsd,
       lambda_min = fit$lambda.min, lambda_1se = fit$lambda.1se)
}
out <- list(
  call = paste("cv.glmnet(X, y, family = 'binomial', weights = w, foldid = foldid, lambda = lambdas,",
               "alpha = 1, standardize = FALSE, thresh = 1e-14, type.measure = 'deviance');",
               "X = model.matrix(~ temp + contact + z1 + z2)[, -1] of wine_binary"),
  foldid = foldid, lambdas = lambdas, case_weights = case_weights,
  unit_weights = run(rep(1, nrow(X))), case_weighted = run(case_weights),
  note = "cvm is the mean binomial deviance, twice ordstats' log loss; cvsd likewise",
  packages = list(R = R.version.string, glmnet = as.character(packageVersion("glmnet"))))
write_json(out, "tests/data/reference/penalised/cv_glmnet_unequal_folds.json")
