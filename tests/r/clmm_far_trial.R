## A probit clmm with a small random-intercept SD (6 groups of about 40 rows), whose
## BFGS path tries log(sigma) near 70 on its way: rows with P = 0 there.  R's clmm
## fit with a tight gradient tolerance, for the test that ordstats fits it to R's
## maximum without numpy's RuntimeWarnings.  Run from the repository root as
##   Rscript tests/r/clmm_far_trial.R
## writes tests/data/reference/clmm_far_trial.json.
suppressMessages({library(ordinal); library(jsonlite)})
d <- read.csv("tests/data/clmm_probit_far_trial.csv")
d$y <- factor(d$y, ordered = TRUE)
d$f <- factor(d$f)
d$g <- factor(d$g)
fit <- clmm(y ~ x + f + offset(off) + (1|g), data = d, link = "probit",
            control = clmm.control(gradTol = 1e-8))
out <- list(package_version = as.character(packageVersion("ordinal")),
            formula = "y ~ x + f + offset(off) + (1|g)", link = "probit",
            loglik = as.numeric(logLik(fit)), coef = as.list(coef(fit)),
            sd = as.numeric(attr(VarCorr(fit)$g, "stddev")),
            max_grad = max(abs(fit$gradient)))
writeLines(toJSON(out, auto_unbox = TRUE, digits = 15, pretty = TRUE),
           "tests/data/reference/clmm_far_trial.json")
