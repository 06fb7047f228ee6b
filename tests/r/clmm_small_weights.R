## wine's clmm with constant weights of 1e-5 (every row's log-likelihood scaled down,
## the random effects' N(0, 1) prior not): a flat likelihood whose gradient is below
## ordstats' gradtol at the start.  R's clmm with a tight gradient tolerance.  Run from
## the repository root as
##   Rscript tests/r/clmm_small_weights.R
## writes tests/data/reference/clmm_small_weights.json.
suppressMessages({library(ordinal); library(jsonlite)})
wine <- ordinal::wine
wine$w <- rep(1e-5, nrow(wine))
fit <- clmm(rating ~ temp + contact + (1|judge), data = wine, weights = w,
            control = clmm.control(gradTol = 1e-10))
out <- list(package_version = as.character(packageVersion("ordinal")),
            formula = "rating ~ temp + contact + (1|judge)", weight = 1e-5,
            loglik = as.numeric(logLik(fit)), coef = as.list(coef(fit)),
            sd = as.numeric(attr(VarCorr(fit)$judge, "stddev")),
            max_grad = max(abs(fit$gradient)))
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE),
           "tests/data/reference/clmm_small_weights.json")
