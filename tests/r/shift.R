# R's clm on a predictor shifted far from zero (issue 14 item 9).
# Output on R 4.2.2, ordinal 2022.11.16 (2026-11-23); ordstats reproduces the unshifted fit,
# see tests/estimation/test_trust_fits.py:
#                             x             x 
#   -627.63146705    0.86948423    0.09369051 
#                                                        xs            xs 
#    1.000000e+05 -2.000000e+00  9.606538e-11  8.694842e-01            NA 
#                                                        xs            xs 
#    1.000000e+06 -1.000000e+00 -3.851989e+01  9.998459e-02  9.778963e-05 
#                                                        xs            xs 
#    1.000000e+07 -1.000000e+00 -4.852089e+01  9.998243e-03  2.915063e-05 
#                                                    xs         <NA> 
#    1.00000e+08  0.00000e+00 -4.97047e+01           NA           NA 
#   Warning messages:
#   1: (-2) Model failed to converge: degenerate Hessian with 1 negative eigenvalues 
#   In addition: step factor reduced below minimum 
#   2: (-1) Model failed to converge with max|grad| = 0.00138802 (tol = 1e-06) 
#   In addition: step factor reduced below minimum 
#   3: (-1) Model failed to converge with max|grad| = 0.0300466 (tol = 1e-06) 
#   In addition: step factor reduced below minimum 
#   Warning message:
#   (1) Hessian is numerically singular: parameters are not uniquely determined 
#   In addition: Absolute convergence criterion was met, but relative criterion was not met 
#              xs            xs 
#   8.694842e+155            NA 

suppressMessages(library(ordinal))
set.seed(1); n <- 500
x <- rnorm(n); y <- factor(findInterval(0.8*x + rlogis(n), c(-1,0,1)), ordered=TRUE)
b <- clm(y ~ x); print(c(logLik(b), coef(b)[4], sqrt(diag(vcov(b)))[4]))
for (s in c(1e5, 1e6, 1e7, 1e8)) {
  d <- data.frame(y=y, xs = x + s)
  f <- try(clm(y ~ xs, data=d))
  if (!inherits(f, "try-error")) print(c(s, f$convergence$code, logLik(f) - logLik(b), coef(f)["xs"], sqrt(diag(vcov(f)))["xs"]))
}
d <- data.frame(y=y, xs = x*1e-156); f <- clm(y ~ xs, data=d); print(c(coef(f)["xs"], sqrt(diag(vcov(f)))["xs"]))
