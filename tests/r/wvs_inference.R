# carData::WVS (vendored as tests/data/r_datasets/wvs.csv) across the inference toolkit:
# clm/polr predictions, polr's vcov/predict/profile confint, anova/drop1/add1/scale_test,
# convergence, slice, cond.H, emmeans on clm and polr, VGAM's parallel families, clmm.
# Run from the repository root:  Rscript tests/r/wvs_inference.R
# Writes tests/data/r/wvs_inference.json.
suppressMessages({library(ordinal); library(MASS); library(VGAM); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")
source("tests/r/json_output.R")
wvs <- read_dataset("wvs", "tests/data/r_datasets")
f <- poverty ~ religion + degree + country + age + gender
fit <- clm(f, data = wvs)
pol <- polr(f, data = wvs, Hess = TRUE, control = list(reltol = 1e-14))
new <- data.frame(religion = c("no", "yes", "yes", "no"), degree = c("no", "yes", "no", "yes"),
                  country = c("Australia", "Norway", "Sweden", "USA"), age = c(20, 45, 70, 33.5),
                  gender = c("female", "male", "female", "male"))
pred <- function(type) {
  p <- predict(fit, newdata = new, type = type, se.fit = TRUE, interval = TRUE)
  lapply(p, function(m) rows(as.matrix(m)))
}
pr <- list(prob = pred("prob"), cum.prob = pred("cum.prob"),
           linear.predictor = pred("linear.predictor"),
           class = as.character(predict(fit, newdata = new, type = "class")$fit))
small <- clm(poverty ~ religion + degree + country, data = wvs)
mid <- clm(poverty ~ religion + degree + country + age, data = wvs)
an <- anova(small, mid, fit)
d1 <- drop1(fit, test = "Chi")
a1 <- add1(fit, ~ . + country:gender + age:country + degree:religion, test = "Chi")
st <- scale_test(fit)
conv <- convergence(fit)
sl <- slice(fit, parm = c(1, 5, 8), lambda = 2, grid = 5)
slices <- lapply(names(sl), function(p) list(parameter = p, value = sl[[p]][[1]], logLik = sl[[p]]$logLik))
tab <- function(x) list(rows = rownames(x), cols = colnames(x), values = rows(as.matrix(x)))
emm_tab <- function(e) { s <- as.data.frame(summary(e, infer = TRUE)); s[] <- lapply(s, function(v) if (is.factor(v)) as.character(v) else v); s }
emm_all <- function(m) list(
  latent = emm_tab(emmeans(m, ~ country, mode = "latent")),
  prob = emm_tab(emmeans(m, ~ poverty | country, mode = "prob")),
  mean_class = emm_tab(emmeans(m, ~ country, mode = "mean.class")),
  pairs = emm_tab(pairs(emmeans(m, ~ country, mode = "latent"))),
  pairs_tukey = emm_tab(pairs(emmeans(m, ~ country, mode = "latent"), adjust = "tukey")),
  trt_vs_ctrl = emm_tab(contrast(emmeans(m, ~ country, mode = "latent"), "trt.vs.ctrl", ref = 2)),
  eff = emm_tab(contrast(emmeans(m, ~ country, mode = "latent"), "eff")),
  trt_vs_ctrl_7 = emm_tab(contrast(emmeans(m, ~ country * gender, mode = "latent"), "trt.vs.ctrl")),
  pairs_mean_class = emm_tab(pairs(emmeans(m, ~ country, mode = "mean.class"))),
  emtrends = emm_tab(emtrends(m, ~ country, var = "age", mode = "latent")))
vg <- function(fam) {
  m <- vglm(f, family = fam, data = wvs, control = vglm.control(epsilon = 1e-13, maxit = 100))
  list(logLik = as.numeric(logLik(m)), coef = named(coef(m)), se = named(sqrt(diag(vcov(m)))))
}
vgl <- suppressWarnings(list(cumulative = vg(cumulative(parallel = TRUE)), acat = vg(acat(parallel = TRUE)),
            sratio = vg(sratio(parallel = TRUE)), cratio = vg(cratio(parallel = TRUE)),
            sratio_gender = vg(sratio(parallel = FALSE ~ gender)), acat_gender = vg(acat(parallel = FALSE ~ gender)),
            sratio_reverse = vg(sratio(parallel = TRUE, reverse = TRUE)), acat_reverse = vg(acat(parallel = TRUE, reverse = TRUE))))
# car's classic WVS model: country * poly(age, 3)
fpoly <- clm(poverty ~ gender + religion + degree + country * poly(age, 3), data = wvs)
poly_part <- list(coef = named(coef(fpoly)), logLik = as.numeric(logLik(fpoly)),
                  prob = rows(predict(fpoly, newdata = new, type = "prob")$fit),
                  drop1 = tab(drop1(fpoly, test = "Chi")), anova_II = tab(anova(fpoly, type = "II")))
mm <- clmm(poverty ~ religion + degree + gender + age + (1 | country), data = wvs,
           control = clmm.control(gradTol = 1e-10))
mm_ranef <- ranef(mm)
# clmm(..., nAGQ = 10) stops here ("non-finite likelihood at starting value", also from
# the Laplace estimates): tests/test_wvs_parity.py checks ordstats' AGQ by exact quadrature
mm_default <- clmm(poverty ~ religion + degree + gender + age + (1 | country), data = wvs)
# emmeans' dunnettx quantile to 1e-12 (its own .qdunnx stops within 5e-4)
dunnettx_q <- sapply(c(3, 7), function(k)
  uniroot(function(x) emmeans:::.pdunnx(x, k, Inf) - 0.95, c(1.9, 3.5), tol = 1e-12)$root)
out <- list(
  dunnettx_quantile = list(k = c(3, 7), quantile = dunnettx_q),
  clm = list(coef = named(coef(fit)), vcov = rows(vcov(fit)), names = names(coef(fit)),
             logLik = as.numeric(logLik(fit)), cond_H = fit$cond.H),
  predict = pr,
  polr = list(coef = named(coef(pol)), zeta = named(pol$zeta), vcov = rows(vcov(pol)),
              vcov_names = colnames(vcov(pol)), logLik = as.numeric(logLik(pol)),
              probs = rows(predict(pol, newdata = new, type = "probs")),
              class = as.character(predict(pol, newdata = new, type = "class")),
              confint = tab(confint(pol))),
  anova = tab(an), drop1 = tab(d1), add1 = tab(a1), scale_test = tab(st),
  convergence = list(estimate = named(conv$coefficients[, "Estimate"]), se = named(conv$coefficients[, "Std.Err"]),
                     eigenvalues = conv$eigen.values, logLik = as.numeric(conv$original.fit$logLik)),
  slice = slices,
  emmeans_clm = emm_all(fit), emmeans_polr = emm_all(pol),
  vglm = vgl, poly = poly_part,
  clmm = list(coef = named(coef(mm)), se = named(sqrt(diag(vcov(mm)))), logLik = as.numeric(logLik(mm)),
              sd = as.numeric(attr(VarCorr(mm)$country, "stddev")),
              ranef = as.numeric(unlist(mm_ranef$country)), condvar = as.numeric(unlist(condVar(mm)$country)),
              drop1 = tab(drop1(mm_default, test = "Chi")),
              emmeans_prob = emm_tab(emmeans(mm_default, ~ poverty | gender, mode = "prob"))))
write_json(out, "tests/data/r/wvs_inference.json")
