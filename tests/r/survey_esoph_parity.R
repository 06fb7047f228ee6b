# MASS::survey and datasets::esoph (vendored as tests/data/r_datasets/survey_students.csv and
# esoph.csv) with their ORDERED predictors (contr.poly), NA rows (na.omit), clm and polr:
# fits, profile intervals, predictions on new data, drop1, anova, nominal/scale tests,
# emmeans over the ordered factor (prob mode, pairs, poly contrasts).
# Run from the repository root:  Rscript tests/r/survey_esoph_parity.R
# Writes tests/data/r/survey_esoph_parity.json.
suppressMessages({library(ordinal); library(MASS); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")
source("tests/r/json_output.R")
survey <- read_dataset("survey_students", "tests/data/r_datasets")
esoph <- read_dataset("esoph", "tests/data/r_datasets")
fit_summary <- function(f) list(coef = named(coef(f)), se = named(sqrt(diag(vcov(f)))),
                                loglik = as.numeric(logLik(f)), aic = AIC(f), nobs = nobs(f))
table_of <- function(x) list(rows = rownames(x), cols = names(x), values = rows(as.matrix(x)))
emm_table <- function(e, cols) {
  s <- as.data.frame(summary(e))
  c(lapply(s[setdiff(names(s), cols)], as.character), lapply(s[cols], as.numeric))
}

with_na <- clm(Smoke ~ Sex + Exer + Age, data = survey)
height <- clm(Smoke ~ Sex + Exer + Age + Height, data = survey)
complete <- survey[complete.cases(survey[c("Smoke", "Sex", "Exer", "Age")]), ]
fit <- clm(Smoke ~ Sex + Exer + Age, data = complete)
pol <- polr(Smoke ~ Sex + Exer + Age, data = complete, Hess = TRUE, control = list(reltol = 1e-14))
complete$ExerU <- factor(complete$Exer, ordered = FALSE)
unordered <- clm(Smoke ~ Sex + ExerU + Age, data = complete)
treatment <- clm(Smoke ~ Sex + C(Exer, contr.treatment) + Age, data = complete)
new <- data.frame(Sex = c("Female", "Male", "Male"), Exer = c("None", "Freq", "Some"),
                  Age = c(20, 25, 18.5))
emm_prob <- emmeans(fit, ~ Exer | Smoke, mode = "prob")
emm <- emmeans(fit, ~ Exer)
alc <- clm(alcgp ~ agegp + tobgp, data = esoph, weights = ncontrols)
alc_int <- clm(alcgp ~ as.integer(agegp) + tobgp, data = esoph, weights = ncontrols)
alc_polr <- polr(alcgp ~ as.integer(agegp) + tobgp, data = esoph, weights = ncontrols,
                 Hess = TRUE, control = list(reltol = 1e-14))
out <- list(
  with_na = c(fit_summary(with_na), list(dropped = as.integer(with_na$na.action))),
  height = c(fit_summary(height), list(dropped = as.integer(height$na.action))),
  clm = fit_summary(fit),
  polr_profile = table_of(as.data.frame(suppressMessages(confint(pol)))),
  clm_profile = table_of(as.data.frame(confint(fit))),
  unordered = fit_summary(unordered),
  treatment = fit_summary(treatment),
  predict = rows(predict(fit, newdata = new, type = "prob")$fit),
  drop1 = table_of(drop1(fit, test = "Chisq")),
  anova = table_of(as.data.frame(anova(clm(Smoke ~ Sex + Age, data = complete), fit))),
  nominal_test = table_of(nominal_test(fit)),
  scale_test = table_of(scale_test(fit)),
  emm_prob = emm_table(emm_prob, c("prob", "SE")),
  emm_poly_prob = emm_table(contrast(emm_prob, "poly", by = "Smoke"), c("estimate", "SE")),
  emm = emm_table(emm, c("emmean", "SE")),
  emm_pairs = emm_table(pairs(emm), c("estimate", "SE", "p.value")),
  emm_poly = emm_table(contrast(emm, "poly"), c("estimate", "SE", "p.value")),
  esoph_clm = fit_summary(alc),
  esoph_integer = fit_summary(alc_int),
  esoph_polr_integer = list(coef = named(c(alc_polr$zeta, coef(alc_polr))),
                            loglik = as.numeric(logLik(alc_polr))),
  esoph_anova = table_of(as.data.frame(anova(
    clm(alcgp ~ tobgp, data = esoph, weights = ncontrols), alc_int))),
  esoph_anova_models = lapply(attr(anova(
    clm(alcgp ~ tobgp, data = esoph, weights = ncontrols), alc_int), "models"), as.character),
  esoph_drop1 = table_of(drop1(alc, test = "Chisq")),
  esoph_emm_prob = emm_table(emmeans(alc, ~ tobgp | alcgp, mode = "prob"), c("prob", "SE")),
  esoph_emm_poly = emm_table(contrast(emmeans(alc, ~ agegp), "poly"), c("estimate", "SE"))
)
write_json(out, "tests/data/r/survey_esoph_parity.json")
