# VGAM 1.1-7 on a near-separated data set (tests/data/vglm_near_separation.csv,
# 80 rows, simulated): cratio(cloglog) with weights and an offset.  VGAM's Fisher
# scoring ends with loglik NaN ("fitted values close to 0 or 1"); the maximum
# is found here by optim (BFGS, reltol 1e-14) of an independent log-likelihood.
# Run from the repository root: Rscript tests/r/vglm_near_separation.R
suppressMessages({library(VGAM); library(jsonlite)})
d <- read.csv("tests/data/vglm_near_separation.csv")
d$y <- factor(d$y, levels = c("L1", "L2", "L3"), ordered = TRUE)
d$g <- factor(d$g, levels = c("a", "b", "c"))
fit <- suppressWarnings(vglm(y ~ x1 + g, family = cratio(link = "clogloglink", parallel = TRUE),
                             data = d, weights = w, offset = d$off,
                             control = vglm.control(epsilon = 1e-13, maxit = 100)))
X <- model.matrix(~ x1 + g, d)[, -1]
yi <- as.integer(d$y)
loglik <- function(p) {  # cratio: F(eta_j) = P(Y > j | Y >= j), F(x) = 1 - exp(-exp(x))
  eta <- outer(as.vector(X %*% p[3:5] + d$off), p[1:2], "+")
  go <- log(-expm1(-exp(eta)))  # log F
  stop_ <- -exp(eta)            # log(1 - F)
  s <- ifelse(yi == 1, stop_[, 1], go[, 1] + ifelse(yi == 2, stop_[, 2], go[, 2]))
  sum(d$w * s)
}
opt <- optim(coef(fit), function(p) -loglik(p), method = "BFGS",
             control = list(reltol = 1e-14, maxit = 10000))
opt <- optim(opt$par, function(p) -loglik(p), method = "BFGS",
             control = list(reltol = 1e-14, maxit = 10000))
out <- list(vglm_loglik = as.numeric(logLik(fit)), vglm_coef = as.list(coef(fit)),
            optim_loglik = -opt$value, optim_coef = as.list(setNames(opt$par, names(coef(fit)))),
            optim_convergence = opt$convergence)
writeLines(toJSON(out, auto_unbox = TRUE, digits = I(15), na = "string", pretty = TRUE),
           "tests/data/reference/near_separation_cratio_vglm.json")
