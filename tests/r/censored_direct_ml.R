# Direct maximum likelihood of a cumulative link model with a censored response, for
# the cases R's packages do not fit (clm has no censored response; rms 6.5 has no Ocens).
# Levels are Turnbull's intervals of the bounds, as ordstats makes them; nlminb then BFGS
# with the analytic gradient, from the link's quantiles of equal steps; standard errors
# from optimHess (or, with "hessian": "richardson" in the spec, numDeriv's Richardson
# extrapolation of the gradient's differences). Written by an audit of issue 28's censored responses.
#
# Run from the repository root (R 4.2, jsonlite):
#   Rscript tests/r/censored_direct_ml.R tests/data/reference/censored/cauchit_c613_spec.json
# The spec names the data (bounds with lower_inf/upper_inf flags for infinite ones), the
# right-hand side, the factors, the link, new rows and times for survival, and the output:
#   K, vals (level values), theta, beta, se, loglik, llnull (thresholds only), grad
#   (max |gradient| at the optimum), surv and surv_se (P(Y > t) of the new rows).
suppressMessages(library(jsonlite))
args <- commandArgs(TRUE); spec <- fromJSON(args[1])
d <- read.csv(spec$data, stringsAsFactors = FALSE)
lo <- d$lower; hi <- d$upper; lo[is.na(lo)] <- -Inf; hi[is.na(hi)] <- Inf
lo[d$lower_inf == 1] <- -Inf; hi[d$upper_inf == 1] <- Inf
grid <- sort(unique(c(lo[is.finite(lo)], hi[is.finite(hi)])))
m <- length(grid)
pos <- function(v) 2 * match(v, grid) - 1   # grid[i] at 2i-1, just above it at 2i, below all 0
s_ <- ifelse(lo == hi, pos(lo), ifelse(is.finite(lo), pos(lo) + 1, 0))
e_ <- ifelse(is.finite(hi), pos(hi), 2 * m)
Ls <- sort(unique(s_)); Rs <- sort(unique(e_))
lev <- NULL
for (l in Ls) { r <- min(Rs[Rs >= l]); if (!any(Ls > l & Ls <= r)) lev <- rbind(lev, c(l, r)) }
K <- nrow(lev)
epsv <- if (all(grid == round(grid))) 1e-3 else 1e-8
vals <- sapply(1:K, function(k) { l <- lev[k, 1]; r <- lev[k, 2]
  if (l %% 2 == 1) grid[(l + 1) / 2] else if (l == 0) grid[min((r + 1) / 2, m)] else grid[l / 2] + epsv })
lev_lo <- sapply(s_, function(s) which(lev[, 1] >= s)[1])
lev_hi <- sapply(e_, function(e) max(which(lev[, 2] <= e)))
for (f in spec$factors) d[[f]] <- factor(d[[f]])
X <- model.matrix(as.formula(spec$rhs), d)[, -1, drop = FALSE]
p <- ncol(X)
Fn <- switch(spec$link, logit = plogis, probit = pnorm, cauchit = pcauchy,
  cloglog = function(x) -expm1(-exp(x)), loglog = function(x) exp(-exp(-x)))
fn <- switch(spec$link, logit = dlogis, probit = dnorm, cauchit = dcauchy,
  cloglog = function(x) exp(x - exp(x)), loglog = function(x) exp(-x - exp(-x)))
nll_grad <- function(par, X) {
  th <- c(-Inf, par[1:(K - 1)], Inf); b <- par[-(1:(K - 1))]
  eta <- if (length(b)) drop(X %*% b) else rep(0, nrow(X))
  uh <- th[lev_hi + 1] - eta; ul <- th[lev_lo] - eta
  P <- Fn(uh) - Fn(ul)
  fh <- ifelse(is.finite(uh), fn(uh), 0); fl <- ifelse(is.finite(ul), fn(ul), 0)
  g <- numeric(length(par))
  for (j in 1:(K - 1)) g[j] <- sum(fh[lev_hi == j] / P[lev_hi == j]) - sum(fl[lev_lo == j + 1] / P[lev_lo == j + 1])
  if (length(b)) g[-(1:(K - 1))] <- -colSums(X * ((fh - fl) / P))
  list(nll = -sum(log(P)), grad = -g)
}
# With spec$monotone the thresholds are kept in order: theta_1 and log steps
# theta_j - theta_(j-1) = exp(d_j), so that no level's probability is negative. A level to
# which the maximum gives no probability has d_j -> -inf; its threshold is then tied to the
# one below (steps below 1e-6) and the fit is made again in the same parametrisation of the
# thresholds left, until no step is that small: the last fit's thresholds give the Hessian.
monotone <- isTRUE(spec$monotone)
fit_monotone <- function(X, tie) {
  # tie: for each of the K - 1 thresholds, the free threshold it equals
  pp <- ncol(X); q <- max(tie); cp <- (1:q) / (q + 1)
  q0 <- switch(spec$link, logit = qlogis(cp), probit = qnorm(cp), cauchit = qcauchy(cp), cloglog = log(-log(1 - cp)), loglog = -log(-log(cp)))
  free_par <- function(z) if (q > 1) c(z[1], z[1] + cumsum(exp(z[2:q]))) else z[1]
  to_par <- function(z) c(free_par(z)[tie], z[-(1:q)])
  nll <- function(z) nll_grad(to_par(z), X)$nll
  gr <- function(z) { g <- nll_grad(to_par(z), X)$grad; gt <- rowsum(g[1:(K - 1)], tie)[, 1]
    tail_sums <- rev(cumsum(rev(gt)))
    c(tail_sums[1], if (q > 1) exp(z[2:q]) * tail_sums[-1], g[-(1:(K - 1))]) }
  st <- c(q0[1], if (q > 1) log(diff(q0)), rep(0, pp))
  o <- nlminb(st, nll, gr, control = list(eval.max = 20000, iter.max = 20000, rel.tol = 1e-15, x.tol = 1e-14))
  o2 <- optim(o$par, nll, gr, method = "BFGS", control = list(maxit = 20000, reltol = 1e-16))
  list(par = to_par(o2$par), nll = o2$value, steps = if (q > 1) exp(o2$par[2:q]) else numeric(0))
}
fit_tied <- function(X) {
  tie <- 1:(K - 1)
  repeat {
    m <- fit_monotone(X, tie)
    small <- which(m$steps < 1e-6)
    if (!length(small)) return(list(fit = m, tie = tie))
    free <- c(TRUE, m$steps >= 1e-6)
    tie <- cumsum(free)[tie]
  }
}
fitit <- function(X) {
  pp <- ncol(X)
  cp <- (1:(K - 1)) / K
  st <- c(switch(spec$link, logit = qlogis(cp), probit = qnorm(cp), cauchit = qcauchy(cp), cloglog = log(-log(1 - cp)), loglog = -log(-log(cp))), rep(0, pp))
  o <- nlminb(st, function(q) nll_grad(q, X)$nll, function(q) nll_grad(q, X)$grad,
              control = list(eval.max = 5000, iter.max = 5000, rel.tol = 1e-15, x.tol = 1e-12))
  o2 <- optim(o$par, function(q) nll_grad(q, X)$nll, function(q) nll_grad(q, X)$grad, method = "BFGS",
              control = list(maxit = 5000, reltol = 1e-16))
  list(par = o2$par, nll = o2$value, grad = max(abs(nll_grad(o2$par, X)$grad)))
}
if (monotone) {
  t1 <- fit_tied(X); t0 <- fit_tied(X[, 0, drop = FALSE])
  tie <- t1$tie; nfree <- max(tie)
  free <- !duplicated(tie)  # thresholds not tied to the one below
  # the model with those ties: its levels are those with probability
  keep_level <- c(free, TRUE)
  nll_grad_full <- nll_grad
  nll_grad <- function(par, X) {
    full <- c(par[1:nfree][tie], par[-(1:nfree)])
    out <- nll_grad_full(full, X); g <- out$grad
    list(nll = out$nll, grad = c(rowsum(g[1:(K - 1)], tie)[, 1], g[-(1:(K - 1))]))
  }
  par <- c(t1$fit$par[1:(K - 1)][free], t1$fit$par[-(1:(K - 1))])
  f1 <- list(par = par, nll = t1$fit$nll, grad = max(abs(nll_grad(par, X)$grad)))
  f0 <- list(nll = t0$fit$nll)
} else {
  f1 <- fitit(X); f0 <- fitit(X[, 0, drop = FALSE])
}
if (identical(spec$hessian, "richardson")) {
  # many thresholds (lung: 140 parameters): optimHess's differences of the gradient
  # (step 1e-3) err by ~1e-3; Richardson extrapolation of them by ~1e-9
  H <- numDeriv::jacobian(function(q) nll_grad(q, X)$grad, f1$par)
  H <- (H + t(H)) / 2
} else {
  H <- optimHess(f1$par, function(q) nll_grad(q, X)$nll, function(q) nll_grad(q, X)$grad)
}
V <- solve(H)
if (monotone) { vals <- vals[keep_level]; K <- sum(keep_level) }
nd <- read.csv(spec$newdata, stringsAsFactors = FALSE)
for (f in spec$factors) nd[[f]] <- factor(nd[[f]], levels = levels(d[[f]]))
Xn <- model.matrix(as.formula(spec$rhs), nd)[, -1, drop = FALSE]
b <- f1$par[-(1:(K - 1))]; th <- f1$par[1:(K - 1)]
surv <- se <- matrix(NA, nrow(Xn), length(spec$times))
for (k in seq_along(spec$times)) {
  t <- spec$times[k]; j <- sum(vals <= t)
  for (i in 1:nrow(Xn)) {
    if (j == 0) { surv[i, k] <- 1; se[i, k] <- 0 } else if (j >= K) { surv[i, k] <- 0; se[i, k] <- 0 } else {
      u <- th[j] - sum(Xn[i, ] * b); surv[i, k] <- 1 - Fn(u)
      gr <- numeric(length(f1$par)); gr[j] <- fn(u); gr[-(1:(K - 1))] <- -fn(u) * Xn[i, ]
      se[i, k] <- sqrt(drop(t(gr) %*% V %*% gr)) }
  }
}
writeLines(toJSON(list(K = unbox(K), vals = ifelse(is.finite(vals), vals, NA), theta = th, beta = b, se = sqrt(diag(V)), loglik = unbox(-f1$nll), llnull = unbox(-f0$nll), grad = unbox(f1$grad),
  surv = surv, surv_se = se), digits = NA, matrix = "rowmajor", na = "null"), spec$out)
