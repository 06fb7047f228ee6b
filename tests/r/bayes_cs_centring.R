# Posterior modes of models with category-specific (cs()/nominal) effects under brms' priors,
# written out as brms' Stan code has them (brms 2.18, make_stancode): the `b` design is centred
# (Xc = X - means_X), the cs design is not, and the thresholds are `Intercept - Xcs * bcs`, so
# the Intercept prior is on the centred intercepts without any cs term.
#
# Run from the repository root (numDeriv, jsonlite):  Rscript tests/r/bayes_cs_centring.R
# Writes tests/data/reference/bayes/cs_centring.json: each model's mode in ordstats'
# parametrisation (cumulative: theta = Intercept + xbar'b, gamma = -bcs, beta = b;
# sratio: alpha = Intercept + xbar'b, gamma = -bcs, b = -b_brms; acat: alpha = -(Intercept +
# xbar'b), gamma = bcs, b = b_brms).
suppressMessages({library(numDeriv); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine", "ordstats/datasets")
y <- as.integer(wine$rating); K <- 5; q <- K - 1; n <- nrow(wine)
X <- cbind(tempwarm = as.numeric(wine$temp == "warm"))
w <- as.numeric(wine$contact == "yes")          # the cs() column
xbar <- colMeans(X)
lp_intercept <- function(a) sum(dnorm(a, 0, 1, log = TRUE))    # prior(normal(0, 1), Intercept)
lp_b <- function(b) sum(dnorm(b, 0, 2, log = TRUE))            # prior(normal(0, 2), b)

probs <- function(family, Intercept, b, bcs) {
  mu <- drop(sweep(X, 2, xbar) %*% b)
  thres <- matrix(Intercept, n, q, byrow = TRUE) - outer(w, bcs)   # Intercept - Xcs * bcs
  if (family == "cumulative") return(t(apply(cbind(0, plogis(thres - mu), 1), 1, diff)))
  if (family == "sratio") {  # P(Y = j | Y >= j) = F(thres_j - mu)
    P <- matrix(0, n, K); surv <- rep(1, n)
    for (j in 1:q) { h <- plogis(thres[, j] - mu); P[, j] <- h * surv; surv <- surv * (1 - h) }
    P[, K] <- surv
    return(P)
  }
  L <- cbind(0, t(apply(mu - thres, 1, cumsum)))   # acat: log P(j+1)/P(j) = mu - thres_j
  exp(L) / rowSums(exp(L))
}
log_post <- function(p, family) {
  a <- p[1:q]; b <- p[q + 1]; bcs <- p[q + 1 + 1:q]
  P <- probs(family, a, b, bcs)
  ll <- sum(log(P[cbind(1:n, y)]))
  if (!is.finite(ll)) return(-1e10)
  ll + lp_intercept(a) + lp_b(c(b, bcs))
}
mode_of <- function(family) {
  f <- function(p) log_post(p, family)
  p <- optim(c(-2, -0.5, 0.5, 2, 0, rep(0, q)), function(p) -f(p), function(p) -grad(f, p),
             method = "BFGS", control = list(reltol = 1e-14, maxit = 5000))$par
  for (it in 1:10) p <- p - solve(hessian(f, p), grad(f, p))
  a <- p[1:q]; b <- p[q + 1]; bcs <- p[q + 1 + 1:q]
  ord <- switch(family,
    cumulative = c(a + sum(xbar * b), -bcs, b),
    sratio = c(a + sum(xbar * b), -bcs, -b),
    acat = c(-(a + sum(xbar * b)), bcs, b))
  list(params = ord, max_gradient = max(abs(grad(f, p))))
}
out <- list(
  prior = list(Intercept = "normal(0, 1)", b = "normal(0, 2)"),
  formula = "rating ~ temp, cs(contact)", data = "wine",
  package_versions = list(R = R.version.string, numDeriv = as.character(packageVersion("numDeriv"))),
  modes = lapply(c(cumulative = "cumulative", sratio = "sratio", acat = "acat"), mode_of))
dir.create("tests/data/reference/bayes", showWarnings = FALSE, recursive = TRUE)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           "tests/data/reference/bayes/cs_centring.json")
