# carData::BEPS (vendored as tests/data/r_datasets/beps.csv): clm's threshold structures,
# nominal and scale effects, links (standard and flexible), formula features (factor() of a
# numeric, numeric-by-factor interaction, offset(), weights, subset, na.action), predictions
# with SEs and intervals, profile intervals, slice, nominal/scale tests, anova, emmeans.
# Run from the repository root:  Rscript tests/r/beps_parity.R
# Writes tests/data/r/beps_parity.json.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")
source("tests/r/json_output.R")
beps <- read_dataset("beps", "tests/data/r_datasets")
f <- economic.cond.national ~ vote + age + gender + Blair + Hague + Europe
ctl <- clm.control(gradTol = 1e-10, maxIter = 500)
part <- function(m) list(coef = named(coef(m)), se = named(sqrt(diag(vcov(m)))),
                         logLik = as.numeric(logLik(m)), nobs = nobs(m))
fit <- function(...) clm(..., data = beps, control = ctl)
tab <- function(x) list(rows = rownames(x), cols = colnames(x), values = rows(as.matrix(x)))
flex <- clm(f, data = beps, control = ctl)
sym <- clm(f, data = beps, threshold = "symmetric", control = ctl)
fits <- list(
  flexible = flex, symmetric = sym,
  symmetric2 = fit(f, threshold = "symmetric2"),
  equidistant = fit(f, threshold = "equidistant"),
  nominal = fit(economic.cond.national ~ vote + age + Blair + Europe, nominal = ~ gender + Hague),
  scale = clm(f, data = beps, scale = ~ age + gender, control = ctl),
  probit = fit(f, link = "probit"), cloglog = fit(f, link = "cloglog"),
  loglog = fit(f, link = "loglog"), cauchit = fit(f, link = "cauchit"),
  log_gamma = fit(f, link = "log-gamma"), aranda_ordaz = fit(f, link = "Aranda-Ordaz"),
  factor_numeric = fit(economic.cond.national ~ Blair + factor(Hague) + age:vote + vote),
  offset = fit(economic.cond.national ~ vote + age + Blair + offset(Europe / 10)),
  weights = clm(f, data = beps, weights = political.knowledge + 1, control = ctl),
  subset = clm(f, data = beps, subset = age > 40, control = ctl),
  scale_sym = fit(f, scale = ~ age + gender, threshold = "symmetric"))
out <- lapply(fits, part)
# NA rows inserted (na.omit)
bna <- beps; bna$age[c(3, 10, 50)] <- NA; bna$vote[c(10, 77)] <- NA
mna <- clm(f, data = bna, control = ctl)
out$na_omit <- c(part(mna), list(fitted_head = as.numeric(head(fitted(mna), 5)), n_fitted = length(fitted(mna))))
sc <- fits$scale
new <- data.frame(vote = c("Labour", "Conservative", "Liberal Democrat"), age = c(30, 55, 80),
                  gender = c("female", "male", "male"), Blair = c(1, 4, 5), Hague = c(2, 3, 5),
                  Europe = c(1, 6, 11))
pred <- function(m, type) lapply(predict(m, newdata = new, type = type, se.fit = TRUE, interval = TRUE),
                                 function(x) rows(as.matrix(x)))
out$predict_scale <- list(prob = pred(sc, "prob"), cum.prob = pred(sc, "cum.prob"),
                          class = as.character(predict(sc, newdata = new, type = "class")$fit))
out$predict_nominal <- list(prob = pred(fits$nominal, "prob"))
out$profile_scale <- tab(confint(sc))
out$profile_sym <- tab(confint(sym))
sl <- slice(sc, parm = c(1, 5, 12), lambda = 2, grid = 5)
out$slice <- lapply(names(sl), function(p) list(parameter = p, value = sl[[p]][[1]], logLik = sl[[p]]$logLik))
# nominal_test()/scale_test() of fits with control = ctl give all-NA rows in R (their
# refits fail), so they test fits with clm's default control
sym_default <- clm(f, data = beps, threshold = "symmetric")
out$nominal_test <- tab(nominal_test(sym_default))
out$scale_test <- tab(scale_test(sym_default))
sc_default <- clm(f, data = beps, scale = ~ age + gender)
out$nominal_test_flex <- tab(nominal_test(clm(f, data = beps)))
out$scale_test_scale <- tab(scale_test(sc_default))
a <- anova(sym, flex)
out$anova_sym_flex <- list(logLik = as.numeric(a$logLik), LR = as.numeric(a$LR.stat), df = as.numeric(a$df),
                           p = as.numeric(a[["Pr(>Chisq)"]]))
emm_tab <- function(e) { s <- as.data.frame(summary(e, infer = TRUE)); s[] <- lapply(s, function(v) if (is.factor(v)) as.character(v) else v); s }
out$emmeans_scale_prob <- emm_tab(emmeans(sc, ~ economic.cond.national | vote, mode = "prob"))
out$emmeans_scale_latent <- emm_tab(emmeans(sc, ~ vote, mode = "latent"))
out$emmeans_scale_pairs <- emm_tab(pairs(emmeans(sc, ~ vote, mode = "latent")))
out$emmeans_scale_mean_class <- emm_tab(emmeans(sc, ~ vote, mode = "mean.class"))
# household with level 1 made rare (only 4 rows left at 1: the others dropped)
hh <- beps[beps$economic.cond.household != "1" | seq_len(nrow(beps)) %in% which(beps$economic.cond.household == "1")[1:4], ]
rare_warn <- character()
rare <- withCallingHandlers(clm(economic.cond.household ~ vote + age + gender + Blair + Hague + Europe, data = hh),
                            warning = function(w) { rare_warn <<- c(rare_warn, conditionMessage(w)); invokeRestart("muffleWarning") })
out$rare <- c(part(rare), list(warnings = rare_warn, n = nrow(hh), cond_H = rare$cond.H,
                               convergence = rare$convergence$code))
# predictions of the other fits (offset evaluated on newdata); R's predict() of a log-gamma
# fit stops ("argument lambda is missing" in plgamma), so flexible links are not here
new$political.knowledge <- c(0, 2, 3)
for (nm in c("symmetric2", "equidistant", "offset", "weights", "cauchit", "factor_numeric", "scale_sym"))
  out[[paste0("predict_", nm)]] <- list(prob = pred(fits[[nm]], "prob"), cum.prob = pred(fits[[nm]], "cum.prob"))
out$emmeans_nominal_prob <- emm_tab(emmeans(fits$nominal, ~ economic.cond.national | vote, mode = "prob"))
out$emmeans_nominal_mean_class <- emm_tab(emmeans(fits$nominal, ~ vote, mode = "mean.class"))
out$emmeans_sym_latent <- emm_tab(pairs(emmeans(sym, ~ vote, mode = "latent")))
out$emmeans_offset_latent <- emm_tab(emmeans(fits$offset, ~ vote, mode = "latent"))
out$profile_nominal <- tab(confint(fits$nominal))
out$profile_scale_sym <- tab(confint(fits$scale_sym))
# emmeans reports an offset() model as nonEst; offset = 0 gives x'beta - mean(theta)
out$emmeans_offset_zero <- emm_tab(emmeans(fits$offset, ~ vote, mode = "latent", offset = 0))
out$nominal_test_scale <- tab(nominal_test(sc_default))
out$drop1_scale <- tab(drop1(sc, test = "Chi"))
out$emmeans_scale_cum <- emm_tab(emmeans(sc, ~ cut | vote, mode = "cum.prob"))
out$emmeans_nominal_linear <- emm_tab(emmeans(fits$nominal, ~ gender | cut, mode = "linear.predictor"))
# household level 1 kept for 3 women only, with a nominal gender effect: theta_1 of men -> -Inf
one <- which(beps$economic.cond.household == "1")
fem <- one[beps$gender[one] == "female"][1:3]
sep_rows <- beps$economic.cond.household != "1" | seq_len(nrow(beps)) %in% fem
sep <- suppressWarnings(clm(economic.cond.household ~ vote + age + Blair, nominal = ~ gender,
                            data = beps[sep_rows, ]))
out$separated <- list(rows = fem, logLik = as.numeric(logLik(sep)), convergence = sep$convergence$code,
                      message = sep$convergence$messages, se_na = sum(is.na(sqrt(diag(vcov(sep))))),
                      location = named(sep$beta))
# term tests refit with the weights, subset and offset() of the fit
g_off <- economic.cond.national ~ vote + age + Blair + offset(Europe / 10)
w_off <- clm(g_off, data = beps, weights = political.knowledge + 1)
s_off <- clm(g_off, data = beps, subset = age > 40, scale = ~ gender)
out$refits <- list(nominal_test_weights = tab(nominal_test(w_off)), scale_test_weights = tab(scale_test(w_off)),
                   nominal_test_subset = tab(nominal_test(s_off)), drop1_subset = tab(drop1(s_off, test = "Chi")))
# emmeans of factor() of a numeric and of a numeric-by-factor interaction
fn <- fits$factor_numeric
out$emmeans_factor_hague <- suppressMessages(emm_tab(emmeans(fn, ~ Hague, mode = "latent")))
out$emmeans_factor_vote_age70 <- suppressMessages(emm_tab(emmeans(fn, ~ vote, at = list(age = 70), mode = "latent")))
write_json(out, "tests/data/r/beps_parity.json")
