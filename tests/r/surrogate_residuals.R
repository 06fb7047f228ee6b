# Surrogate residuals (Liu & Zhang 2018) of clm fits on ordinal::wine, as R's sure
# package draws them: sure 0.2's resids.default for a clm (getBounds.clm,
# getMeanResponse.clm, and .rtrunc, truncdist's inverse-cdf draw). sure is not
# installed on the machine that wrote the reference, so its three small steps are
# written out here as sure defines them:
#   bounds  c(-Inf, alpha - alpha[1], Inf)
#   mr      x'beta - alpha[1]
#   r       qF(pF(bounds[y] - mr) + u * (pF(bounds[y + 1] - mr) - pF(bounds[y] - mr))) ,
#           clipped to the bounds: sure's .qtrunc with location mr, minus mr
# with u = runif(n) after set.seed(20261128). The uniforms are written too, so the
# test gives ordstats the same ones.
#
# Run from the repository root (R 4.2, ordinal, MASS, jsonlite):
#   Rscript tests/r/surrogate_residuals.R
# Writes tests/data/r/surrogate_residuals.json: per link, the uniforms u, the level
# codes y (1-based), the residuals r, and clm's alpha and beta.
suppressMessages({library(ordinal); library(jsonlite)})
data(wine, package = "ordinal")
out <- list()
for (link in c("logit", "probit")) {
  fit <- clm(rating ~ temp + contact, data = wine, link = link)
  pF <- if (link == "logit") plogis else pnorm
  qF <- if (link == "logit") qlogis else qnorm
  y <- as.integer(wine$rating)
  X <- model.matrix(~ temp + contact, wine)[, -1]
  bounds <- c(-Inf, fit$alpha - fit$alpha[1L], Inf)
  mr <- drop(X %*% fit$beta) - fit$alpha[1L]
  set.seed(20261128)
  u <- runif(length(y))
  a <- bounds[y] - mr; b <- bounds[y + 1] - mr
  r <- pmin(pmax(a, qF(pF(a) + u * (pF(b) - pF(a)))), b)
  out[[link]] <- list(u = u, y = y, r = unname(r), alpha = unname(fit$alpha),
                      beta = unname(fit$beta))
}
writeLines(toJSON(out, digits = NA, auto_unbox = TRUE), "tests/data/r/surrogate_residuals.json")
