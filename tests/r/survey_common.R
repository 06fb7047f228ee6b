# What the survey reference scripts (tests/r/survey_*_refs.R, issue 27) share: the api
# designs, svyolr's precise optim control and the reader of the vendored api csv files.
# Sourced from the repository root by each script: source("tests/r/survey_common.R").
survey_out <- "tests/data/survey"
# the designs of refs.json; other scripts take a subset by name
api_designs <- list(
  clus1 = "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)",
  clus2 = "svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)",
  strat = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)",
  clus1_nofpc = "svydesign(id = ~dnum, weights = ~pw, data = apiclus1)",
  clus1_domain = "subset(svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc), yr.rnd == 'No')"
)
# optim run to convergence, with a finite-difference Hessian (of svyolr's analytic
# gradient) accurate enough for the 1e-4 comparison of standard errors; k parameters
precise <- function(k) list(reltol = 1e-15, ndeps = rep(1e-5, k), maxit = 1000)
mealcat_levels <- c("(0,25]", "(25,50]", "(50,75]", "(75,100]")
# a vendored api csv file (written by survey_refs.R) with mealcat an ordered factor
read_api <- function(name) {
  d <- read.csv(file.path(survey_out, paste0(name, ".csv")))
  d$mealcat <- factor(d$mealcat, levels = mealcat_levels, ordered = TRUE)
  d
}
# a vendored api csv file without the rows missing mealcat, avg.ed or mobility (svyolr's
# starting values fail on them after postStratify or calibrate)
read_complete_api <- function(name) {
  d <- read_api(name)
  d[complete.cases(d[, c("mealcat", "avg.ed", "mobility")]), ]
}
# svyolr's replicate variance (svrVar with the design's scale, rscales and mse) from
# replicate estimates converged by polr (reltol 1e-15, started at the full-sample fit,
# itself converged), where svyolr's own polr refits stop early; `...` goes to polr
# (method = "cloglog"). Returns list(coef = full-sample estimates, var).
converged_replicates <- function(f, des, ...) {
  tight <- list(reltol = 1e-15, maxit = 1000)
  frame <- model.frame(des)
  frame$.w <- weights(des, "sampling")
  full <- MASS::polr(f, data = frame, weights = .w, control = tight, ...)
  start <- c(full$coefficients, full$zeta)
  betas <- apply(weights(des, "analysis"), 2, function(w) {
    frame$.w <- w
    m <- MASS::polr(f, data = frame, weights = .w, start = start, control = tight, ...)
    c(m$coefficients, m$zeta)
  })
  v <- svrVar(t(betas), des$scale, des$rscales, mse = des$mse, coef = start)
  list(coef = unname(start), var = unname(matrix(v, nrow(v))))
}
