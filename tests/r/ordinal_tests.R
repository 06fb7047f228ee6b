# clm models from R ordinal's own tests and help pages (our own script calling the
# same models; the comment on each case names the ordinal file it comes from).
#
# Run from the repository root (ordinal 2022.11.16, jsonlite), after
# tests/r/make_r_datasets.R has written tests/data/r_datasets/:
#   Rscript tests/r/ordinal_tests.R
# Writes tests/data/reference/ordinal_tests/<case>.json.
#
# Per model: coef (R's coef(fit), aliased = "NA"; scale coefficients named
# "sca.<term>"), se and vcov over the non-aliased parameters, loglik, convergence,
# `aliased` (fit$aliased), warnings, Theta / alpha.mat / tJac, fitted values, and
# where listed nominal_test / scale_test / anova tables and predictions.
suppressMessages({library(ordinal); library(jsonlite)})

source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine", "ordstats/datasets")
soup <- read_dataset("soup", "ordstats/datasets")
housing <- read_dataset("housing", "ordstats/datasets")
rd <- "tests/data/r_datasets"
income <- read_dataset("income", rd)
dat26 <- read_dataset("soup_dat26", rd)
dat26_2 <- read_dataset("dat26_2", rd)
kosmidis <- read_dataset("kosmidis_2x3", rd)
wine_sim <- read_dataset("wine_sim", rd)
wine2_na <- read_dataset("wine2_na", rd)
soup_sim <- read_dataset("soup_sim", rd)
options(contrasts = c("contr.treatment", "contr.poly"))

out_dir <- "tests/data/reference/ordinal_tests"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
pkgs <- c("ordinal", "MASS", "VGAM", "glmnet", "brglm2", "jsonlite", "ucminf", "numDeriv")
package_versions <- c(list(R = R.version.string),
  setNames(lapply(pkgs, function(p) as.character(packageVersion(p))), pkgs))

source("tests/r/json_output.R")  # named(), rows(), write_json()
table_json <- function(tab) list(row_names = I(rownames(tab)),
  columns = lapply(as.list(as.data.frame(tab, check.names = FALSE)), function(x) I(if (is.numeric(x)) as.numeric(x) else as.character(x))))

capture <- function(expr_text) {
  warns <- character()
  val <- tryCatch(withCallingHandlers(eval(parse(text = expr_text), envir = globalenv()),
    warning = function(w) { warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") }),
    error = function(e) e)
  list(value = val, warnings = unique(warns))
}

par_names <- function(fit) {
  c(names(fit$alpha), names(fit$beta), if (length(fit$zeta)) paste0("sca.", names(fit$zeta)))
}

theta_json <- function(Th) {
  if (is.data.frame(Th)) {
    num <- sapply(Th, is.numeric)
    list(rows = rows(as.matrix(Th[, num, drop = FALSE])), colnames = names(Th)[num],
         by = lapply(Th[, !num, drop = FALSE], as.character))
  } else list(rows = rows(as.matrix(Th)), colnames = colnames(Th), by = NULL)
}

n_cases <- 0
case <- function(name, call_text, dataset, source, notes = character(), tests = FALSE,
                 anova_types = FALSE, newdata = NULL, extra_calls = list()) {
  cat(name, "... ")
  r <- capture(call_text)
  if (inherits(r$value, "error")) {
    write_json(list(case = paste0("ordinal_tests_", name), kind = "error", dataset = dataset, source = source,
                    r_call = call_text, package_versions = package_versions, error = conditionMessage(r$value),
                    warnings = I(r$warnings), notes = notes),
               file.path(out_dir, paste0(name, ".json")))
    cat("ERROR", conditionMessage(r$value), "\n"); n_cases <<- n_cases + 1; return(invisible())
  }
  fit <- r$value
  assign("fit", fit, envir = globalenv())
  nm <- par_names(fit)
  cf <- c(fit$alpha, fit$beta, fit$zeta)
  al <- c(fit$aliased$alpha, fit$aliased$beta, fit$aliased$zeta)
  V <- tryCatch(vcov(fit), error = function(e) e)
  Vok <- !inherits(V, "error") && !is.null(V)
  se <- rep(NA_real_, length(cf))
  if (Vok) se[!al] <- sqrt(diag(V))
  out <- list(
    case = paste0("ordinal_tests_", name), set = "ordinal_tests", kind = "fit", dataset = dataset,
    source = source, r_call = call_text, package = "ordinal",
    package_version = as.character(packageVersion("ordinal")), package_versions = package_versions,
    link = fit$link, threshold = fit$threshold,
    n = fit$n, nobs = fit$nobs, loglik = fit$logLik, aic = AIC(fit), bic = BIC(fit), df = fit$edf,
    niter = as.numeric(fit$niter), converged = fit$convergence$code == 0,
    convergence_code = fit$convergence$code,
    convergence_messages = c(fit$convergence$messages, fit$convergence$alg.message),
    warnings = I(r$warnings), max_abs_grad = fit$maxGradient, cond_H = fit$cond.H,
    coef = named(cf, nm), coef_r_names = names(coef(fit)), se = named(se, nm),
    vcov = if (Vok) rows(V) else NULL, vcov_names = if (Vok) nm[!al] else NULL,
    vcov_error = if (inherits(V, "error")) conditionMessage(V) else NULL,
    aliased = lapply(fit$aliased, function(a) as.list(setNames(as.logical(a), names(a)))),
    extra = list(
      Theta = theta_json(fit$Theta),
      alpha_mat = if (!is.null(fit$alpha.mat)) rows(fit$alpha.mat) else NULL,
      alpha_mat_rownames = rownames(fit$alpha.mat), alpha_mat_colnames = colnames(fit$alpha.mat),
      tJac = rows(fit$tJac),
      gradient = as.numeric(fit$gradient),
      fitted_first10 = as.numeric(fitted(fit))[1:min(10, length(fitted(fit)))]
    ),
    notes = c("coef/se: 'NA' marks aliased parameters (R's coef(fit) has NA there); vcov is over the non-aliased ones (vcov_names).",
              "Scale coefficients are 'sca.<term>' here (coef(fit) repeats the location name, see coef_r_names).",
              notes)
  )
  if (tests) {
    for (tn in c("nominal_test", "scale_test")) {
      t <- capture(sprintf("%s(fit)", tn))
      out$extra[[tn]] <- if (inherits(t$value, "error")) list(error = conditionMessage(t$value))
                         else c(table_json(t$value), list(warnings = I(t$warnings)))
    }
  }
  if (anova_types) {
    for (ty in c("I", "II", "III")) {
      t <- capture(sprintf("anova(fit, type = \"%s\")", ty))
      out$extra[[paste0("anova_type_", ty)]] <- if (inherits(t$value, "error")) list(error = conditionMessage(t$value))
                                                 else table_json(t$value)
    }
  }
  if (!is.null(newdata)) {
    nd <- eval(parse(text = newdata), envir = globalenv())
    p <- capture("predict(fit, newdata = nd_tmp, type = \"prob\", se.fit = TRUE, interval = TRUE)")
    assign("nd_tmp", nd, envir = globalenv())
    p <- capture("predict(fit, newdata = nd_tmp, type = \"prob\", se.fit = TRUE, interval = TRUE)")
    cp <- capture("predict(fit, newdata = nd_tmp, type = \"cum.prob\")")
    cl <- capture("predict(fit, newdata = nd_tmp, type = \"class\")")
    out$newdata_call <- newdata
    out$newdata <- lapply(seq_len(nrow(nd)), function(i) lapply(as.list(nd[i, , drop = FALSE]), function(v) if (is.factor(v)) as.character(v) else v))
    if (!inherits(p$value, "error")) {
      out$newdata_prob <- rows(p$value$fit); out$newdata_prob_se <- rows(p$value$se.fit)
      out$newdata_prob_lwr <- rows(p$value$lwr); out$newdata_prob_upr <- rows(p$value$upr)
    } else out$newdata_prob_error <- conditionMessage(p$value)
    if (!inherits(cp$value, "error")) { out$newdata_cumprob_upper <- rows(cp$value$cprob1); out$newdata_cumprob_lower <- rows(cp$value$cprob2) }
    if (!inherits(cl$value, "error")) out$newdata_class <- as.character(cl$value$fit)
    out$newdata_note <- "newdata_cumprob_upper/lower = predict(type = 'cum.prob') cprob1 = P(Y <= y), cprob2 = P(Y <= y-1) for the newdata rows' own response (when newdata has it)"
  }
  for (en in names(extra_calls)) {
    t <- capture(extra_calls[[en]])
    v <- t$value
    out$extra[[en]] <- list(r_call = extra_calls[[en]], warnings = I(t$warnings),
      value = if (inherits(v, "error")) list(error = conditionMessage(v))
              else if (is.data.frame(v) || is.matrix(v)) table_json(v)
              else if (is.numeric(v)) named(v) else v)
  }
  write_json(out, file.path(out_dir, paste0(name, ".json")))
  n_cases <<- n_cases + 1
  cat(sprintf("ll %.8f code %d%s\n", fit$logLik, fit$convergence$code,
              if (length(r$warnings)) paste0(" WARN: ", paste(r$warnings, collapse = " | ")) else ""))
}

nd_wine <- "expand.grid(temp = factor(c('cold', 'warm'), levels = levels(wine$temp)), contact = factor(c('no', 'yes'), levels = levels(wine$contact)))"

## --- man/clm.Rd (help page) ----------------------------------------------------
case("wine_interaction", "clm(rating ~ temp * contact, data = wine)", "wine", "man/clm.Rd",
     tests = TRUE, newdata = nd_wine,
     extra_calls = list(drop1 = "drop1(fit, test = 'Chi')", confint_profile = "confint(fit)"))
for (lk in c("probit", "loglog", "cloglog", "cauchit"))
  case(paste0("wine_interaction_", lk), sprintf("clm(rating ~ temp * contact, data = wine, link = \"%s\")", lk),
       "wine", "man/clm.Rd (fm4.* link comparison)")
case("soup_prodid", "clm(SURENESS ~ PRODID, data = soup)", "soup", "man/clm.Rd (fm.soup)", tests = TRUE)
## --- man/income.Rd -------------------------------------------------------------
for (lk in c("logit", "probit", "cloglog", "loglog", "cauchit"))
  case(paste0("income_", lk), sprintf("clm(income ~ year, data = income, weights = pct, link = \"%s\")", lk),
       "income", "man/income.Rd (link comparison via logLik)")
## --- tests/clm.fit.R -----------------------------------------------------------
case("fit_weights_nom_scale", "clm(rating ~ temp, scale = ~temp, nominal = ~contact, data = wine_sim, weights = u1)",
     "wine_sim", "tests/clm.fit.R (clm.fit with weights = set.seed(1); runif(72))",
     notes = "ordinal's test expects coef c(-0.905224120279548, 1.31043498891987, 3.34235590523008, 4.52389661722693, -3.03954652971192, -1.56922389038976, -1.75662549320839, -1.16845464236365, 2.52988580848393, -0.0261457032829033) (tol 1e-6)")
case("fit_offset_nom_scale", "clm(rating ~ temp + offset(u1), scale = ~temp, nominal = ~contact, data = wine_sim)",
     "wine_sim", "tests/clm.fit.R (clm.fit with offset)")
case("fit_offsets_loc_scale", "clm(rating ~ temp + offset(u1), scale = ~temp + offset(n1), nominal = ~contact, data = wine_sim)",
     "wine_sim", "tests/clm.fit.R (clm.fit with offset and S.offset)",
     notes = "scale offset: log(s_i) = z_i'zeta + n1_i")
## --- tests/test.clm.convergence.R ---------------------------------------------
case("conv_wine2_nom_scale", "clm(rating ~ temp, scale = ~contact, nominal = ~contact, data = wine2_na)",
     "wine2_na", "tests/test.clm.convergence.R",
     notes = "No cold/yes cell: the nominal and scale contact effects are partly aliased with temp; 3 rows have NA rating (dropped, n = 51).")
case("conv_wine2_nom_scale_gradtol12", "clm(rating ~ temp, scale = ~contact, nominal = ~contact, data = wine2_na, control = list(gradTol = 1e-12))",
     "wine2_na", "tests/test.clm.convergence.R")
case("conv_weights", "clm(rating ~ temp + contact, data = wine_sim, weights = wts1234)", "wine_sim",
     "tests/test.clm.convergence.R (wts = set.seed(1234); runif(72, 0, 2))",
     extra_calls = list(convergence_logLik_Error = "convergence(fit)$info$logLik.Error"))
## --- tests/test.clm.Theta.R ----------------------------------------------------
case("theta_nominal_symmetric", "clm(rating ~ temp, nominal = ~contact, data = wine, threshold = \"symmetric\")", "wine", "tests/test.clm.Theta.R")
case("theta_nominal_equidistant", "clm(rating ~ temp, nominal = ~contact, data = wine, threshold = \"equidistant\")", "wine", "tests/test.clm.Theta.R")
case("theta_singular_nominal_temp", "clm(rating ~ contact, nominal = ~temp, data = wine)", "wine", "tests/test.clm.Theta.R ('Singular fit is still ok')")
case("theta_nominal_x", "clm(rating ~ temp, nominal = ~x123, data = wine_sim)", "wine_sim", "tests/test.clm.Theta.R (1 continuous variable)")
case("theta_nominal_poly", "clm(rating ~ temp, nominal = ~poly(x123, 2), data = wine_sim)", "wine_sim", "tests/test.clm.Theta.R (poly)",
     notes = "poly(x123, 2): R's orthogonal polynomial basis computed from x123 on the fitted rows")
case("theta_nominal_contact_x_symmetric", "clm(rating ~ temp, nominal = ~contact + x123, data = wine_sim, threshold = \"symmetric\")", "wine_sim", "tests/test.clm.Theta.R")
case("theta_nominal_interaction_y", "clm(rating ~ temp, nominal = ~contact * x123 + y321, data = wine_sim)", "wine_sim", "tests/test.clm.Theta.R")
case("theta_soup_nominal_prodid_day", "clm(SURENESS ~ 1, nominal = ~PRODID + DAY, data = soup)", "soup", "tests/test.clm.Theta.R")
case("theta_soup_nominal_ordered_prodid", "clm(SURENESS ~ 1, nominal = ~prodid, data = soup_sim)", "soup_sim",
     "tests/test.clm.Theta.R (ordered factor -> contr.poly)", notes = "prodid is an ordered factor: R codes it with contr.poly (.L, .Q, .C, ^4, ^5)")
case("theta_soup_aliased_nominal", "clm(SURENESS ~ PRODID, nominal = ~DAY * GENDER, data = soup, subset = !(DAY == \"2\" & GENDER == \"Female\"))",
     "soup", "tests/test.clm.Theta.R (fm9: nominal interaction aliased by design)",
     notes = "Same Theta and logLik as nominal = ~DAY + GENDER (fm8); the DAY2:GENDERFemale rows are NA in alpha_mat.")
case("theta_soup_weights", "clm(SURENESS ~ 1, nominal = ~SOUPTYPE + DAY, data = soup_sim, weights = wts12345)", "soup_sim", "tests/test.clm.Theta.R (weights)")
case("theta_soup_nominal_interaction_symmetric", "clm(SURENESS ~ 1, nominal = ~SOUPTYPE * DAY, data = soup, threshold = \"symmetric\")", "soup", "tests/test.clm.Theta.R")
case("theta_nominal_no_intercept", "clm(rating ~ temp, nominal = ~contact - 1, data = wine)", "wine", "tests/test.clm.Theta.R (same Theta/logLik as nominal = ~contact)")
## --- tests/testCLM.R -----------------------------------------------------------
case("dat26_scale", "clm(sureness ~ prod, scale = ~prod, data = dat26, weights = wghts, link = \"logit\")", "soup_dat26", "tests/testCLM.R (m1)",
     notes = "ordinal's test expects logLik -2687.74456343981 and coef c(-1.49125702755587, -0.45218462707814, -0.107208315524318, 0.163365282774162, 0.88291347877514, 1.29587762626394, 0.147986162902775)")
for (lk in c("probit", "cloglog", "loglog"))
  case(paste0("dat26_scale_", lk), sprintf("clm(sureness ~ prod, scale = ~prod, data = dat26, weights = wghts, link = \"%s\")", lk), "soup_dat26", "tests/testCLM.R (m2-m4)")
case("dat26_nominal", "clm(sureness ~ 1, nominal = ~prod, data = dat26, weights = wghts)", "soup_dat26", "tests/testCLM.R (mN1)")
case("dat26_scale_symmetric", "clm(sureness ~ prod, scale = ~prod, data = dat26, weights = wghts, threshold = \"symmetric\")", "soup_dat26", "tests/testCLM.R (mT1)")
case("dat26_scale_equidistant", "clm(sureness ~ prod, scale = ~prod, data = dat26, weights = wghts, threshold = \"equidistant\")", "soup_dat26", "tests/testCLM.R (mT2)")
case("housing_nominal_cont", "clm(Sat ~ Infl + Type, nominal = ~Cont, weights = Freq, data = housing)", "housing", "tests/testCLM.R (fm3)")
case("housing_nominal_scale_cont", "clm(Sat ~ Infl + Type, scale = ~Cont, nominal = ~Cont, weights = Freq, data = housing)", "housing", "tests/testCLM.R (fm4)")
case("dat26_2_illdefined", "clm(sureness ~ prod, ~prod, data = dat26_2)", "dat26_2", "tests/testCLM.R (ill-defined vcov)")
case("soup_offset_scale_subset", "clm(SURENESS ~ PROD + offset(offs290980), scale = ~PROD, data = soup_sim, subset = 1:100)", "soup_sim", "tests/testCLM.R (offset)")
case("soup_offset_both_subset", "clm(SURENESS ~ PROD + offset(offs290980), scale = ~PROD + offset(offs290980), data = soup_sim, subset = 1:100)", "soup_sim", "tests/testCLM.R (offset in location and scale)")
case("kosmidis_scale", "clm(response ~ x, scale = ~x, weights = freq, data = kosmidis, control = clm.control(grtol = 1e-10, convTol = 1e-10))",
     "kosmidis_2x3", "tests/testCLM.R (Kosmidis bug report)",
     notes = "Saturated model: loglik must be sum(freq*log(freq/totals)) = -29.97808; ordinal expects coef c(-2.48490664104217, 2.48490665578163, 2.48490659188594, 3.54758796387530)")
## --- tests/nominal.test.R -------------------------------------------------------
case("nt_wine_nominal_contact", "clm(rating ~ temp * contact, data = wine, nominal = ~contact)", "wine", "tests/nominal.test.R",
     notes = "temp:contact and the nominal contact effect: aliasing across location/nominal blocks")
case("nt_wine_weights", "clm(rating ~ temp * contact, data = wine_sim, weights = wt123454321)", "wine_sim", "tests/nominal.test.R (weights; the test misspells 'weigths', so R ignored them there -- here they are used)", tests = TRUE)
case("nt_wine_judge", "clm(rating ~ judge + temp + contact, data = wine)", "wine", "tests/nominal.test.R (no nominal test for judge: not identifiable)", tests = TRUE)
case("nt_wine_nominal_contact_x", "clm(rating ~ temp, nominal = ~contact * x123454321, data = wine_sim)", "wine_sim", "tests/nominal.test.R (continuous variable)", tests = TRUE)
case("nt_wine_poly", "clm(rating ~ temp + poly(x123454321, 2), nominal = ~contact, data = wine_sim)", "wine_sim", "tests/nominal.test.R (poly)", tests = TRUE)
case("nt_soup_combination", "clm(SURENESS ~ PRODID + DAY + SOUPTYPE + SOUPFREQ, scale = ~PROD, nominal = ~DAY * GENDER, data = soup)",
     "soup", "tests/nominal.test.R (another combination)", tests = TRUE)
case("nt_wine_nominal_all", "clm(rating ~ temp + contact, nominal = ~temp + contact, data = wine)", "wine", "tests/nominal.test.R (nominal_test gives an error)", tests = TRUE)
case("nt_wine_scale_all", "clm(rating ~ temp + contact, scale = ~temp + contact, data = wine)", "wine", "tests/nominal.test.R (scale_test gives an error)", tests = TRUE)
## --- scale_test with PRODID / interaction scale terms (brief) -------------------
case("soup_prodid_scale_prodid", "clm(SURENESS ~ PRODID, scale = ~PRODID, data = soup)", "soup", "scale_test of man/clm.Rd fm.soup refitted with scale = ~PRODID", tests = TRUE)
case("wine_scale_temp_contact_interaction", "clm(rating ~ temp + contact, scale = ~temp:contact, data = wine)", "wine",
     "scale = ~temp:contact (interaction-only scale term)", tests = TRUE)
## --- tests/test.clm.single.anova.R ----------------------------------------------
case("anova_scale_interaction", "clm(rating ~ temp * contact, scale = ~contact, data = wine)", "wine", "tests/test.clm.single.anova.R, man/clm.anova.Rd", anova_types = TRUE)
case("anova_soup_prodid_day_aliased", "clm(SURENESS ~ PRODID * DAY, data = soup)", "soup", "tests/test.clm.single.anova.R (aliased coefficients)", anova_types = TRUE)
case("anova_nominal_scale_aliased", "clm(rating ~ temp * contact, nominal = ~contact, scale = ~contact, data = wine)", "wine",
     "tests/test.clm.single.anova.R (model with all NA in vcov(object))", anova_types = TRUE,
     notes = "Aliasing across location, nominal and scale blocks; ordinal's test asserts all(is.na(vcov(fm))) and that anova() errors.")
case("anova_soup_contrasts", "clm(SURENESS ~ PRODID * SOUPFREQ, data = soup, contrasts = list(SOUPFREQ = \"contr.sum\", PRODID = \"contr.SAS\"))",
     "soup", "tests/test.clm.single.anova.R (type III tests independent of contrasts)", anova_types = TRUE)
## --- tests/test.clm.predict.R -----------------------------------------------------
case("pred_rank_deficient", "clm(rating ~ temp * contact, subset = !(temp == \"cold\" & contact == \"yes\"), data = wine)", "wine",
     "tests/test.clm.predict.R (wine1.clm, rank deficient)",
     newdata = "expand.grid(temp = factor(c('cold', 'warm'), levels = levels(wine$temp)), contact = factor(c('no', 'yes'), levels = levels(wine$contact)))[-3, ]")
case("pred_sum_contrasts", "clm(rating ~ temp * contact, data = wine, contrasts = list(temp = \"contr.sum\"))", "wine",
     "tests/test.clm.predict.R (mixture of sum and treatment contrasts)", newdata = nd_wine)
case("pred_poly", "clm(rating ~ temp + poly(xr1, 2), data = wine_sim)", "wine_sim", "tests/test.clm.predict.R (poly(x, 2) vs x + I(x^2))",
     newdata = "expand.grid(temp = factor(c('cold', 'warm'), levels = levels(wine$temp)), xr1 = seq(-1, 7, 3))")
case("pred_quadratic", "clm(rating ~ temp + xr1 + I(xr1^2), data = wine_sim)", "wine_sim", "tests/test.clm.predict.R (same fit as pred_poly)",
     newdata = "expand.grid(temp = factor(c('cold', 'warm'), levels = levels(wine$temp)), xr1 = seq(-1, 7, 3))")
case("pred_nominal_scale", "clm(rating ~ temp, scale = ~contact, nominal = ~contact, data = wine)", "wine", "tests/test.clm.model.matrix.R model, predictions", newdata = nd_wine)
## --- tests/testthat/test-clm.R ------------------------------------------------------
case("no_intercept_formula", "clm(rating ~ -1 + temp, data = wine)", "wine", "tests/testthat/test-clm.R (warning: an intercept is needed and assumed)")
case("offset_only_location_nominal", "clm(rating ~ offset(u1), nominal = ~contact, data = wine_sim)", "wine_sim", "tests/testthat/test-clm.R (offset is the only location term)")
case("scale_offset_only", "clm(rating ~ contact + temp, scale = ~offset(u1), data = wine_sim)", "wine_sim", "tests/testthat/test-clm.R (offset is the only scale term)")
case("large_eigenvalue", "clm(rating ~ temp2 + contact, data = wine_sim)", "wine_sim", "tests/testthat/test-clm.R (temp2 = 1e4 * temp: 'very large eigenvalue')")
## --- tests/test.sign.R, tests/test0weights.R ---------------------------------------
case("sign_location_positive", "clm(rating ~ temp + contact, data = wine, sign.location = \"positive\")", "wine", "tests/test.sign.R",
     notes = "sign.location = 'positive': P(Y <= j) = F(theta_j + x'beta), so beta = -beta(default)")
case("sign_nominal_negative", "clm(rating ~ temp, nominal = ~contact, data = wine, sign.nominal = \"negative\")", "wine", "tests/test.sign.R",
     notes = "sign.nominal = 'negative': nominal effects enter as theta_j - w'gamma_j (alpha[5:8] = -default)")
case("zero_weight_one", "clm(rating ~ contact + temp, data = wine, weights = c(0, rep(1, 71)))", "wine", "tests/test0weights.R (one zero weight: n = 72, nobs = 71)")
case("zero_weight_category", "clm(rating ~ contact + temp, data = wine, weights = as.numeric(rating != \"2\"))", "wine",
     "tests/test0weights.R (all of category 2 zero-weighted: nobs = 50)",
     notes = "Category 2 has zero total weight: R keeps all 4 thresholds in the output; see convergence/aliased for how the empty category is handled.")
case("zero_weight_nominal", "clm(rating ~ temp, nominal = ~contact, data = wine, weights = as.numeric(rating != \"2\"))", "wine", "tests/test0weights.R (fm2c)")
cat(n_cases, "cases written to", out_dir, "\n")
