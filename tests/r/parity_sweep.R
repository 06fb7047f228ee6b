# R parity sweep: clm, clmm, polr and vglm on real data sets the other references
# do not use, with what an R user does by default (ordered factor predictors coded
# with contr.poly, NA rows dropped by na.omit, zero and frequency weights, subset=,
# transforms in the formula, intercept removal, links, threshold structures,
# nominal and scale effects, polr's Hessian SEs, VGAM's families, one random
# intercept).
#
# Writes the data sets to tests/data/r_datasets/<name>.csv + .levels.json (the
# format of make_r_datasets.R), re-reads them, fits, and writes one JSON per case
# to tests/data/reference/parity/<case>.json with the exact R call (`r_call`).
#
# Run from the repository root:  Rscript tests/r/parity_sweep.R
suppressMessages({
  library(numDeriv)
  library(jsonlite)
  library(ordinal)
  library(MASS)
  library(VGAM)
})

data_dir <- "tests/data/r_datasets"
out_dir <- "tests/data/reference/parity"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

source("tests/r/write_dataset.R")

## ---- data sets ------------------------------------------------------------------

# VGAM::pneumo as one row per (exposure time, severity) with the count as weight
pn <- VGAM::pneumo
pneumo <- data.frame(
  exposure.time = rep(pn$exposure.time, 3),
  severity = factor(rep(c("normal", "mild", "severe"), each = nrow(pn)),
                    levels = c("normal", "mild", "severe"), ordered = TRUE),
  count = c(pn$normal, pn$mild, pn$severe))
write_dataset(pneumo, dir = data_dir, "pneumo", "VGAM::pneumo",
  "Pneumoconiosis of coalminers: counts by exposure time (years) and severity", 
  "stacked: one row per exposure.time x severity, count = the cell count (some 0)",
  "severity", "count")

# MASS::survey with the ordinal questions ordered (R stores them as unordered factors)
sv <- MASS::survey
sv$Exer <- factor(sv$Exer, levels = c("None", "Some", "Freq"), ordered = TRUE)
sv$Smoke <- factor(sv$Smoke, levels = c("Never", "Occas", "Regul", "Heavy"), ordered = TRUE)
write_dataset(sv, dir = data_dir, "survey_students", "MASS::survey",
  "237 statistics students (Adelaide): exercise, smoking, sex, age, pulse, ... with NAs",
  "Exer ordered None < Some < Freq; Smoke ordered Never < Occas < Regul < Heavy", "Exer")

# datasets::esoph as it is (agegp, alcgp, tobgp are ordered factors; ncontrols has 0s)
write_dataset(esoph, dir = data_dir, "esoph", "datasets::esoph",
  "Oesophageal cancer case-control study (Ille-et-Vilaine): counts by age, alcohol, tobacco",
  NULL, "alcgp", "ncontrols")

# datasets::warpbreaks with tension as an ordered response
wb <- warpbreaks
wb$tension <- factor(wb$tension, levels = c("L", "M", "H"), ordered = TRUE)
write_dataset(wb, dir = data_dir, "warpbreaks", "datasets::warpbreaks",
  "Breaks per loom by wool type and tension", "tension ordered L < M < H", "tension")

# MASS::Cars93 (a few columns) with AirBags ordered
cars <- MASS::Cars93[, c("Manufacturer", "Type", "Price", "MPG.city", "AirBags", "DriveTrain",
                         "Horsepower", "Origin")]
cars$AirBags <- factor(cars$AirBags, levels = c("None", "Driver only", "Driver & Passenger"),
                       ordered = TRUE)
cars$Manufacturer <- factor(as.character(cars$Manufacturer))
write_dataset(cars, dir = data_dir, "cars93", "MASS::Cars93",
  "93 cars of 1993: price, fuel use, airbags, ...", "AirBags ordered None < Driver only < Driver & Passenger; 8 columns",
  "AirBags")

# datasets::mtcars with carb ordered
mt <- mtcars
mt$carb <- factor(mt$carb, ordered = TRUE)
mt$cyl <- factor(mt$cyl, ordered = TRUE)
write_dataset(mt, dir = data_dir, "mtcars", "datasets::mtcars", "Motor Trend cars 1974",
  "carb and cyl ordered factors (levels in numeric order)", "carb")

# MASS::housing with Infl an ordered factor, and a copy of it with a level no row has
hs <- MASS::housing
hs$Infl <- factor(hs$Infl, levels = c("Low", "Medium", "High"), ordered = TRUE)
hs$Infl4 <- factor(as.character(hs$Infl), levels = c("Low", "Medium", "High", "VeryHigh"), ordered = TRUE)
write_dataset(hs, dir = data_dir, "housing_ordinf", "MASS::housing",
  "Copenhagen housing satisfaction (counts in Freq)",
  "Infl ordered Low < Medium < High; Infl4 = Infl with an unused fourth level VeryHigh",
  "Sat", "Freq")

read_sweep_datasets()

## ---- serialising ------------------------------------------------------------------

num <- function(x) {
  x <- unclass(x)
  out <- lapply(x, function(v) if (is.na(v)) "NA" else if (is.infinite(v)) if (v > 0) "Inf" else "-Inf" else v)
  if (!is.null(names(x))) names(out) <- names(x)
  out
}

run <- function(call_text) {
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text), envir = globalenv()),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  # distinct messages (clmm repeats its inner-loop warnings with the iteration number)
  list(fit = fit, warnings = I(unique(sub("\n.*", "", warns))))
}

newdata_rows <- function(d, n = 6) {
  rows <- seq_len(nrow(d))
  rows[seq_len(min(n, nrow(d)))]
}

write_case <- function(case, out) {
  writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA, null = "null",
                    na = "string"),
             file.path(out_dir, paste0(case, ".json")))
}

base_record <- function(case, call_text, dataset, package, r) {
  list(case = case, kind = "fit", dataset = dataset, r_call = call_text, package = package,
       package_version = as.character(packageVersion(package)), warnings = r$warnings)
}

clm_case <- function(case, call_text, dataset, rows = NULL, notes = NULL) {
  r <- run(call_text)
  fit <- r$fit
  out <- base_record(case, call_text, dataset, "ordinal", r)
  # clm's coef() names scale effects like location ones: call them sca.<term> (as confint does)
  cf <- coef(fit)
  nz <- length(fit$zeta)
  if (nz) names(cf)[length(cf) - rev(seq_len(nz)) + 1] <- paste0("sca.", names(fit$zeta))
  se <- sqrt(diag(vcov(fit)))
  names(se) <- names(cf)[!is.na(cf)]
  out <- c(out, list(
    link = fit$link, threshold = fit$threshold, n = fit$n, nobs = nobs(fit),
    loglik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"),
    convergence_code = fit$convergence$code, max_abs_grad = max(abs(fit$gradient)),
    coef = num(cf), se = num(se), aliased = I(names(cf)[is.na(cf)]),
    fitted = num(unname(head(fit$fitted.values, 10))), notes = notes))
  if (fit$link == "cauchit") out$cauchit_exact <- cauchit_exact(fit)
  if (!is.null(rows)) {
    d <- get(dataset)
    nd <- d[rows, setdiff(names(d), all.vars(fit$formula)[1]), drop = FALSE]
    p <- predict(fit, newdata = nd, type = "prob", se.fit = TRUE)
    out$newdata_rows <- rows
    out$newdata_prob <- unname(p$fit)
    out$newdata_prob_se <- unname(p$se.fit)
  }
  write_case(case, out)
}

polr_case <- function(case, call_text, dataset, notes = NULL) {
  r <- run(call_text)
  fit <- r$fit
  out <- base_record(case, call_text, dataset, "MASS", r)
  vc <- vcov(fit)
  est <- c(fit$zeta, coef(fit))
  out <- c(out, list(method = fit$method, n = fit$n, nobs = fit$nobs,
                     loglik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"),
                     convergence_code = fit$convergence, niter = num(fit$niter),
                     coef = num(est), se = num(sqrt(diag(vc))[names(est)]),
                     fitted = num(unname(head(fit$fitted.values, 5))), notes = notes))
  write_case(case, out)
}

vglm_case <- function(case, call_text, dataset, notes = NULL) {
  r <- run(call_text)
  fit <- r$fit
  out <- base_record(case, call_text, dataset, "VGAM", r)
  out <- c(out, list(n = nrow(fit@x), loglik = as.numeric(logLik(fit)),
                     coef = num(coef(fit)), se = num(sqrt(diag(vcov(fit)))),
                     niter = fit@iter, notes = notes))
  write_case(case, out)
}

# the independent exact Laplace optimum of tests/r/clmm_indep.R (inner modes to 1e-13,
# Newton-polished from R's fit, numDeriv Hessian): the function definitions of
# clmm_extra.R, without running its cases
source("tests/r/clmm_indep.R")
for (e in parse("tests/r/clmm_extra.R")) {
  if (is.call(e) && identical(e[[1]], as.name("<-")) && is.call(e[[3]]) &&
      identical(e[[3]][[1]], as.name("function"))) eval(e, globalenv())
}
suppressMessages(library(numDeriv))

clmm_case <- function(case, call_text, dataset, notes = NULL, indep = FALSE) {
  r <- run(call_text)
  fit <- r$fit
  out <- base_record(case, call_text, dataset, "ordinal", r)
  out <- c(out, list(link = fit$link, threshold = fit$threshold, n = fit$dims$n,
                     nobs = nobs(fit), loglik = as.numeric(logLik(fit)),
                     convergence_code = fit$optRes$convergence,
                     max_abs_grad = max(abs(fit$gradient)),
                     gradient = num(unname(fit$gradient)),  # of -logLik, in vcov's order
                     coef = num(coef(fit)), se = num(sqrt(diag(vcov(fit)))),
                     random_sd = num(sapply(VarCorr(fit), function(v) attr(v, "stddev"))),
                     notes = notes))
  if (indep) out$independent <- independent(fit, fit, 1)
  write_case(case, out)
}

# clmm's default inner tolerance (the conditional modes' gradient, gradTol = 1e-4) leaves
# its Laplace log-likelihood up to ~2e-5 relative below the optimum: each clmm case has a
# twin with gradTol = 1e-8, which reaches it
POLR_DEFAULT <- "polr's optim(BFGS) stops at its default reltol (~1.5e-8 of the log-likelihood): estimates up to ~1e-4 relative from the optimum; compare the _tight twin (reltol = 1e-14)"
CLMM_INNER <- "clmm's default inner gradTol = 1e-4 stops the conditional modes early; compare the _tight twin"

## ---- cases ------------------------------------------------------------------------

# housing: an ordered factor predictor (contr.poly), with an unused level, without the
# intercept (full indicators), in an interaction
clm_case("clm_housing_ordered_infl", "clm(Sat ~ Infl + Type + Cont, data = housing_ordinf, weights = Freq)",
         "housing_ordinf", rows = c(1, 4, 7, 40, 72))
clm_case("clm_housing_unused_level", "clm(Sat ~ Infl4 + Type + Cont, data = housing_ordinf, weights = Freq)",
         "housing_ordinf", notes = "model.frame drops the unused level VeryHigh: contr.poly(3), as for Infl")
clm_case("clm_housing_ordered_no_intercept", "clm(Sat ~ 0 + Infl + Type, data = housing_ordinf, weights = Freq)",
         "housing_ordinf")
clm_case("clm_housing_ordered_interaction", "clm(Sat ~ Infl * Cont, data = housing_ordinf, weights = Freq)",
         "housing_ordinf", rows = c(1, 4, 7, 40, 72))
clm_case("clm_housing_ordered_nominal", "clm(Sat ~ Type, nominal = ~ Infl, data = housing_ordinf, weights = Freq)",
         "housing_ordinf")
clm_case("clm_housing_ordered_treatment",
         "clm(Sat ~ Infl + Type + Cont, data = housing_ordinf, weights = Freq, contrasts = list(Infl = \"contr.treatment\"))",
         "housing_ordinf")
clmm_case("clmm_housing_ordered_infl", "clmm(Sat ~ Infl + Cont + (1 | Type), data = housing_ordinf, weights = Freq)",
          "housing_ordinf", notes = CLMM_INNER)
clmm_case("clmm_housing_ordered_infl_tight",
          "clmm(Sat ~ Infl + Cont + (1 | Type), data = housing_ordinf, weights = Freq, control = clmm.control(gradTol = 1e-8))",
          "housing_ordinf", indep = TRUE)

# pneumo: a transform in the formula, zero weights, every standard link
# clm's cauchit puts its outer thresholds at -1e5/+1e5, not -Inf/Inf (README of the
# references): the exact MLE from our own log-likelihood of clm's model, nlminb to
# rel.tol 1e-14 from clm's estimates (zero-weight rows left out), SEs from numDeriv's
# Richardson Hessian
cauchit_exact <- function(fit) {
  w <- fit$model[["(weights)"]]
  if (is.null(w)) w <- rep(1, length(fit$y))
  keep <- w > 0
  X <- model.matrix(fit)$X[keep, -1, drop = FALSE]
  y <- as.integer(fit$y)[keep]
  w <- w[keep]
  nt <- length(fit$alpha)
  nll <- function(p) {
    theta <- c(-Inf, p[seq_len(nt)], Inf)
    eta <- drop(X %*% p[-seq_len(nt)])
    v <- -sum(w * log(pcauchy(theta[y + 1] - eta) - pcauchy(theta[y] - eta)))
    if (is.finite(v)) v else Inf
  }
  opt <- nlminb(coef(fit), nll, control = list(rel.tol = 1e-14, eval.max = 1000, iter.max = 1000))
  # small steps: numDeriv's default (10% of each value) crosses the adjacent threshold
  H <- numDeriv::hessian(nll, opt$par, method.args = list(d = 1e-4, eps = 1e-6, r = 4))
  list(coef = num(setNames(opt$par, names(coef(fit)))),
       se = num(setNames(sqrt(diag(solve(H))), names(coef(fit)))), loglik = -opt$objective,
       max_abs_grad = max(abs(numDeriv::grad(nll, opt$par))))
}

for (lk in c("logit", "probit", "cloglog", "loglog", "cauchit")) {
  clm_case(paste0("clm_pneumo_", lk),
           sprintf('clm(severity ~ log(exposure.time), data = pneumo, weights = count, link = "%s")', lk),
           "pneumo", rows = c(1, 9, 17, 24))
}
clm_case("clm_pneumo_equidistant",
         'clm(severity ~ log(exposure.time), data = pneumo, weights = count, threshold = "equidistant")',
         "pneumo")
clm_case("clm_pneumo_nominal",
         "clm(severity ~ 1, nominal = ~ log(exposure.time), data = pneumo, weights = count)",
         "pneumo")
clm_case("clm_pneumo_scale",
         "clm(severity ~ log(exposure.time), scale = ~ log(exposure.time), data = pneumo, weights = count)",
         "pneumo")
polr_case("polr_pneumo",
          "polr(severity ~ log(exposure.time), data = pneumo, weights = count, Hess = TRUE)",
          "pneumo", notes = POLR_DEFAULT)
polr_case("polr_pneumo_tight",
          "polr(severity ~ log(exposure.time), data = pneumo, weights = count, Hess = TRUE, control = list(reltol = 1e-14))",
          "pneumo")
ctl <- "control = vglm.control(epsilon = 1e-13, maxit = 100)"
for (fam in c("cumulative", "acat", "sratio", "cratio")) {
  for (par in c("TRUE", "FALSE")) {
    vglm_case(sprintf("vglm_pneumo_%s_%s", fam, if (par == "TRUE") "parallel" else "nonparallel"),
              sprintf("vglm(severity ~ log(exposure.time), family = %s(parallel = %s), data = subset(pneumo, count > 0), weights = count, %s)",
                      fam, par, ctl), "pneumo",
              notes = "VGAM fails on zero weights ('missing value where TRUE/FALSE needed'): the zero-count rows are left out")
  }
}
vglm_case("vglm_pneumo_cumulative_reverse",
          sprintf("vglm(severity ~ log(exposure.time), family = cumulative(parallel = TRUE, reverse = TRUE), data = subset(pneumo, count > 0), weights = count, %s)", ctl),
          "pneumo")

# survey: NA rows (na.omit), an ordered factor predictor, interactions, subset, -1
clm_case("clm_survey_smoke_ordered", "clm(Exer ~ Sex + Smoke + Pulse, data = survey_students)",
         "survey_students", rows = c(1, 2, 3, 5, 6))
clm_case("clm_survey_interaction_probit",
         'clm(Exer ~ Sex * Age + Smoke, data = survey_students, link = "probit")', "survey_students")
clm_case("clm_survey_smoke_response", "clm(Smoke ~ Exer + Sex + Age, data = survey_students)",
         "survey_students", rows = c(1, 2, 5))
clm_case("clm_survey_smoke_symmetric",
         'clm(Smoke ~ Exer + Sex, data = survey_students, threshold = "symmetric")', "survey_students")
clm_case("clm_survey_smoke_equidistant",
         'clm(Smoke ~ Exer + Sex, data = survey_students, threshold = "equidistant", link = "cloglog")',
         "survey_students")
clm_case("clm_survey_nominal_scale",
         "clm(Exer ~ Age + Smoke, nominal = ~ Sex, scale = ~ Smoke, data = survey_students)",
         "survey_students")
clm_case("clm_survey_subset",
         'clm(Exer ~ Smoke + Age, data = survey_students, subset = Sex == "Female")', "survey_students")
clm_case("clm_survey_no_intercept", "clm(Exer ~ 0 + Smoke + Sex, data = survey_students)",
         "survey_students", notes = "clm warns 'an intercept is needed and assumed'; the full indicator coding has one column aliased with the thresholds (NA)")
clm_case("clm_survey_squared", "clm(Exer ~ Age + I(Age^2) + Sex, data = survey_students)", "survey_students")
clm_case("clm_survey_poly", "clm(Exer ~ poly(Age, 2) + Sex, data = survey_students)", "survey_students",
         notes = "model.frame evaluates poly(Age, 2) on all 237 rows, then na.omit drops the row with Sex NA")
clm_case("clm_survey_scale_x", "clm(Exer ~ scale(Age) + Pulse, data = survey_students)", "survey_students",
         notes = "model.frame evaluates scale(Age) on all 237 rows, then na.omit drops the 45 rows with Pulse NA")
clm_case("clm_survey_offset", "clm(Exer ~ Sex + offset(Age / 10), data = survey_students)", "survey_students")
polr_case("polr_survey", "polr(Exer ~ Sex + Smoke + Pulse, data = survey_students, Hess = TRUE)",
          "survey_students", notes = POLR_DEFAULT)
polr_case("polr_survey_tight",
          "polr(Exer ~ Sex + Smoke + Pulse, data = survey_students, Hess = TRUE, control = list(reltol = 1e-14))",
          "survey_students")

# esoph: ordered factor predictors (6 and 4 levels), weights with zeros
clm_case("clm_esoph_alcohol", "clm(alcgp ~ agegp + tobgp, data = esoph_d, weights = ncontrols)",
         "esoph_d", rows = c(1, 20, 45, 88))
clm_case("clm_esoph_tobacco_cloglog",
         'clm(tobgp ~ agegp, data = esoph_d, weights = ncases, link = "cloglog")', "esoph_d")
clm_case("clm_esoph_interaction", "clm(alcgp ~ agegp + tobgp:ncases, data = esoph_d, weights = ncontrols)",
         "esoph_d")
polr_case("polr_esoph", "polr(alcgp ~ agegp + tobgp, data = esoph_d, weights = ncontrols, Hess = TRUE, control = list(reltol = 1e-14))",
          "esoph_d")
vglm_case("vglm_esoph_acat",
          sprintf("vglm(alcgp ~ tobgp, family = acat(parallel = TRUE), data = subset(esoph_d, ncontrols > 0), weights = ncontrols, %s)", ctl),
          "esoph_d")

# warpbreaks: orthogonal polynomials, log, interaction with a factor
clm_case("clm_warpbreaks_poly", "clm(tension ~ poly(breaks, 2) + wool, data = warpbreaks_d)", "warpbreaks_d")
clm_case("clm_warpbreaks_log_interaction",
         'clm(tension ~ wool * log(breaks), data = warpbreaks_d, link = "probit")', "warpbreaks_d",
         rows = c(1, 30, 54))

# Cars93: log, scale effect, polr, a random intercept
clm_case("clm_cars93", "clm(AirBags ~ Price + Origin + log(Horsepower), data = cars93)", "cars93",
         rows = c(1, 2, 50))
clm_case("clm_cars93_scale", "clm(AirBags ~ Price + Origin, scale = ~ Origin, data = cars93)", "cars93")
polr_case("polr_cars93", "polr(AirBags ~ Price + Origin + MPG.city, data = cars93, Hess = TRUE)", "cars93",
          notes = POLR_DEFAULT)
polr_case("polr_cars93_tight",
          "polr(AirBags ~ Price + Origin + MPG.city, data = cars93, Hess = TRUE, control = list(reltol = 1e-14))",
          "cars93")
clmm_case("clmm_cars93", "clmm(AirBags ~ Price + Origin + (1 | Manufacturer), data = cars93)", "cars93",
          notes = CLMM_INNER)
clmm_case("clmm_cars93_tight",
          "clmm(AirBags ~ Price + Origin + (1 | Manufacturer), data = cars93, control = clmm.control(gradTol = 1e-8))",
          "cars93", indep = TRUE)

# mtcars: an ordered factor with numeric labels as predictor
clm_case("clm_mtcars_carb", "clm(carb ~ hp + am, data = mtcars_d)", "mtcars_d")
clm_case("clm_mtcars_cyl_ordered", 'clm(carb ~ cyl + wt, data = mtcars_d, link = "probit")', "mtcars_d")

# soup and income with other formulas
clm_case("clm_soup_three_factors", 'clm(SURENESS ~ PROD + GENDER + AGEGROUP, data = soup, link = "loglog")', "soup")
clm_case("clm_soup_symmetric_scale",
         'clm(SURENESS ~ PROD, scale = ~ GENDER, data = soup, threshold = "symmetric")', "soup")
clmm_case("clmm_soup_soupfreq", "clmm(SURENESS ~ PROD + SOUPFREQ + (1 | RESP), data = soup)", "soup",
          notes = CLMM_INNER)
clmm_case("clmm_soup_soupfreq_tight",
          "clmm(SURENESS ~ PROD + SOUPFREQ + (1 | RESP), data = soup, control = clmm.control(gradTol = 1e-8))",
          "soup", indep = TRUE)
clm_case("clm_income_probit_equidistant",
         'clm(income ~ year, data = income, weights = pct, link = "probit", threshold = "equidistant")',
         "income")
vglm_case("vglm_income_sratio",
          sprintf("vglm(income ~ year, family = sratio(parallel = TRUE), data = income, weights = pct, %s)", ctl),
          "income")
vglm_case("vglm_income_cratio_nonparallel",
          sprintf("vglm(income ~ year, family = cratio(parallel = FALSE), data = income, weights = pct, %s)", ctl),
          "income")
cat("wrote", length(list.files(out_dir)), "cases to", out_dir, "\n")
