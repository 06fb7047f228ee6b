# Three behaviours of R's clm that ordstats follows (tests/estimation/test_scale_offset.py,
# tests/test_formula_r_functions.py, tests/results/test_summary_formulas.py):
# - a scale formula with only an offset, scale = ~ offset(q): s = exp(q), no scale parameters
#   (wine, q = seq(-0.5, 0.5, len = 72)); R's predict(newdata) of it works without the
#   response column (with it, clm.newRho fails: "non-conformable arguments");
# - a summary of a column as a term (~ sd(age), ~ age + sd(age), ~ mean(age)) is refused by
#   model.frame ("variable lengths differ"); a constant column (~ age + I(0 * age + sd(age)))
#   is aliased with the thresholds and dropped (infert);
# - summary() prints formula:, then scale: and nominal: lines when the model has them.
# Run from the repository root: Rscript tests/r/r_behaviours.R
# Writes tests/data/reference/r_behaviours.json.
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")
source("tests/r/write_dataset.R")
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, ordered = TRUE)
wine$temp <- factor(wine$temp); wine$contact <- factor(wine$contact)
wine$q <- seq(-0.5, 0.5, len = 72)
newdata <- data.frame(temp = c("cold", "warm", "warm"), contact = c("no", "yes", "no"),
                      q = c(0.1, -0.4, 1))
fit_case <- function(fit, nd = newdata) {
  p <- predict(fit, newdata = nd, type = "prob", se.fit = TRUE)
  list(logLik = as.numeric(logLik(fit)), coef = named(coef(fit)),
       se = named(sqrt(diag(vcov(fit)))), prob = rows(p$fit), prob_se = rows(p$se.fit))
}
fit <- clm(rating ~ temp + contact, scale = ~ offset(q), data = wine)
nominal <- clm(rating ~ temp, nominal = ~ contact, scale = ~ offset(q), data = wine)
bigger <- clm(rating ~ temp * contact, scale = ~ offset(q), data = wine)
lrt <- function(table) named(table$LRT[-1], rownames(table)[-1])
offset_only <- list(
  newdata = newdata, fit = fit_case(fit), nominal = fit_case(nominal),
  scale_test = lrt(scale_test(fit)), nominal_test = lrt(nominal_test(fit)),
  drop1_aic = named(drop1(fit)$AIC, rownames(drop1(fit))),
  anova_lr = anova(fit, bigger)$LR.stat[2],
  confint_profile = rows(confint(fit)))
infert_d <- read_dataset("infert", "tests/data/r_datasets")
infert_new <- data.frame(age = c(19, 30, 47))
message_of <- function(f) conditionMessage(tryCatch(clm(as.formula(f), data = infert_d),
                                                    error = identity))
refused <- sapply(c("education ~ sd(age)", "education ~ age + sd(age)", "education ~ mean(age)"),
                  message_of, simplify = FALSE)
constant <- clm(education ~ age + I(0 * age + sd(age)), data = infert_d)
constant_term <- list(
  refused = refused, newdata = infert_new, logLik = as.numeric(logLik(constant)),
  coef = named(coef(constant)[!is.na(coef(constant))]),
  se = named(sqrt(diag(vcov(constant)))), aliased = names(which(constant$aliased$beta)),
  prob = rows(suppressWarnings(predict(constant, newdata = infert_new, type = "prob")$fit)))
header <- function(fit) head(capture.output(summary(fit)), 4)
summary_lines <- list(
  scale_nominal = header(clm(rating ~ temp, scale = ~ contact, nominal = ~ contact,
                             data = wine)),
  offset_only = header(fit))
write_json(list(offset_only = offset_only, constant_term = constant_term,
                summary_lines = summary_lines), "tests/data/reference/r_behaviours.json")
