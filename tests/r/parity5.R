# R references for three data sets new to the project (tests/r/parity5_datasets.R vendors them):
# carData::Vocab (clm with 11 levels: links, equidistant, nominal, scale, year*sex; predictions
# with SEs; emmeans in modes "mean.class" and "prob"), brms::inhaler (clmm with nAGQ = 1 and 10:
# estimates, SEs, logLik, ranef and condVar; clm; polr) and AER::GSOEP9402 (polr probit:
# profile confint, predictions, drop1; the same as clm).
# Run from the repository root:  Rscript tests/r/parity5.R   Writes tests/data/r/parity5.json.
suppressMessages({library(ordinal); library(MASS); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")
source("tests/r/json_output.R")
data_dir <- "tests/data/r_datasets"
ctl <- clm.control(gradTol = 1e-10, maxIter = 500)
part <- function(m) list(coef = named(coef(m)), se = named(sqrt(diag(vcov(m)))),
                         logLik = as.numeric(logLik(m)), nobs = nobs(m))
tab <- function(x) list(rows = rownames(x), cols = colnames(x), values = rows(as.matrix(x)))
out <- list()

# --- carData::Vocab
vocab <- read.csv(gzfile(file.path(data_dir, "vocab.csv.gz")))
vocab$vocabulary <- factor(vocab$vocabulary, levels = 0:10, ordered = TRUE)
vocab$sex <- factor(vocab$sex, levels = c("Female", "Male"))
fv <- vocabulary ~ year * sex + education
# 30k rows: the gradient is a sum over rows, so tol 1e-10 is out of reach; 1e-7 is reached
vctl <- clm.control(gradTol = 1e-7, maxIter = 500)
vfit <- function(...) clm(..., data = vocab, control = vctl)
vlogit <- vfit(fv)
vocab_fits <- list(
  logit = vlogit, probit = vfit(fv, link = "probit"), cloglog = vfit(fv, link = "cloglog"),
  equidistant = vfit(fv, threshold = "equidistant"),
  nominal = vfit(vocabulary ~ year + education, nominal = ~ sex),
  scale = vfit(vocabulary ~ year + sex + education, scale = ~ education))
out$vocab <- lapply(vocab_fits, part)
new <- data.frame(year = c(1978, 1996, 2014), sex = factor(c("Female", "Male", "Male"), levels = c("Female", "Male")),
                  education = c(8, 12, 18))
pred <- function(m, type) lapply(predict(m, newdata = new, type = type, se.fit = TRUE, interval = TRUE),
                                 function(x) rows(as.matrix(x)))
out$vocab_predict <- list(logit_prob = pred(vlogit, "prob"), logit_cum = pred(vlogit, "cum.prob"),
                          scale_prob = pred(vocab_fits$scale, "prob"))
emm <- function(m, spec, mode) as.data.frame(summary(emmeans(m, spec, mode = mode, at = list(year = c(1980, 2010)))))
out$vocab_emmeans <- list(mean_class = emm(vlogit, ~ sex | year, "mean.class"),
                          prob = emm(vlogit, ~ vocabulary | sex * year, "prob"))
out$vocab_emmeans$nominal_prob <- emm(vocab_fits$nominal, ~ vocabulary | sex * year, "prob")
out$vocab_emmeans$scale_mean_class <- emm(vocab_fits$scale, ~ sex | year, "mean.class")
# with clm's default control: the refits inherit the control, and under gradTol = 1e-7 all
# of them stop short (NA rows); the refits adding year (and year:sex) fail under either
# ("not all thresholds are increasing"), so their rows are NA
vdefault <- clm(fv, data = vocab)
out$vocab_drop1 <- tab(drop1(vlogit, test = "Chisq"))
out$vocab_confint <- tab(confint(vlogit))
out$vocab_confint_scale <- tab(confint(vocab_fits$scale))
out$vocab_nominal_test <- tab(nominal_test(vdefault))
out$vocab_scale_test <- tab(scale_test(vdefault))

# --- brms::inhaler
inh <- read_dataset("inhaler", data_dir)
fi <- rating ~ treat + period + carry
mixed <- function(m) {
  re <- ranef(m, condVar = TRUE)$subject
  list(coef = named(coef(m)), se = named(sqrt(diag(vcov(m)))), logLik = as.numeric(logLik(m)),
       sd = as.numeric(attr(VarCorr(m)$subject, "stddev")), ranef = as.numeric(re[, 1]),
       condVar = as.numeric(condVar(m)$subject[, 1]), nobs = nobs(m),
       fitted = as.numeric(fitted(m)))
}
out$inhaler_clmm <- list(
  laplace = mixed(clmm(rating ~ treat + period + carry + (1 | subject), data = inh,
                       control = clmm.control(gradTol = 1e-8))),
  agq10 = mixed(clmm(rating ~ treat + period + carry + (1 | subject), data = inh, nAGQ = 10,
                     control = clmm.control(gradTol = 1e-8))))
out$inhaler_clm <- part(clm(fi, data = inh, control = ctl))
pi <- polr(fi, data = inh, Hess = TRUE, control = list(reltol = 1e-14))
out$inhaler_polr <- list(coef = named(c(pi$zeta, coef(pi))), se = named(sqrt(diag(vcov(pi)))[c(names(pi$zeta), names(coef(pi)))]),
                         logLik = as.numeric(logLik(pi)))

# --- AER::GSOEP9402
g <- read_dataset("gsoep9402", data_dir)
fg <- school ~ meducation + memployment + log(income) + size + parity + state + gender + kids
# six East German states have no rows: clm drops the unused levels (model.frame's
# drop.unused.levels), polr keeps them as aliased columns and then its profile() fails
# ("non-finite value supplied by optim"), so polr gets the dropped levels
gd <- g; gd$state <- droplevels(gd$state)
pg <- polr(fg, data = gd, method = "probit", Hess = TRUE, control = list(reltol = 1e-14))
cg <- clm(fg, data = g, link = "probit", control = ctl)
d1 <- function(m) { d <- drop1(m, test = "Chisq"); list(rows = rownames(d), df = as.numeric(d$Df), AIC = as.numeric(d$AIC),
                                                          LRT = as.numeric(d$LRT), p = as.numeric(d[["Pr(>Chi)"]])) }
out$gsoep_polr <- list(coef = named(c(pg$zeta, coef(pg))), se = named(sqrt(diag(vcov(pg)))[c(names(pg$zeta), names(coef(pg)))]),
                       logLik = as.numeric(logLik(pg)), confint = tab(suppressMessages(confint(pg))),
                       predict_head = rows(predict(pg, newdata = gd[1:6, ], type = "probs")),
                       class_head = as.character(predict(pg, newdata = gd[1:6, ], type = "class")),
                       drop1 = d1(pg))
out$gsoep_clm <- c(part(cg), list(confint = tab(confint(cg)),
                                  predict = pred_g <- lapply(predict(cg, newdata = g[1:6, -1], type = "prob", se.fit = TRUE),
                                                             function(x) rows(as.matrix(x))),
                                  drop1 = d1(cg),
                                  emmeans_state = as.data.frame(summary(emmeans(cg, ~ state, mode = "mean.class")))))
write_json(out, "tests/data/r/parity5.json")
