# R's results (not only the fits) for a representative subset of the parity-sweep cases
# (tests/r/parity_sweep.R): predictions on new rows, including factor combinations and
# values the data do not have (prob with se.fit and interval, cum.prob,
# linear.predictor, class), profile confidence intervals, anova() of a nested model,
# drop1(test = "Chi"), add1(test = "Chi") for three, nominal_test(), scale_test(), summary's cond.H, logLik df, AIC
# and BIC; for polr the predicted probabilities and vcov.
#
# Reads the vendored data sets (tests/data/r_datasets/*.csv), writes one JSON per case
# to tests/data/r/parity_results/<case>.json with the exact R calls. The case names
# are those of tests/data/reference/parity (tests/test_parity_results.py fits them with
# the spellings of tests/test_parity_sweep.py).
#
# Run from the repository root:  Rscript tests/r/parity_results.R
suppressMessages({
  library(jsonlite)
  library(ordinal)
  library(MASS)
})

data_dir <- "tests/data/r_datasets"
out_dir <- "tests/data/r/parity_results"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

source("tests/r/write_dataset.R")  # read_sweep_datasets()
read_sweep_datasets()

source("tests/r/result_helpers.R")  # num(), quiet(), table_of(), records()

clm_results <- function(case, call_text, small_text, newdata, drop = TRUE, add = NULL) {
  fit <- eval(parse(text = call_text))
  small <- eval(parse(text = small_text))
  nd <- newdata
  pr <- predict(fit, newdata = nd, type = "prob", se.fit = TRUE, interval = TRUE)
  cp <- predict(fit, newdata = nd, type = "cum.prob")
  lp <- predict(fit, newdata = nd, type = "linear.predictor")
  cl <- predict(fit, newdata = nd, type = "class")
  ci <- quiet(confint(fit, type = "profile"))
  av <- anova(small, fit)
  out <- list(
    case = case, r_call = call_text, small_call = small_text,
    ordinal_version = as.character(packageVersion("ordinal")),
    newdata = records(nd),
    prob = num(pr$fit), prob_se = num(pr$se.fit), prob_lwr = num(pr$lwr), prob_upr = num(pr$upr),
    cumprob = num(cp$cprob1), eta1 = num(lp$eta1), class = as.character(cl$fit),
    confint = if (is.null(ci)) NULL else list(names = rownames(ci), lower = num(unname(ci[, 1])),
                                               upper = num(unname(ci[, 2]))),
    anova = list(loglik = num(av$logLik), lr = num(av$LR.stat), df = num(av$df),
                 p = num(av$`Pr(>Chisq)`)),
    drop1 = if (drop) table_of(quiet(drop1(fit, test = "Chi"))) else NULL,
    add1_scope = add,
    add1 = if (is.null(add)) NULL else table_of(add1(fit, scope = as.formula(add), test = "Chi")),
    nominal_test = table_of(quiet(nominal_test(fit))),
    scale_test = table_of(quiet(scale_test(fit))),
    cond_H = summary(fit)$info$cond.H, cond_H_num = max(eigen(fit$Hessian, only.values = TRUE)$values) /
      min(eigen(fit$Hessian, only.values = TRUE)$values),
    loglik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"), aic = AIC(fit), bic = BIC(fit),
    nobs = nobs(fit))
  writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA, null = "null", na = "string"),
             file.path(out_dir, paste0(case, ".json")))
}

polr_results <- function(case, call_text, newdata) {
  fit <- eval(parse(text = call_text))
  out <- list(case = case, r_call = call_text, mass_version = as.character(packageVersion("MASS")),
              newdata = records(newdata),
              prob = num(unname(predict(fit, newdata = newdata, type = "probs"))),
              class = as.character(predict(fit, newdata = newdata, type = "class")),
              vcov_names = colnames(vcov(fit)), vcov = num(unname(vcov(fit))),
              loglik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"), aic = AIC(fit),
              bic = BIC(fit), nobs = nobs(fit))
  writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA, null = "null", na = "string"),
             file.path(out_dir, paste0(case, ".json")))
}

## ---- new rows: combinations and values the data lack ----------------------------------
lv <- function(d, v) factor(levels(d[[v]])[c(1, length(levels(d[[v]])))], levels = levels(d[[v]]),
                            ordered = is.ordered(d[[v]]))
nd_housing <- expand.grid(Infl = lv(housing_ordinf, "Infl"), Type = lv(housing_ordinf, "Type"),
                          Cont = lv(housing_ordinf, "Cont"))
nd_pneumo <- data.frame(exposure.time = c(1, 5.8, 30, 75))
nd_survey <- expand.grid(Age = c(16.5, 23, 70), Smoke = lv(survey_students, "Smoke"),
                         Sex = lv(survey_students, "Sex"))
nd_smoke <- expand.grid(Exer = lv(survey_students, "Exer"), Sex = lv(survey_students, "Sex"))
nd_esoph <- expand.grid(agegp = lv(esoph_d, "agegp"), tobgp = lv(esoph_d, "tobgp"))
nd_warp <- expand.grid(wool = lv(warpbreaks_d, "wool"), breaks = c(5, 26, 90))
nd_cars <- expand.grid(Price = c(7, 20, 80), Origin = lv(cars93, "Origin"), Horsepower = c(55, 300))
nd_mt <- expand.grid(cyl = lv(mtcars_d, "cyl"), wt = c(1.2, 3.2, 6))

## ---- clm ------------------------------------------------------------------------------
clm_results("clm_housing_ordered_infl",
            "clm(Sat ~ Infl + Type + Cont, data = housing_ordinf, weights = Freq)",
            "clm(Sat ~ Infl + Type, data = housing_ordinf, weights = Freq)", nd_housing,
            add = "~ . + Infl:Type + Type:Cont")
for (lk in c("probit", "cloglog")) {
  clm_results(paste0("clm_pneumo_", lk),
              sprintf('clm(severity ~ log(exposure.time), data = pneumo, weights = count, link = "%s")', lk),
              sprintf('clm(severity ~ 1, data = pneumo, weights = count, link = "%s")', lk), nd_pneumo)
}
clm_results("clm_pneumo_equidistant",
            'clm(severity ~ log(exposure.time), data = pneumo, weights = count, threshold = "equidistant")',
            'clm(severity ~ 1, data = pneumo, weights = count, threshold = "equidistant")', nd_pneumo)
clm_results("clm_pneumo_scale",
            "clm(severity ~ log(exposure.time), scale = ~ log(exposure.time), data = pneumo, weights = count)",
            "clm(severity ~ log(exposure.time), data = pneumo, weights = count)", nd_pneumo)
# the small model on the rows of the full one (Sex has a NA the full model drops)
clm_results("clm_survey_nominal_scale",
            "clm(Exer ~ Age + Smoke, nominal = ~ Sex, scale = ~ Smoke, data = survey_students)",
            "clm(Exer ~ Age + Smoke, scale = ~ Smoke, data = subset(survey_students, !is.na(Sex)))",
            nd_survey)
clm_results("clm_survey_smoke_symmetric",
            'clm(Smoke ~ Exer + Sex, data = survey_students, threshold = "symmetric")',
            'clm(Smoke ~ Exer, data = subset(survey_students, !is.na(Sex)), threshold = "symmetric")', nd_smoke)
clm_results("clm_esoph_alcohol", "clm(alcgp ~ agegp + tobgp, data = esoph_d, weights = ncontrols)",
            "clm(alcgp ~ agegp, data = esoph_d, weights = ncontrols)", nd_esoph)
clm_results("clm_warpbreaks_log_interaction",
            'clm(tension ~ wool * log(breaks), data = warpbreaks_d, link = "probit")',
            'clm(tension ~ wool + log(breaks), data = warpbreaks_d, link = "probit")', nd_warp)
clm_results("clm_cars93", "clm(AirBags ~ Price + Origin + log(Horsepower), data = cars93)",
            "clm(AirBags ~ Price, data = cars93)", nd_cars, add = "~ . + MPG.city + DriveTrain")
clm_results("clm_mtcars_cyl_ordered", 'clm(carb ~ cyl + wt, data = mtcars_d, link = "probit")',
            'clm(carb ~ wt, data = mtcars_d, link = "probit")', nd_mt, add = "~ . + hp + am")

## ---- polr ------------------------------------------------------------------------------
polr_results("polr_survey_tight",
             "polr(Exer ~ Sex + Smoke + Pulse, data = survey_students, Hess = TRUE, control = list(reltol = 1e-14))",
             cbind(nd_smoke[, "Sex", drop = FALSE], Smoke = lv(survey_students, "Smoke")[c(1, 2, 2, 1)],
                   Pulse = c(50, 72, 90, 130)))
polr_results("polr_cars93_tight",
             "polr(AirBags ~ Price + Origin + MPG.city, data = cars93, Hess = TRUE, control = list(reltol = 1e-14))",
             data.frame(nd_cars[1:6, c("Price", "Origin")], MPG.city = c(12, 20, 30, 45, 25, 18)))
polr_results("polr_esoph",
             "polr(alcgp ~ agegp + tobgp, data = esoph_d, weights = ncontrols, Hess = TRUE, control = list(reltol = 1e-14))",
             nd_esoph)
cat("wrote", length(list.files(out_dir)), "cases to", out_dir, "\n")
