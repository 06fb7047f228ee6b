# R parity on ordinal data sets the other references do not use: brglm2::stemcell,
# HSAUR3::CHFLS, pscl::admit, HSAUR3::Lanza, AER::BankWages, lmerTest::carrots and
# AER::Affairs. clm with the less-used features (cauchit/cloglog/loglog/probit links,
# equidistant/symmetric/symmetric2 thresholds, nominal and scale effects, polynomial
# contrasts of ordered predictors, including in nominal= and scale= and with a level
# dropped by subset=, offsets in the location and scale formulas, weights, subset=,
# an interaction with an empty cell, start=) and polr; per case: estimates, SEs,
# logLik, AIC, BIC, nobs, fitted values, predict on new rows (prob with se.fit and
# interval, cum.prob, linear.predictor, class), profile and Wald intervals, drop1,
# nominal_test, scale_test and anova of a nested model.  Term-test rows R leaves NA
# (its refit stops at clm.control()'s limits) are refitted directly with more
# iterations (relaxed_refits.json).
#
# Writes the data sets to tests/data/r_datasets/<name>.csv + .levels.json and one JSON
# per case to tests/data/reference/parity_more/<case>.json (tests/test_parity_more.py).
#
# Run from the repository root:  Rscript tests/r/parity_more_datasets.R
suppressMessages({library(jsonlite); library(ordinal); library(MASS)})
data_dir <- "tests/data/r_datasets"
out_dir <- "tests/data/reference/parity_more"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
source("tests/r/write_dataset.R")

data(stemcell, package = "brglm2")
write_dataset(stemcell, dir = data_dir, "stemcell", "brglm2::stemcell",
  "Opinion on stem-cell research by gender and religious fundamentalism (counts)", NULL,
  "research", "frequency")
data(CHFLS, package = "HSAUR3")
ch <- CHFLS[, c("R_region", "R_age", "R_edu", "R_income", "R_health", "R_happy")]
write_dataset(ch, dir = data_dir, "chfls", "HSAUR3::CHFLS",
  "Chinese Health and Family Life Survey: women's happiness, health, education, age, income",
  "6 of 10 columns", "R_happy")
data(admit, package = "pscl")
write_dataset(admit, dir = data_dir, "admit", "pscl::admit",
  "Graduate admission ratings (1-5) with GRE scores and indicators", NULL, "score")
data(Lanza, package = "HSAUR3")
write_dataset(Lanza, dir = data_dir, "lanza", "HSAUR3::Lanza",
  "Misoprostol vs placebo: ulcer classification (1-5) in four studies", NULL, "classification")
data(BankWages, package = "AER")
write_dataset(BankWages, dir = data_dir, "bankwages", "AER::BankWages",
  "Job category (custodial < admin < manage) of 474 bank employees", NULL, "job")
data(carrots, package = "lmerTest")
cr <- carrots[, c("Consumer", "Gender", "Age", "Homesize", "Preference", "Sweetness", "Bitter", "Crisp", "sens1", "sens2", "Product")]
cr$Preference <- factor(cr$Preference, levels = 1:7, ordered = TRUE)
cr$AgeO <- factor(cr$Age, ordered = TRUE)
write_dataset(cr, dir = data_dir, "carrots", "lmerTest::carrots",
  "Consumer preference (1-7) of 12 carrot products with sensory scores",
  "Preference as an ordered factor; AgeO = Age as an ordered factor; 12 columns", "Preference")
data(Affairs, package = "AER")
af <- Affairs
af$rating <- factor(af$rating, levels = 1:5, ordered = TRUE)
af$relig <- factor(af$religiousness, ordered = TRUE)
write_dataset(af, dir = data_dir, "affairs", "AER::Affairs",
  "Self-rated marriage happiness (1-5) of 601 respondents",
  "rating as an ordered factor; relig = religiousness as an ordered factor", "rating")

for (n in c("stemcell", "chfls", "admit", "lanza", "bankwages", "carrots", "affairs"))
  assign(n, read_dataset(n, data_dir), envir = globalenv())

source("tests/r/result_helpers.R")  # num(), quiet(), table_of(), records()

case <- function(name, call_text, small_text, nd, kind = "clm") {
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text)), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning")})
  out <- list(case = name, r_call = call_text, small_call = small_text, warnings = I(unique(warns)),
              loglik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"), aic = AIC(fit),
              bic = BIC(fit), nobs = nobs(fit), newdata = records(nd))
  if (kind == "polr") {
    out$coef <- num(c(fit$zeta, coef(fit)))
    out$se <- num(sqrt(diag(vcov(fit))))
    out$prob <- num(unname(predict(fit, newdata = nd, type = "probs")))
    out$class <- as.character(predict(fit, newdata = nd, type = "class"))
    out$fitted_probs <- num(unname(head(fitted(fit), 5)))
  } else {
    cf <- coef(fit); nz <- length(fit$zeta)
    if (nz) names(cf)[length(cf) - rev(seq_len(nz)) + 1] <- paste0("sca.", names(fit$zeta))
    se <- sqrt(diag(vcov(fit))); names(se) <- names(cf)[!is.na(cf)]
    out$coef <- num(cf); out$se <- num(se); out$aliased <- I(names(cf)[is.na(cf)])
    out$fitted <- num(unname(head(fit$fitted.values, 20)))
    pr <- quiet(predict(fit, newdata = nd, type = "prob", se.fit = TRUE, interval = TRUE))
    if (!is.null(pr)) { out$prob <- num(pr$fit); out$prob_se <- num(pr$se.fit); out$prob_lwr <- num(pr$lwr); out$prob_upr <- num(pr$upr) }
    cp <- quiet(predict(fit, newdata = nd, type = "cum.prob"))
    if (!is.null(cp)) { out$cprob1 <- num(cp$cprob1); out$cprob2 <- num(cp$cprob2) }
    lp <- quiet(predict(fit, newdata = nd, type = "linear.predictor", se.fit = TRUE))
    if (!is.null(lp)) { out$eta1 <- num(lp$eta1); out$eta2 <- num(lp$eta2); out$eta1_se <- num(lp$se.eta1) }
    cl <- quiet(predict(fit, newdata = nd, type = "class"))
    if (!is.null(cl)) out$class <- as.character(cl$fit)
    ci <- quiet(confint(fit, type = "profile"))
    if (!is.null(ci)) out$confint <- list(names = I(rownames(ci)), lower = num(unname(ci[, 1])), upper = num(unname(ci[, 2])))
    cw <- quiet(confint(fit, type = "Wald"))
    if (!is.null(cw)) out$confint_wald <- list(names = I(rownames(cw)), lower = num(unname(cw[, 1])), upper = num(unname(cw[, 2])))
    out$drop1 <- table_of(quiet(drop1(fit, test = "Chi")))
    out$nominal_test <- table_of(quiet(nominal_test(fit)))
    out$scale_test <- table_of(quiet(scale_test(fit)))
    out$cond_H <- summary(fit)$info$cond.H
  }
  if (!is.null(small_text)) {
    small <- eval(parse(text = small_text))
    av <- anova(small, fit)
    out$anova <- list(loglik = num(av$logLik), lr = num(av$LR.stat), df = num(av$df), p = num(av$`Pr(>Chisq)`))
  }
  writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA, null = "null", na = "string"),
             file.path(out_dir, paste0(name, ".json")))
}

lv <- function(d, v) factor(levels(d[[v]]), levels = levels(d[[v]]), ordered = is.ordered(d[[v]]))
nd_stem <- expand.grid(religion = lv(stemcell, "religion"), gender = lv(stemcell, "gender"))
case("stemcell_poly", 'clm(research ~ religion + gender, data = stemcell, weights = frequency)',
     'clm(research ~ gender, data = stemcell, weights = frequency)', nd_stem)
case("stemcell_cauchit", 'clm(research ~ religion + gender, data = stemcell, weights = frequency, link = "cauchit")', NULL, nd_stem)
case("stemcell_loglog_sym2", 'clm(research ~ religion + gender, data = stemcell, weights = frequency, link = "loglog", threshold = "symmetric2")', NULL, nd_stem)
case("stemcell_nominal", 'clm(research ~ religion, nominal = ~ gender, data = stemcell, weights = frequency)',
     'clm(research ~ religion + gender, data = stemcell, weights = frequency)', nd_stem)
case("stemcell_scale", 'clm(research ~ religion + gender, scale = ~ religion, data = stemcell, weights = frequency, link = "probit")', NULL, nd_stem)
case("stemcell_interaction", 'clm(research ~ religion * gender, data = stemcell, weights = frequency)',
     'clm(research ~ religion + gender, data = stemcell, weights = frequency)', nd_stem)
case("polr_stemcell", 'polr(research ~ religion + gender, data = stemcell, weights = frequency, Hess = TRUE)', NULL, nd_stem, "polr")

nd_ch <- data.frame(R_health = lv(chfls, "R_health"), R_age = c(20, 30, 40, 50, 60), R_income = c(0, 200, 500, 1000, 5000),
                    R_edu = lv(chfls, "R_edu")[c(1, 2, 3, 5, 6)], R_region = lv(chfls, "R_region")[1:5])
case("chfls_poly", 'clm(R_happy ~ R_health + R_age + log1p(R_income), data = chfls)',
     'clm(R_happy ~ R_age + log1p(R_income), data = chfls)', nd_ch)
case("chfls_probit_equi", 'clm(R_happy ~ R_health + R_edu + R_age, data = chfls, link = "probit", threshold = "equidistant")',
     'clm(R_happy ~ R_health + R_age, data = chfls, link = "probit", threshold = "equidistant")', nd_ch)
case("chfls_scale_subset", 'clm(R_happy ~ R_health + R_age, scale = ~ R_age, data = chfls, subset = R_age < 45)', NULL, nd_ch)
case("chfls_offset_formula", 'clm(R_happy ~ R_health + offset(R_age/20), data = chfls, link = "cloglog")', NULL, nd_ch)
case("chfls_scale_offset", 'clm(R_happy ~ R_health, scale = ~ offset(R_age/100) + log1p(R_income), data = chfls)', NULL, nd_ch)
case("chfls_edu_region", 'clm(R_happy ~ R_edu * R_region, data = chfls)', NULL, nd_ch)
case("chfls_nominal_poly", 'clm(R_happy ~ R_age, nominal = ~ R_health, data = chfls)', NULL, nd_ch)
case("polr_chfls", 'polr(R_happy ~ R_health + R_age, data = chfls, Hess = TRUE, method = "cloglog")', NULL, nd_ch, "polr")

nd_admit <- admit[c(1:5, 50), -1]
case("admit_cloglog", 'clm(score ~ gre.quant + gre.verbal + ap + pt + female, data = admit, link = "cloglog")',
     'clm(score ~ gre.quant + gre.verbal, data = admit, link = "cloglog")', nd_admit)
case("admit_nominal", 'clm(score ~ gre.quant + gre.verbal, nominal = ~ ap, data = admit)', NULL, nd_admit)
case("admit_symmetric", 'clm(score ~ I(gre.quant/100) + I(gre.verbal/100) + female, data = admit, threshold = "symmetric", link = "cauchit")', NULL, nd_admit)
# R's drop1/nominal_test/scale_test refit with the full model's start= (wrong length):
# admit_no_start has R's term tests of the same model
case("admit_start", 'clm(score ~ gre.quant + female, data = admit, start = c(-2, 0, 1, 2, 0.001, 0))', NULL, nd_admit)
case("admit_no_start", 'clm(score ~ gre.quant + female, data = admit)', NULL, nd_admit)

nd_lanza <- expand.grid(study = lv(lanza, "study"), treatment = lv(lanza, "treatment"))
case("lanza_interaction", 'clm(classification ~ study * treatment, data = lanza)',
     'clm(classification ~ study + treatment, data = lanza)', nd_lanza)
case("lanza_empty_cell", 'clm(classification ~ study * treatment, data = lanza, subset = !(study == "IV" & treatment == "Placebo"))', NULL, nd_lanza[1:7, ])
case("lanza_symmetric2", 'clm(classification ~ study + treatment, data = lanza, threshold = "symmetric2", link = "probit")', NULL, nd_lanza)
case("lanza_scale", 'clm(classification ~ treatment, scale = ~ treatment, data = lanza)', NULL, nd_lanza)

nd_bank <- expand.grid(education = c(8, 12, 16, 21), gender = lv(bankwages, "gender"), minority = lv(bankwages, "minority"))
case("bank_loglog", 'clm(job ~ education + gender + minority, data = bankwages, link = "loglog")',
     'clm(job ~ education, data = bankwages, link = "loglog")', nd_bank)
case("bank_interaction", 'clm(job ~ education + gender * minority, data = bankwages)', NULL, nd_bank)
case("bank_scale", 'clm(job ~ education + minority, scale = ~ gender, data = bankwages)', NULL, nd_bank)

nd_car <- carrots[c(1, 2, 100, 500, 1000), c("Sweetness", "Bitter", "Crisp", "Age", "AgeO", "Gender", "sens1", "sens2", "Homesize")]
case("carrots_ordered_age", 'clm(Preference ~ sens1 + sens2 + AgeO + Gender, data = carrots)',
     'clm(Preference ~ sens1 + sens2 + Gender, data = carrots)', nd_car)
case("carrots_sensory_probit", 'clm(Preference ~ Sweetness + Bitter + Crisp, data = carrots, link = "probit")', NULL, nd_car)
case("carrots_nominal_scale", 'clm(Preference ~ sens1 + sens2, scale = ~ Homesize, nominal = ~ Gender, data = carrots)', NULL, nd_car)
case("carrots_equidistant", 'clm(Preference ~ sens2 + Age, data = carrots, threshold = "equidistant", link = "loglog")', NULL, nd_car)

nd_af <- Affairs[c(1, 2, 3, 10, 100), c("religiousness", "yearsmarried", "children", "gender", "age", "education")]
nd_af$relig <- factor(nd_af$religiousness, levels = levels(affairs$relig), ordered = TRUE)
case("affairs_cauchit_scale", 'clm(rating ~ yearsmarried + children + religiousness, scale = ~ children, data = affairs, link = "cauchit")', NULL, nd_af)
case("affairs_ordered_relig", 'clm(rating ~ relig + yearsmarried + gender, data = affairs)',
     'clm(rating ~ yearsmarried + gender, data = affairs)', nd_af)
case("affairs_weights", 'clm(rating ~ yearsmarried + children, data = affairs, weights = education/10, link = "probit")', NULL, nd_af)
# predict.polr drops a formula offset from new rows (its fitted values keep it)
case("polr_affairs_offset", 'polr(rating ~ yearsmarried + offset(religiousness/5) + children, data = affairs, subset = gender == "male", weights = education/10, Hess = TRUE)', NULL,
     affairs[affairs$gender == "male", ][1:5, ], "polr")
case("polr_affairs", 'polr(rating ~ yearsmarried + children + religiousness, data = affairs, Hess = TRUE, method = "probit")', NULL, nd_af, "polr")
nd_ch <- data.frame(R_health = lv(chfls, "R_health")[2:5], R_age = c(20, 25, 28, 29), R_income = c(0, 200, 500, 1000),
                    R_edu = lv(chfls, "R_edu")[c(2, 3, 5, 6)])
case("chfls_subset_unused_level", 'clm(R_happy ~ R_health + R_age, data = chfls, subset = R_age < 30)', NULL, nd_ch)
case("chfls_subset_unused_nominal", 'clm(R_happy ~ R_age, nominal = ~ R_health, data = chfls, subset = R_age < 30, link = "probit")', NULL, nd_ch)
nd_admit <- admit[c(1:5, 50), -1]
case("admit_equi_nominal", 'clm(score ~ gre.quant, nominal = ~ female, data = admit, threshold = "equidistant")', NULL, nd_admit)
nd_af <- affairs[c(1, 2, 3, 10, 100), c("religiousness", "yearsmarried", "children", "gender", "age", "education", "relig")]
case("affairs_symmetric_scale", 'clm(rating ~ yearsmarried + children, scale = ~ gender, data = affairs, threshold = "symmetric")', NULL, nd_af)
case("affairs_relig_scale_poly", 'clm(rating ~ yearsmarried, scale = ~ relig, data = affairs, link = "loglog")', NULL, nd_af)
nd_bank <- expand.grid(education = c(8, 12, 16, 21), gender = lv(bankwages, "gender"), minority = lv(bankwages, "minority"))
case("bank_offset_subset", 'clm(job ~ gender + offset(education/4), data = bankwages, subset = minority == "no", link = "cloglog")', NULL, nd_bank)
case("bank_weights_subset", 'clm(job ~ education + gender, data = bankwages, subset = education > 8, weights = education/12, link = "probit")', NULL, nd_bank)

ctl <- clm.control(maxIter = 1000, maxModIter = 50, gradTol = 1e-8)
relaxed <- list(
  list(case = "lanza_interaction", test = "scale_test", term = "study:treatment",
       call = 'clm(classification ~ study * treatment, scale = ~ study:treatment, data = lanza, control = ctl)'),
  list(case = "bank_interaction", test = "scale_test", term = "gender:minority",
       call = 'clm(job ~ education + gender * minority, scale = ~ gender:minority, data = bankwages, control = ctl)'),
  list(case = "chfls_edu_region", test = "scale_test", term = "R_edu:R_region",
       call = 'clm(R_happy ~ R_edu * R_region, scale = ~ R_edu:R_region, data = chfls, control = ctl)'))
relaxed <- lapply(relaxed, function(r) {
  fit <- suppressWarnings(eval(parse(text = r$call)))
  c(r, list(logLik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"),
            code = fit$convergence$code[1], max_abs_grad = max(abs(fit$gradient))))
})
writeLines(toJSON(list(control = "clm.control(maxIter = 1000, maxModIter = 50, gradTol = 1e-8)", rows = relaxed),
                  auto_unbox = TRUE, pretty = TRUE, digits = NA), file.path(out_dir, "relaxed_refits.json"))

cat("wrote", length(list.files(out_dir)), "cases to", out_dir, "\n")
