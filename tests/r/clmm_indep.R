# Independent implementation of ordinal::clmm's objective (sourced by clmm_extra.R).
# Written from the model definition, not from ordinal's code: Laplace for any
# random-effects structure (u-scale, b = Lambda u, Lambda = kron(ST, I) per
# term as in clmm), and for a single scalar term also ordinal's adaptive (nAGQ > 1)
# and non-adaptive (nAGQ < 0) Gauss-Hermite rules. Inner conditional modes are
# found by damped Newton to max|grad| < 1e-13, so the Laplace value is exact
# (R's default inner stopping leaves ~1e-6 in the log-likelihood).
# Outer thresholds are +-1e5 like ordinal (outer = Inf gives the exact cauchit).
suppressMessages(library(Matrix))
link_fns <- function(link) {
  L <- switch(link,
    logit = list(p = plogis, q = function(x) plogis(x, lower.tail = FALSE), d = dlogis,
                 g = function(x) dlogis(x) * (1 - 2 * plogis(x))),
    probit = list(p = pnorm, q = function(x) pnorm(x, lower.tail = FALSE), d = dnorm,
                  g = function(x) -x * dnorm(x)),
    cloglog = list(p = function(x) -expm1(-exp(x)), q = function(x) exp(-exp(x)),
                   d = function(x) exp(x - exp(x)), g = function(x) exp(x - exp(x)) * (1 - exp(x))),
    loglog = list(p = function(x) exp(-exp(-x)), q = function(x) -expm1(-exp(-x)),
                  d = function(x) exp(-x - exp(-x)), g = function(x) exp(-x - exp(-x)) * (exp(-x) - 1)),
    cauchit = list(p = pcauchy, q = function(x) pcauchy(x, lower.tail = FALSE), d = dcauchy,
                   g = function(x) -2 * x / (pi * (1 + x^2)^2)))
  fin <- function(fun) { force(fun); function(x) { r <- fun(x); r[!is.finite(x) | is.nan(r)] <- 0; r } }
  L$d <- fin(L$d); L$g <- fin(L$g)
  ## P(e2 < Y* <= e1) computed in the tail that keeps precision (as ordinal does)
  L$diff <- function(e1, e2) ifelse(e2 <= 0, L$p(e1) - L$p(e2), L$q(e2) - L$q(e1))
  L
}

## S: list with y (1..K), X (n x nbeta), off, w, tJac, Zt (q x n sparse), ST template list, nlev, link, ssr
indep_setup <- function(fit, outer = 1e5, nominal_link = FALSE) {
  mf <- fit$model
  X <- model.matrix(fit)
  X <- X[, colnames(X) != "(Intercept)", drop = FALSE]
  w <- if (!is.null(mf[["(weights)"]])) mf[["(weights)"]] else rep(1, nrow(mf))
  off <- model.offset(mf)   # offset() terms in the formula (clmm has no offset argument)
  if (is.null(off)) off <- rep(0, nrow(mf))
  ssr <- is.null(fit$Zt)
  Zt <- if (ssr) as(fit$gfList[[1]], "sparseMatrix") else fit$Zt
  Zt <- as(Zt, "CsparseMatrix")
  ## ordinal's single-scalar-term C code has cloglog and loglog swapped (linkInt 3 uses
  ## exp(-exp(-x)), 4 uses 1 - exp(-exp(x))); to reproduce R's objective we swap too
  ## unless nominal_link = TRUE
  link_used <- fit$link
  if (ssr && !nominal_link && link_used %in% c("cloglog", "loglog"))
    link_used <- c(cloglog = "loglog", loglog = "cloglog")[[link_used]]
  list(y = as.integer(model.response(mf)), X = X, w = w, off = off, tJac = fit$tJac, link_used = link_used,
       Zt = Zt, ST = fit$ST, nlev = fit$dims$nlev.re, lf = link_fns(link_used), ssr = ssr,
       nalpha = fit$dims$nalpha, nbeta = fit$dims$nbeta, outer = outer,
       grp = if (ssr) as.integer(fit$gfList[[1]]) else NULL, K = length(fit$y.levels))
}

unpack <- function(par, S) {
  na <- S$nalpha; nb <- S$nbeta
  alpha <- par[seq_len(na)]; beta <- par[na + seq_len(nb)]; stp <- par[-seq_len(na + nb)]
  theta <- c(-S$outer, drop(S$tJac %*% alpha), S$outer)
  eta <- if (nb) drop(S$X %*% beta) else rep(0, length(S$y))
  eta <- eta + S$off
  if (S$ssr) { lam <- rep(exp(stp), S$nlev[1]) ; Lambda <- Diagonal(x = lam) } else {
    k <- 0; blocks <- list()
    for (i in seq_along(S$ST)) {
      qi <- ncol(S$ST[[i]]); np <- qi * (qi + 1) / 2; pp <- stp[k + seq_len(np)]; k <- k + np
      M <- matrix(0, qi, qi); diag(M) <- pp[seq_len(qi)]
      if (qi > 1) M[lower.tri(M)] <- pp[-seq_len(qi)]
      blocks[[i]] <- kronecker(Matrix(M, sparse = TRUE), Diagonal(S$nlev[i]))
    }
    Lambda <- as(bdiag(blocks), "CsparseMatrix")
  }
  list(ub = theta[S$y + 1] - eta, lb = theta[S$y] - eta, Lambda = Lambda)
}

## conditional mode in u-scale; returns u, D (Hessian), nllcond = -sum w log p + u'u/2
cond_mode <- function(P, S, tol = 1e-13, maxit = 200) {
  A <- crossprod(P$Lambda, S$Zt)   # q x n : z = t(A) %*% u
  q <- nrow(A); u <- rep(0, q)
  f <- S$lf
  evalu <- function(u) {
    z <- as.vector(crossprod(A, u))
    e1 <- P$ub - z; e2 <- P$lb - z
    pr <- f$diff(e1, e2)
    list(z = z, e1 = e1, e2 = e2, pr = pr, val = -sum(S$w * log(pr)) + sum(u^2) / 2)
  }
  cur <- evalu(u)
  for (it in seq_len(maxit)) {
    d1 <- f$d(cur$e1); d2 <- f$d(cur$e2)
    gz <- S$w * (d1 - d2) / cur$pr
    grad <- as.vector(A %*% gz) + u
    W <- S$w * (((d1 - d2) / cur$pr)^2 - (f$g(cur$e1) - f$g(cur$e2)) / cur$pr)
    H <- forceSymmetric(tcrossprod(A %*% Diagonal(x = sqrt(pmax(W, 0))))) + Diagonal(q)
    if (max(abs(grad)) < tol) break
    step <- as.vector(solve(H, grad))
    s <- 1
    repeat { new <- evalu(u - s * step); if (is.finite(new$val) && new$val <= cur$val + 1e-12 * abs(cur$val)) break; s <- s / 2; if (s < 1e-10) break }
    u <- u - s * step; cur <- new
    if (max(abs(s * step)) < 1e-15) break
  }
  d1 <- f$d(cur$e1); d2 <- f$d(cur$e2)
  W <- S$w * (((d1 - d2) / cur$pr)^2 - (f$g(cur$e1) - f$g(cur$e2)) / cur$pr)
  H <- forceSymmetric(tcrossprod(A %*% Diagonal(x = sqrt(pmax(W, 0))))) + Diagonal(q)
  list(u = u, H = H, val = cur$val, A = A, grad_max = max(abs(as.vector(A %*% (S$w * (d1 - d2) / cur$pr)) + u)))
}

gh_rule <- function(n) {  # physicists' Gauss-Hermite (weight exp(-x^2))
  i <- seq_len(n - 1); J <- matrix(0, n, n); J[cbind(i, i + 1)] <- sqrt(i / 2); J[cbind(i + 1, i)] <- sqrt(i / 2)
  e <- eigen(J, symmetric = TRUE); o <- order(e$values)
  list(x = e$values[o], w = sqrt(pi) * e$vectors[1, o]^2)
}

## single scalar term: per-group scalar Newton in base R (fast path)
cond_mode_ssr <- function(P, S, tau, tol = 1e-13, maxit = 200) {
  f <- S$lf; g <- S$grp; G <- S$nlev[1]
  u <- rep(0, G)
  ev <- function(u) {
    z <- tau * u[g]; e1 <- P$ub - z; e2 <- P$lb - z; pr <- f$diff(e1, e2)
    list(e1 = e1, e2 = e2, pr = pr, val = rowsum(-S$w * log(pr), g, reorder = TRUE)[, 1] + u^2 / 2)
  }
  derivs <- function(cur, u) {
    d1 <- f$d(cur$e1); d2 <- f$d(cur$e2)
    gr <- tau * rowsum(S$w * (d1 - d2) / cur$pr, g, reorder = TRUE)[, 1] + u
    W <- S$w * (((d1 - d2) / cur$pr)^2 - (f$g(cur$e1) - f$g(cur$e2)) / cur$pr)
    list(grad = gr, D = tau^2 * rowsum(W, g, reorder = TRUE)[, 1] + 1)
  }
  cur <- ev(u)
  for (it in seq_len(maxit)) {
    dv <- derivs(cur, u)
    if (max(abs(dv$grad)) < tol) break
    step <- dv$grad / dv$D
    s <- rep(1, G)
    repeat {
      un <- u - s * step; new <- ev(un)
      bad <- !is.finite(new$val) | new$val > cur$val + 1e-12 * abs(cur$val)
      if (!any(bad) || all(s[bad] < 1e-10)) break
      s[bad] <- s[bad] / 2
    }
    if (max(abs(s * step)) < 1e-15) { u <- un; cur <- new; break }
    u <- un; cur <- new
  }
  dv <- derivs(cur, u)
  list(u = u, D = dv$D, val = sum(cur$val), grad_max = max(abs(dv$grad)))
}

indep_nll <- function(par, S, nAGQ = 1) {
  P <- unpack(par, S)
  f <- S$lf
  lse <- function(M) { m <- apply(M, 1, max); m + log(rowSums(exp(M - m))) }
  if (nAGQ < 0) {  # ordinal's non-adaptive GHQ: b = tau * x_h, log-weights log(w_h) + x_h^2/2
    gh <- gh_rule(-nAGQ); tau <- exp(par[length(par)])
    L <- sapply(seq_along(gh$x), function(h) {
      lp <- S$w * log(f$diff(P$ub - tau * gh$x[h], P$lb - tau * gh$x[h]))
      rowsum(lp, S$grp, reorder = TRUE)[, 1] + log(gh$w[h]) + gh$x[h]^2 / 2 })
    return(-sum(lse(matrix(L, ncol = length(gh$x)))) + S$nlev[1] * log(2 * pi) / 2)
  }
  if (S$ssr) {
    tau <- exp(par[length(par)])
    cm <- cond_mode_ssr(P, S, tau)
    if (nAGQ <= 1) return(cm$val + sum(log(cm$D)) / 2)
  } else {
    cm <- cond_mode(P, S)
  }
  if (nAGQ <= 1) {
    return(cm$val + as.numeric(determinant(cm$H, logarithm = TRUE)$modulus) / 2)
  }
  gh <- gh_rule(nAGQ); tau <- exp(par[length(par)])
  D <- cm$D; K <- sqrt(2 / D)
  L <- sapply(seq_along(gh$x), function(h) {
    ug <- cm$u + K * gh$x[h]
    b <- tau * ug[S$grp]
    lp <- S$w * log(f$diff(P$ub - b, P$lb - b))
    rowsum(lp, S$grp, reorder = TRUE)[, 1] + log(gh$w[h]) + gh$x[h]^2 - ug^2 / 2 })
  -sum(lse(matrix(L, ncol = length(gh$x))) + log(K)) + S$nlev[1] * log(2 * pi) / 2
}
