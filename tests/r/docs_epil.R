# docs/from_r.rst, "R's Laplace log-likelihood is slightly inexact": the page's R code,
# writing its two files into tests/data/docs/ (tests/test_docs_examples.py runs the
# page's Python code on them). Run from the repository: Rscript tests/r/docs_epil.R
library(ordinal); library(MASS)
out <- "tests/data/docs"
epil$yb <- cut(epil$y, c(-Inf, 0, 2, 5, 10, Inf), ordered_result = TRUE)
fit <- clmm(yb ~ trt + lbase + lage + V4 + (1|subject), data = epil)
cat(sprintf("%.5f", logLik(fit)), "\n")                                    # -276.90342
write.csv(epil, file.path(out, "epil.csv"), row.names = FALSE)
writeLines(format(c(fit$alpha, fit$beta, log(fit$ST[[1]])), digits = 17),
           file.path(out, "r_estimates.txt"))
tight <- suppressWarnings(clmm(yb ~ trt + lbase + lage + V4 + (1|subject), data = epil,
                               control = clmm.control(gradTol = 1e-12)))
cat(sprintf("%.5f", logLik(tight)), "\n")                                  # -276.90060
# the two log-likelihoods the page quotes from R: default gradTol, then 1e-12
writeLines(sprintf("%.5f", c(logLik(fit), logLik(tight))), file.path(out, "r_loglik.txt"))
