# Average marginal effects after an ordered logit on the UCLA data (statsmodels'
# ologit_ucla.csv, vendored as tests/data/ologit_ucla.csv): the quantities Stata's
# `ologit apply pared public gpa` + `margins, dydx(*)` reports (every regressor
# treated as continuous) and, for `i.pared i.public`, the discrete changes 0 -> 1.
# The model is fitted by ordinal::clm (polr's optim stops ~1e-4 short of the maximum).
# The effects are written out analytically; their standard errors are the delta
# method with a central-difference Jacobian (step 1e-6) and vcov(polr), an
# implementation independent of ordstats'.
# Run from the repository root: Rscript tests/r/margins_ucla.R
suppressPackageStartupMessages({library(ordinal); library(jsonlite)})
d <- read.csv("tests/data/ologit_ucla.csv")
d$apply <- factor(d$apply, levels = c("unlikely", "somewhat likely", "very likely"))
fit <- clm(apply ~ pared + public + gpa, data = d, link = "logit")
X <- as.matrix(d[, c("pared", "public", "gpa")])
# clm orders the cut-points first; put the slopes first
k <- length(fit$alpha)
theta <- c(fit$beta, fit$alpha)
V <- vcov(fit)[c((k + 1):length(coef(fit)), 1:k), c((k + 1):length(coef(fit)), 1:k)]
p <- ncol(X)
probs <- function(th, X) {
  eta <- drop(X %*% th[1:p])
  cum <- plogis(outer(-eta, th[-(1:p)], "+"))
  cbind(cum, 1) - cbind(0, cum)
}
# d P_j / d x_k = d P_j/d eta * beta_k, with d P_j/d eta = f(z_{j-1}) - f(z_j)
dydx <- function(th) {
  eta <- drop(X %*% th[1:p])
  dens <- dlogis(outer(-eta, th[-(1:p)], "+"))
  dP_deta <- cbind(0, dens) - cbind(dens, 0)
  unlist(lapply(1:p, function(k) colMeans(dP_deta * th[k])))
}
discrete <- function(th) {  # average P(x_k = 1) - P(x_k = 0) for pared, public
  unlist(lapply(1:2, function(k) {
    hi <- X; hi[, k] <- 1; lo <- X; lo[, k] <- 0
    colMeans(probs(th, hi) - probs(th, lo))
  }))
}
delta_se <- function(f) {
  h <- 1e-6
  J <- sapply(seq_along(theta), function(i) {
    up <- theta; up[i] <- up[i] + h; dn <- theta; dn[i] <- dn[i] - h
    (f(up) - f(dn)) / (2 * h)
  })
  sqrt(diag(J %*% V %*% t(J)))
}
out <- list(
  case = "margins_ucla_clm",
  r_call = "clm(apply ~ pared + public + gpa, data = ologit_ucla, link = 'logit')",
  package_version = as.character(packageVersion("ordinal")),
  levels = levels(d$apply),
  regressors = colnames(X),
  coef = as.list(theta),
  dydx = dydx(theta), dydx_se = delta_se(dydx),
  discrete_regressors = c("pared", "public"),
  discrete = discrete(theta), discrete_se = delta_se(discrete),
  notes = "vectors are regressor-major: (x1: level 1, 2, 3), (x2: ...)"
)
writeLines(toJSON(out, digits = 15, auto_unbox = TRUE, pretty = TRUE),
           "tests/data/reference/margins_ucla_clm.json")
