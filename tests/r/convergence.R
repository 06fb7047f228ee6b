# R ordinal's convergence(fit): the reference for res.convergence().
#
# Run from the repository root (R 4.2, ordinal 2022.11.16, jsonlite):
#   Rscript tests/r/convergence.R
# Writes tests/data/reference/convergence.json:
#   fits        for two converged clm fits: the call, nobs, logLik, the table's
#               Estimate and Std.Err, and the Hessian's eigenvalues (the Gradient and
#               Error columns are rounding at convergence and are not compared)
#   digits      ordinal:::cor.dec(error) and ordinal:::signif.digits(value, error) on
#               chosen errors and values
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # named(), write_json()
wine <- read_dataset("wine", "ordstats/datasets")
housing <- read_dataset("housing", "ordstats/datasets")
calls <- c(
  wine = "clm(rating ~ temp + contact, data = wine)",
  housing = "clm(Sat ~ Infl + Type + Cont, weights = Freq, data = housing, link = 'probit')")
fits <- lapply(calls, function(text) {
  conv <- convergence(eval(parse(text = text)))
  tab <- conv$coefficients
  list(call = text, nobs = conv$info$nobs, logLik = as.numeric(conv$original.fit$logLik),
       estimate = named(tab[, "Estimate"]), se = named(tab[, "Std.Err"]),
       eigenvalues = conv$eigen.values)
})
error <- c(0.3, 0.05, 0.0499, 0.04, 0.006, 0.0049, 1e-3, 4.9e-4, 5.1e-4, 2e-7, -3e-9, 7.7e-13)
value <- c(12.5, -0.3, 0.0071, 1, 1234.5, -2.2, 0.5, 99.9, 100, 3.3, -45, 0.0009)
digits <- list(error = error, value = value,
               cor_dec = ordinal:::cor.dec(error), signif_digits = ordinal:::signif.digits(value, error))
write_json(list(fits = fits, digits = digits,
                packages = list(R = R.version.string, ordinal = as.character(packageVersion("ordinal")))),
           "tests/data/reference/convergence.json")
