# survey::svyolr references for ordstats' survey designs (issue 27).
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite):
#   Rscript tests/r/survey_refs.R
# Writes
#   tests/data/survey/api{clus1,clus2,strat}.csv  the columns used of R survey's `api` data
#       (data(api) of the survey package, GPL-2|GPL-3; California Department of Education's
#       Academic Performance Index, as distributed with the package) plus mealcat and a row id
#   tests/data/survey/refs.json  one entry per fit:
#       design          the R call that built the design
#       formula         the svyolr formula
#       coef, names     coefficients (slopes, then cut-points)
#       var             vcov(fit): svyolr's linearisation (or replicate) covariance
#       df_residual     fit$df.residual (degf(design) - number of slopes)
#       degf            degf(design)
#   "default" fits use svyolr's defaults (optim BFGS, reltol 1e-8, numerical Hessian with
#   ndeps = 1e-3); "precise" fits pass control = list(reltol = 1e-15, ndeps = 1e-5, maxit = 1000)
#   so that the estimates are converged and optim's finite-difference Hessian (of svyolr's
#   own analytic gradient) is accurate: the comparison at 1e-6/1e-4 is against those.
#   "numderiv" (in the precise entries): the same variance with numDeriv's Hessian and
#   per-row scores at those estimates, and regTermTest's F from it (see numderiv_var).
#   regTermTest_LRT: R's working (Rao-Scott) LRT of the term on a fit with optim's default
#   Hessian step; svyolr's deviance is 2 * weighted NLL / mean(weight) while the lambdas use
#   the unscaled Hessian, and mean_weight lets a test relate the two.
#   "lonely_*": a design whose stratum "A" has one PSU, under each survey.lonely.psu choice.
#   Replicate fits store var_newton: svrVar of the replicates refitted by ordinal::clm
#   (Newton, gradTol 1e-11), as svyolr.svyrep.design computes it but with converged refits
#   (svyolr's own polr/BFGS refits stop early: var), and both sets of replicates; and
#   repweights (one column per replicate), scale, rscales, mse.
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
options(survey.lonely.psu = "fail")
data(api)
out <- survey_out
cats <- function(d) {
  d$mealcat <- cut(d$meals, c(0, 25, 50, 75, 100))
  d$row <- seq_len(nrow(d))
  d
}
keep <- c("row", "cds", "dnum", "snum", "stype", "avg.ed", "mobility", "meals", "mealcat",
          "yr.rnd", "enroll", "api00", "pw")
apiclus1 <- cats(apiclus1); apiclus2 <- cats(apiclus2); apistrat <- cats(apistrat)
write.csv(apiclus1[, c(keep, "fpc")], file.path(out, "apiclus1.csv"), row.names = FALSE)
write.csv(apiclus2[, c(keep, "fpc1", "fpc2")], file.path(out, "apiclus2.csv"), row.names = FALSE)
write.csv(apistrat[, c(keep, "fpc")], file.path(out, "apistrat.csv"), row.names = FALSE)

f <- mealcat ~ avg.ed + mobility + stype
entry <- function(fit, design, call) {
  cf <- c(fit$coefficients, fit$zeta)
  v <- vcov(fit)
  list(design = call, formula = deparse(f), names = names(cf), coef = unname(cf),
       var = unname(v), df_residual = fit$df.residual, degf = degf(design))
}
# The linearisation variance with derivatives from numDeriv (Richardson extrapolation), at
# svyolr's estimates: the bread is the Hessian of the weighted negative log-likelihood in
# (slopes, cut-points), the scores the Jacobian of the per-row weighted log-likelihoods, and
# the meat svyrecvar's, as svyolr does (influence functions scores %*% solve(H)).
numderiv_var <- function(fit, ff, design, term) {
  mf <- model.frame(ff, model.frame(design), na.action = na.pass)
  ok <- complete.cases(mf)
  des <- design[ok, ]
  mf <- mf[ok, , drop = FALSE]
  x <- model.matrix(ff, mf)[, -1, drop = FALSE]
  y <- as.integer(model.response(mf))
  wt <- weights(des)
  pc <- ncol(x)
  rowll <- function(par) {
    zeta <- c(-Inf, par[pc + seq_len(length(par) - pc)], Inf)
    eta <- drop(x %*% par[seq_len(pc)])
    wt * log(plogis(zeta[y + 1] - eta) - plogis(zeta[y] - eta))
  }
  par <- c(fit$coefficients, fit$zeta)
  H <- numDeriv::hessian(function(p) -sum(rowll(p)), par)
  S <- numDeriv::jacobian(rowll, par)
  v <- svyrecvar(S %*% solve(H), des$cluster, des$strata, des$fpc, postStrata = des$postStrata)
  labels <- attr(terms(ff), "term.labels")
  assign <- attr(model.matrix(ff, mf), "assign")[-1]
  idx <- which(assign == match(sub("~", "", term), labels))
  b <- par[idx]
  chisq <- drop(b %*% solve(v[idx, idx, drop = FALSE]) %*% b)
  Fstat <- chisq / length(idx)
  list(var = unname(v), hessian = unname(H), term = term, Ftest = Fstat, df = length(idx),
       ddf = fit$df.residual, p = pf(Fstat, length(idx), fit$df.residual, lower.tail = FALSE))
}
refs <- list()
designs <- api_designs
for (name in names(designs)) {
  des <- eval(parse(text = designs[[name]]))
  ff <- if (name == "strat") mealcat ~ avg.ed + mobility + enroll else f
  fit0 <- svyolr(ff, design = des)
  k <- length(fit0$coefficients) + length(fit0$zeta)
  fit <- svyolr(ff, design = des, control = precise(k))
  e0 <- entry(fit0, des, designs[[name]]); e0$formula <- deparse(ff)
  e <- entry(fit, des, designs[[name]]); e$formula <- deparse(ff)
  term <- if (name == "strat") "~enroll" else "~stype"
  tt <- regTermTest(fit, as.formula(term))
  e$regTermTest <- list(term = term, Ftest = drop(tt$Ftest), df = tt$df, ddf = tt$ddf, p = drop(tt$p))
  tt2 <- regTermTest(fit, ~mobility)
  e$regTermTest_mobility <- list(term = "~mobility", Ftest = drop(tt2$Ftest), df = tt2$df,
                                 ddf = tt2$ddf, p = drop(tt2$p))
  lrt <- tryCatch({
    # optim's ndeps must match the reduced model's length: the LRT's fit keeps the default
    fitl <- svyolr(ff, design = des, control = list(reltol = 1e-15, maxit = 1000))
    l <- regTermTest(fitl, as.formula(term), method = "LRT")
    list(term = term, chisq = drop(l$chisq), df = l$df, ddf = l$ddf, p = drop(l$p),
         lambda = l$lambda, mean_weight = mean(weights(des)[-fitl$na.action]),
         deviance_full = fitl$deviance)
  }, error = function(err) NULL)
  e$regTermTest_LRT <- lrt
  e$numderiv <- numderiv_var(fit, ff, des, term)
  refs[[paste0(name, "_default")]] <- e0
  refs[[paste0(name, "_precise")]] <- e
}

# a stratum with one PSU (lonely PSU): apiclus1's districts in three made-up strata, the
# first holding the lowest-numbered district only; one fit per survey.lonely.psu choice
apiclus1$grp <- ifelse(apiclus1$dnum == min(apiclus1$dnum), "A",
                       ifelse(apiclus1$dnum < 500, "B", "C"))
write.csv(apiclus1[, c(keep, "fpc", "grp")], file.path(out, "apiclus1.csv"), row.names = FALSE)
for (lonely in c("remove", "adjust", "certainty", "average")) {
  options(survey.lonely.psu = lonely)
  des <- svydesign(id = ~dnum, strata = ~grp, weights = ~pw, data = apiclus1)
  fit <- svyolr(f, design = des, control = precise(7))
  e <- entry(fit, des, "svydesign(id = ~dnum, strata = ~grp, weights = ~pw, data = apiclus1)")
  e$lonely_psu <- lonely
  refs[[paste0("lonely_", lonely)]] <- e
}
options(survey.lonely.psu = "fail")
refs$lonely_fail_error <- tryCatch({
  svyolr(f, design = svydesign(id = ~dnum, strata = ~grp, weights = ~pw, data = apiclus1))
  "no error"
}, error = function(err) conditionMessage(err))

# replicate designs from dclus1 (JK1, bootstrap) and dstrat (JKn, BRR, Fay)
dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
set.seed(20261126)
reps <- list(
  clus1_JK1 = list(d = dclus1, call = "as.svrepdesign(dclus1, type = 'JK1', compress = FALSE)", f = f),
  clus1_bootstrap = list(d = dclus1, call = "as.svrepdesign(dclus1, type = 'bootstrap', replicates = 50, compress = FALSE)", f = f),
  strat_JKn = list(d = dstrat, call = "as.svrepdesign(dstrat, type = 'JKn', compress = FALSE)", f = mealcat ~ avg.ed + mobility + enroll),
  strat_BRR = list(d = dstrat, call = "as.svrepdesign(dstrat, type = 'BRR', compress = FALSE)", f = mealcat ~ avg.ed + mobility + enroll),
  strat_Fay = list(d = dstrat, call = "as.svrepdesign(dstrat, type = 'Fay', fay.rho = 0.3, compress = FALSE)", f = mealcat ~ avg.ed + mobility + enroll)
)
for (name in names(reps)) {
  r <- reps[[name]]
  dclus1 <- dclus1; dstrat <- dstrat
  rd <- suppressWarnings(eval(parse(text = r$call)))
  fit <- svyolr(r$f, design = rd, control = list(reltol = 1e-15, maxit = 1000),
                return.replicates = TRUE)
  cf <- c(fit$coefficients, fit$zeta)
  # svyolr's refits are polr's BFGS, which stops short of the optimum (most where a
  # coefficient is small, enroll); the same svrVar of replicates converged by clm's Newton:
  df <- model.frame(rd)
  newton <- function(w) {
    d <- df
    d$repw <- w
    m <- ordinal::clm(r$f, data = d, weights = repw,
                      control = ordinal::clm.control(gradTol = 1e-11))
    c(m$beta, m$alpha)
  }
  full <- newton(weights(rd, "sampling"))
  thetas <- t(apply(weights(rd, "analysis"), 2, newton))
  converged <- svrVar(thetas, rd$scale, rd$rscales, mse = rd$mse, coef = full)
  refs[[name]] <- list(design = r$call, formula = deparse(r$f), names = names(cf),
                       coef = unname(cf), var = unname(vcov(fit)),
                       df_residual = fit$df.residual, degf = degf(rd), type = rd$type,
                       repweights = { w <- as.matrix(weights(rd, "analysis")); matrix(as.numeric(w), nrow = nrow(w)) },
                       scale = rd$scale, rscales = rd$rscales, rho = rd$rho,
                       mse = isTRUE(rd$mse), coef_newton = unname(full),
                       var_newton = unname(matrix(converged, nrow = length(full))),
                       svyolr_replicates = unname(fit$replicates),
                       newton_replicates = unname(thetas))
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"), file.path(out, "refs.json"))
