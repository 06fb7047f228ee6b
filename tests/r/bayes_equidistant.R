# Posterior mode of a cumulative logit model with equidistant thresholds under brms' default
# priors, written out as brms' Stan code has them (brms 2.18, make_stancode): the thresholds
# are first_Intercept + (k - 1) * delta on the centred design, student_t(3, 0, 2.5) on
# first_Intercept only, delta and b flat.
#
# Run from the repository root (numDeriv, jsonlite):  Rscript tests/r/bayes_equidistant.R
# Writes tests/data/reference/bayes/equidistant.json: the mode in ordstats' parametrisation
# (threshold.1 = first_Intercept + xbar'b, spacing = delta, b).
suppressMessages({library(numDeriv); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine", "ordstats/datasets")
y <- as.integer(wine$rating); n <- nrow(wine)
x <- as.numeric(wine$temp == "warm"); xbar <- mean(x)
f <- function(p) {
  th <- p[1] + (0:3) * p[2]
  if (p[2] <= 0) return(-1e10)
  P <- t(apply(cbind(0, plogis(outer(rep(1, n), th) - (x - xbar) * p[3]), 1), 1, diff))
  sum(log(P[cbind(1:n, y)])) + dt(p[1] / 2.5, 3, log = TRUE) - log(2.5)
}
p <- optim(c(0, 1, 0), function(p) -f(p), function(p) -grad(f, p), method = "BFGS",
           control = list(reltol = 1e-14, maxit = 5000))$par
for (it in 1:10) p <- p - solve(hessian(f, p), grad(f, p))
out <- list(formula = "rating ~ temp", threshold = "equidistant", prior = "default",
            params = c(p[1] + xbar * p[3], p[2], p[3]), max_gradient = max(abs(grad(f, p))),
            package_versions = list(R = R.version.string,
                                    numDeriv = as.character(packageVersion("numDeriv"))))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           "tests/data/reference/bayes/equidistant.json")
