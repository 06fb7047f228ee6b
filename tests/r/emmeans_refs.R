# emmeans references for clm, polr and clmm fits (issue 23, item 2).
#
# Run from the repository root (R 4.2, emmeans 1.8.4, ordinal 2022.11.16, MASS 7.3-58,
# mvtnorm, jsonlite):
#   Rscript tests/r/emmeans_refs.R            (every model; ~6 minutes)
#   Rscript tests/r/emmeans_refs.R clmm_wine  (only the models named)
# Writes tests/data/reference/emmeans/<model>.json, one file per fitted model:
#   fit_call            the exact R call that fitted the model (data read as below)
#   coef, vcov_names, vcov   R's coef(fit) and vcov(fit) (polr: thresholds first, as the
#                       other oracles; clm scale coefficients named "sca.<term>"), so a test
#                       can evaluate the emmeans layer at R's own estimates
#   calls               a list, each with
#     r_call            the exact R expression (evaluated with `fit` bound to the model)
#     kind              "emmeans" | "contrast" | "joint_tests"
#     estimate_column   the name of the estimate column
#     by                the by variables of the result ([] if none)
#     adjust            the adjustment of p values and intervals that R applied (contrasts)
#     table             {columns: {name: [...]}}: as.data.frame(summary(obj, infer = c(TRUE, TRUE)))
#                       (joint_tests: as.data.frame(obj)); 15 significant digits
#     mvt_precise       (adjust = "mvt" only) the same adjusted p values and critical value
#                       computed with mvtnorm at abseps = 1e-6, maxpts = 2e6
#
# The data are ordstats/datasets/<name>.csv (and tests/data/r_datasets/wine_binary.csv for
# the numeric covariate z1) read with the level orders in <name>.levels.json.
#
# Monte-Carlo tolerance of adjust = "mvt": emmeans calls mvtnorm::pmvt/qmvt with
# GenzBretz(maxpts = 25000, abseps = 0.001), a randomised quasi-Monte-Carlo rule, after
# set.seed(20231123) below. Its p values are accurate to about 1e-3 absolute (the error
# estimate is at ~99% confidence); `mvt_precise` has them to about 1e-6.
suppressMessages({library(ordinal); library(MASS); library(emmeans); library(mvtnorm); library(jsonlite)})

source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine", "ordstats/datasets")
housing <- read_dataset("housing", "ordstats/datasets")
soup <- read_dataset("soup", "ordstats/datasets")
wine_binary <- read_dataset("wine_binary", "tests/data/r_datasets")
# prior weights 1..4 (the "wine_weighted" data of the tests)
wine_weighted <- transform(wine_binary, w = 1 + floor(z2 + 2))
options(contrasts = c("contr.treatment", "contr.poly"))
emm_options(msg.interaction = FALSE)

out_dir <- "tests/data/reference/emmeans"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
pkgs <- c("emmeans", "ordinal", "MASS", "mvtnorm", "jsonlite")
package_versions <- c(list(R = R.version.string),
  setNames(lapply(pkgs, function(p) as.character(packageVersion(p))), pkgs))
source("tests/r/json_output.R")  # named(), rows(), write_json()
columns <- function(df) {
  out <- lapply(df, function(col) I(if (is.factor(col)) as.character(col) else col))
  list(names = names(df), columns = out)
}

# R's own coefficient vector and covariance, named as the other oracles name them.
fit_parameters <- function(fit) {
  if (inherits(fit, "polr")) {
    cf <- c(fit$zeta, coef(fit))
    V <- vcov(fit)
    V <- V[names(cf), names(cf)]
  } else if (inherits(fit, "clmm")) {
    cf <- coef(fit)
    V <- vcov(fit)   # also has ST1 = log(SD) of the random intercept
    return(list(coef = as.list(cf), vcov_names = rownames(V),
                vcov = unname(lapply(seq_len(nrow(V)), function(i) as.numeric(V[i, ])))))
  } else {
    cf <- coef(fit)
    V <- vcov(fit)
    nms <- names(cf)
    if (!is.null(fit$zeta)) {
      k <- length(fit$zeta)
      nms[length(cf) - k + seq_len(k)] <- paste0("sca.", names(fit$zeta))
    }
    names(cf) <- nms
    dimnames(V) <- list(nms, nms)
  }
  list(coef = as.list(cf), vcov_names = names(cf), vcov = unname(lapply(seq_len(nrow(V)), function(i) as.numeric(V[i, ]))))
}

# The mvt adjustment recomputed precisely: P(max |Z| >= |z_i|) per by group and the
# critical value of the 95% simultaneous intervals.
mvt_precise <- function(obj) {
  s <- as.data.frame(summary(obj, infer = c(TRUE, TRUE), adjust = "none"))
  by <- obj@misc$by.vars
  V <- vcov(obj)
  groups <- if (length(by)) interaction(s[by], drop = TRUE, lex.order = TRUE) else factor(rep(1, nrow(s)))
  ratio <- s[[grep("ratio$", names(s))]]
  p <- crit <- numeric(nrow(s))
  algo <- GenzBretz(maxpts = 2e6, abseps = 1e-6, releps = 0)
  for (g in levels(groups)) {
    rows <- which(groups == g)
    R <- cov2cor(V[rows, rows, drop = FALSE])
    k <- length(rows)
    for (i in rows) {
      set.seed(1)
      p[i] <- 1 - pmvnorm(rep(-abs(ratio[i]), k), rep(abs(ratio[i]), k), corr = R, algorithm = algo)
    }
    set.seed(1)
    crit[rows] <- qmvnorm(0.95, tail = "both.tails", corr = R, algorithm = algo)$quantile
  }
  list(p_value = I(p), critical_value = I(crit))
}

record <- function(r_call, fit) {
  env <- new.env()
  env$fit <- fit
  set.seed(20231123)
  obj <- eval(parse(text = r_call), envir = env)
  kind <- if (grepl("^joint_tests", r_call)) "joint_tests" else if (grepl("^(pairs|contrast)\\(", r_call)) "contrast" else "emmeans"
  out <- list(r_call = r_call, kind = kind)
  if (kind == "joint_tests") {
    out$estimate_column <- "F.ratio"
    out$by <- I(setdiff(names(obj), c("model term", "df1", "df2", "F.ratio", "Chisq", "p.value", "note")))
    out$table <- columns(as.data.frame(obj))
    return(out)
  }
  set.seed(20231123)
  s <- summary(obj, infer = c(TRUE, TRUE))
  out$estimate_column <- attr(s, "estName")
  out$by <- I(if (is.null(attr(s, "by.vars"))) character() else attr(s, "by.vars"))
  out$adjust <- if (is.null(attr(s, "adjust"))) "none" else attr(s, "adjust")
  out$messages <- I(as.character(attr(s, "mesg")))
  out$table <- columns(as.data.frame(s))
  if (identical(out$adjust, "mvt")) out$mvt_precise <- mvt_precise(obj)
  out
}

only <- commandArgs(trailingOnly = TRUE)
write_model <- function(name, dataset, fit_call, fit, calls, notes = list()) {
  if (length(only) && !(name %in% only)) return(invisible(NULL))
  recorded <- lapply(calls, record, fit = fit)
  x <- c(list(case = name, dataset = dataset, fit_call = fit_call,
              package_versions = package_versions, notes = notes),
         fit_parameters(fit), list(calls = recorded))
  write_json(x, file.path(out_dir, paste0(name, ".json")))
  cat(name, ":", length(recorded), "calls\n")
}

adjusts <- c("tukey", "holm", "bonferroni", "sidak", "mvt", "none")
# The calls every cumulative model gets; `f` is the factor of interest, `g` a by factor,
# `y` the response.
standard_calls <- function(f, g, y, scale = FALSE, interaction_adjusts = adjusts,
                           parts = c("emmeans", "weights", "pairs", "contrast", "regrid", "joint")) {
  s <- function(...) sprintf(...)
  groups <- list(
    emmeans = c(
      s('emmeans(fit, ~ %s)', f),
      s('emmeans(fit, ~ %s | %s)', f, g),
      s('emmeans(fit, ~ %s * %s)', f, g),
      s('emmeans(fit, "%s", by = "%s", mode = "linear.predictor")', f, g),
      s('emmeans(fit, ~ cut | %s, mode = "linear.predictor")', f),
      s('emmeans(fit, ~ cut | %s, mode = "cum.prob")', f),
      s('emmeans(fit, ~ cut | %s, mode = "exc.prob")', f),
      s('emmeans(fit, ~ %s | %s, mode = "prob")', y, f),
      s('emmeans(fit, ~ %s | %s * %s, mode = "prob")', y, f, g),
      s('emmeans(fit, ~ %s, mode = "mean.class")', f),
      s('emmeans(fit, ~ %s | %s, mode = "mean.class")', f, g)),
    weights = c(
      s('emmeans(fit, ~ %s, weights = "%s")', f, c("equal", "proportional", "cells", "outer", "flat")),
      s('emmeans(fit, ~ %s | %s, mode = "prob", weights = "%s")', y, f, c("proportional", "cells")),
      s('emmeans(fit, ~ %s, mode = "mean.class", weights = "cells")', f)),
    pairs = c(
      s('pairs(emmeans(fit, ~ %s), adjust = "%s")', f, adjusts),
      s('pairs(emmeans(fit, ~ %s * %s), adjust = "%s")', f, g, interaction_adjusts),
      s('pairs(emmeans(fit, ~ %s | %s), adjust = "%s")', f, g, c("tukey", "holm", "mvt")),
      s('pairs(emmeans(fit, ~ %s | %s, mode = "prob"), adjust = "%s")', f, y, c("none", "holm")),
      s('pairs(emmeans(fit, ~ %s, mode = "mean.class"), adjust = "tukey")', f),
      s('pairs(emmeans(fit, ~ %s * %s), simple = "%s", adjust = "none")', f, g, f)),
    contrast = c(
      s('contrast(emmeans(fit, ~ %s * %s), method = "%s", adjust = "%s")', f, g,
        c("revpairwise", "trt.vs.ctrl", "eff", "consec", "poly", "del.eff"),
        c("holm", "sidak", "bonferroni", "mvt", "none", "tukey")),
      s('contrast(emmeans(fit, ~ %s | %s), method = "trt.vs.ctrl", ref = 2, adjust = "none")', f, g)),
    regrid = c(
      s('regrid(emmeans(fit, ~ cut | %s, mode = "linear.predictor"))', f),
      s('pairs(regrid(emmeans(fit, ~ %s | cut, mode = "linear.predictor")), adjust = "holm")', f)),
    joint = c('joint_tests(fit)', s('joint_tests(fit, by = "%s")', g)))
  calls <- unlist(groups[parts], use.names = FALSE)
  if (scale) calls <- c(calls, s('emmeans(fit, ~ %s, mode = "scale")', f),
                        s('pairs(emmeans(fit, ~ %s, mode = "scale"), adjust = "none")', f))
  calls
}

## --- clm and polr on wine ------------------------------------------------------------
fw <- clm(rating ~ temp + contact, data = wine)
write_model("clm_wine", "wine", "clm(rating ~ temp + contact, data = wine)", fw,
  c(standard_calls("temp", "contact", "rating"),
    'contrast(emmeans(fit, ~ temp * contact), method = list(c1 = c(1, -1, 0, 0), c2 = c(0.5, 0.5, -0.5, -0.5)), adjust = "bonferroni")'))

fwi <- clm(rating ~ temp * contact, data = wine)
write_model("clm_wine_interaction", "wine", "clm(rating ~ temp * contact, data = wine)", fwi,
  standard_calls("temp", "contact", "rating"))

pw <- polr(rating ~ temp + contact, data = wine, Hess = TRUE)
write_model("polr_wine", "wine", "polr(rating ~ temp + contact, data = wine, Hess = TRUE)", pw,
  standard_calls("temp", "contact", "rating"),
  notes = list("polr's optimum (BFGS, default reltol) and Hessian (numerical) differ from clm's at ~1e-6; compare the emmeans layer at R's coef and vcov."))

## --- a numeric covariate (at its mean) -------------------------------------------------
fz <- clm(rating ~ temp + contact + z1, data = wine_binary)
write_model("clm_wine_z1", "wine_binary", "clm(rating ~ temp + contact + z1, data = wine_binary)", fz,
  c(standard_calls("temp", "contact", "rating", parts = "emmeans"),
    'emmeans(fit, ~ temp, at = list(z1 = 1.5))',
    'emmeans(fit, ~ temp | z1, at = list(z1 = c(-1, 0, 1)), mode = "prob")',
    'emmeans(fit, ~ rating | temp, at = list(z1 = 0.25, contact = "yes"), mode = "prob")',
    'emmeans(fit, ~ temp, cov.reduce = median)',
    'emmeans(fit, ~ temp, cov.reduce = median, mode = "mean.class")',
    'pairs(emmeans(fit, ~ contact | temp, mode = "mean.class"), adjust = "none")',
    'ref_grid(fit)'))

## --- scale and nominal effects (clm) ---------------------------------------------------
fs <- clm(rating ~ temp + contact, scale = ~ temp, data = wine)
write_model("clm_wine_scale", "wine", "clm(rating ~ temp + contact, scale = ~ temp, data = wine)", fs,
  standard_calls("temp", "contact", "rating", scale = TRUE))

fn <- clm(rating ~ temp, nominal = ~ contact, data = wine)
write_model("clm_wine_nominal", "wine", "clm(rating ~ temp, nominal = ~ contact, data = wine)", fn,
  c('emmeans(fit, ~ temp)', 'emmeans(fit, ~ temp | contact)',
    'emmeans(fit, ~ cut | temp * contact, mode = "linear.predictor")',
    'emmeans(fit, ~ cut | temp, mode = "cum.prob")',
    'emmeans(fit, ~ rating | temp, mode = "prob")',
    'emmeans(fit, ~ rating | contact, mode = "prob")',
    'emmeans(fit, ~ contact, mode = "mean.class")',
    'pairs(emmeans(fit, ~ contact | rating, mode = "prob"), adjust = "none")',
    'emmeans(fit, ~ contact)', 'pairs(emmeans(fit, ~ temp | contact), adjust = "none")',
    'joint_tests(fit)', 'joint_tests(fit, by = "contact")'))

## --- housing (frequency weights) -------------------------------------------------------
fh <- clm(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)
write_model("clm_housing", "housing", "clm(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)", fh,
  c(standard_calls("Type", "Infl", "Sat", interaction_adjusts = setdiff(adjusts, "mvt")),
    'pairs(emmeans(fit, ~ Type | Cont), adjust = "mvt")',
    'contrast(emmeans(fit, ~ Type), method = list(c1 = c(1, -1, 0, 0), c2 = c(0.5, 0.5, -0.5, -0.5)), adjust = "bonferroni")'),
  notes = list("emmeans' reference-grid cell counts (.wgt.) count ROWS of the data and ignore the prior weights (Freq): weights = \"proportional\"/\"cells\" on housing weigh every one of its 72 rows equally."))

ph <- polr(Sat ~ Infl + Type + Cont, data = housing, weights = Freq, Hess = TRUE)
write_model("polr_housing", "housing", "polr(Sat ~ Infl + Type + Cont, data = housing, weights = Freq, Hess = TRUE)", ph,
  standard_calls("Type", "Infl", "Sat", interaction_adjusts = setdiff(adjusts, "mvt")),
  notes = list("polr's optimum (BFGS, default reltol) and Hessian (numerical) differ from clm's at ~1e-6; compare the emmeans layer at R's coef and vcov."))

## --- soup (unbalanced: the weights matter) ---------------------------------------------
fsoup <- clm(SURENESS ~ PROD + DAY + GENDER, data = soup)
write_model("clm_soup", "soup", "clm(SURENESS ~ PROD + DAY + GENDER, data = soup)", fsoup,
  c(standard_calls("PROD", "GENDER", "SURENESS", parts = c("emmeans", "weights", "joint")),
    'emmeans(fit, ~ DAY * GENDER, weights = "cells")',
    'emmeans(fit, ~ DAY | GENDER, weights = "proportional", mode = "mean.class")',
    'pairs(emmeans(fit, ~ PROD * DAY * GENDER), adjust = "tukey")',
    'contrast(emmeans(fit, ~ PROD * DAY), method = "eff", adjust = "holm")'))

fss <- clm(SURENESS ~ PROD, scale = ~ PROD, data = soup)
write_model("clm_soup_scale", "soup", "clm(SURENESS ~ PROD, scale = ~ PROD, data = soup)", fss,
  c('emmeans(fit, ~ PROD)', 'emmeans(fit, ~ PROD, mode = "scale")',
    'emmeans(fit, ~ SURENESS | PROD, mode = "prob")', 'emmeans(fit, ~ PROD, mode = "mean.class")',
    'emmeans(fit, ~ cut | PROD, mode = "exc.prob")',
    'pairs(emmeans(fit, ~ PROD, mode = "scale"), adjust = "none")',
    'pairs(emmeans(fit, ~ PROD, mode = "mean.class"), adjust = "none")'))

## --- clmm (R's vcov is the inverse of a numerical Hessian) -----------------------------
mw <- clmm(rating ~ temp + contact + (1|judge), data = wine)
write_model("clmm_wine", "wine", "clmm(rating ~ temp + contact + (1|judge), data = wine)", mw,
  c('emmeans(fit, ~ rating | temp, mode = "prob")',
    standard_calls("temp", "contact", "rating", parts = c("emmeans", "regrid", "joint")),
    sprintf('pairs(emmeans(fit, ~ temp * contact), adjust = "%s")', c("tukey", "bonferroni", "sidak", "mvt")),
    'pairs(emmeans(fit, ~ temp | rating, mode = "prob"), adjust = "none")'),
  notes = list("emmeans #154: emmeans(fit, ~ rating | temp, mode = 'prob') gives cold 0.09761 (SE 0.05626), 0.52233 (0.09102)",
               "clmm's vcov includes ST1 = log(SD); emmeans drops it. Predictions are conditional on u = 0."))

ms <- clmm(SURENESS ~ PROD + (1|RESP), data = soup)
write_model("clmm_soup", "soup", "clmm(SURENESS ~ PROD + (1|RESP), data = soup)", ms,
  c('emmeans(fit, ~ PROD)', 'emmeans(fit, ~ SURENESS | PROD, mode = "prob")',
    'emmeans(fit, ~ PROD, mode = "mean.class")', 'emmeans(fit, ~ cut | PROD, mode = "cum.prob")',
    'pairs(emmeans(fit, ~ PROD, mode = "mean.class"), adjust = "none")',
    'pairs(emmeans(fit, ~ PROD | SURENESS, mode = "prob"), adjust = "none")'))

## --- round 5: polr's other links, offsets, prior weights, grids and levels ----------------
link_calls <- c(standard_calls("Type", "Infl", "Sat", parts = c("emmeans", "contrast")),
                'pairs(emmeans(fit, ~ Type), adjust = "tukey")',
                'regrid(emmeans(fit, ~ cut | Type, mode = "linear.predictor"))')
for (method in c("probit", "cloglog", "cauchit", "loglog")) {
  name <- paste0("polr_housing_", method)
  # cauchit: polr's glm start fails on housing; start at the logistic fit's estimates
  start <- if (method == "cauchit") ", start = c(coef(ph), ph$zeta)" else ""
  call <- sprintf('polr(Sat ~ Infl + Type + Cont, data = housing, weights = Freq, method = "%s"%s, Hess = TRUE)', method, start)
  # loglog: emmeans' probability modes use an inverse link that is not polr's (cumulative
  # probabilities outside [0, 1]); the tests skip those calls (R_WRONG in test_emmeans_r.py)
  write_model(name, "housing", call, eval(parse(text = call)), link_calls,
    notes = list("polr at R's coef and vcov (BFGS optimum, numerical Hessian)."))
}

po <- polr(rating ~ temp + contact + offset(z1), data = wine_binary, Hess = TRUE)
write_model("polr_wine_offset", "wine_binary", "polr(rating ~ temp + contact + offset(z1), data = wine_binary, Hess = TRUE)", po,
  c('emmeans(fit, ~ temp)', 'emmeans(fit, ~ temp | contact, mode = "linear.predictor")',
    'emmeans(fit, ~ temp, at = list(z1 = 1))', 'emmeans(fit, ~ cut | temp, mode = "linear.predictor")',
    'pairs(emmeans(fit, ~ temp | contact), adjust = "none")'),
  notes = list("the offset's variable z1 is a covariate of the reference grid, at its mean unless at= gives it; mode = 'prob'/'mean.class' fail in emmeans 1.8.4 for a polr with an offset ('by' variables are not all in the grid), and a clm with offset(z1) gives nonEst"))

fww <- clm(rating ~ temp + contact, weights = w, data = wine_weighted)
write_model("clm_wine_weights", "wine_weighted", "clm(rating ~ temp + contact, weights = w, data = wine_weighted)", fww,
  c(standard_calls("temp", "contact", "rating", parts = c("emmeans", "weights")),
    'contrast(emmeans(fit, ~ temp * contact), method = "poly", adjust = "none")'),
  notes = list("emmeans' cell counts count rows, not prior weights"))

fz2 <- clm(rating ~ temp + contact + z1, data = wine_binary)
write_model("clm_wine_z1_grid", "wine_binary", "clm(rating ~ temp + contact + z1, data = wine_binary)", fz2,
  c('emmeans(fit, ~ temp | z1, cov.reduce = range)',
    'emmeans(fit, ~ z1 | temp, cov.reduce = range, mode = "mean.class")',
    'emmeans(fit, ~ temp, at = list(z1 = c(-1, 1)))',
    sprintf('emmeans(fit, ~ temp, at = list(z1 = c(-1, 0.5, 1)), weights = "%s")', c("outer", "flat", "proportional", "cells")),
    'emmeans(fit, ~ z1)',
    'contrast(emmeans(fit, ~ z1, at = list(z1 = c(-1, 0, 1, 2))), method = "poly", adjust = "none")',
    'contrast(emmeans(fit, ~ z1 | temp, at = list(z1 = c(-1, 0, 1))), method = "consec", adjust = "sidak")',
    'update(emmeans(fit, ~ temp * contact), level = 0.9)',
    'update(pairs(emmeans(fit, ~ temp * contact), adjust = "tukey"), level = 0.9)',
    'update(emmeans(fit, ~ rating | temp, mode = "prob"), level = 0.8)',
    'contrast(emmeans(fit, ~ temp * contact), method = "trt.vs.ctrl", ref = 3, adjust = "mvt")',
    'contrast(emmeans(fit, ~ temp * contact), method = "del.eff", adjust = "holm")',
    'contrast(emmeans(fit, ~ contact | temp, mode = "mean.class"), method = "revpairwise", adjust = "none")'))

mw2 <- clmm(rating ~ temp * contact + (1|judge), data = wine)
write_model("clmm_wine_contrasts", "wine", "clmm(rating ~ temp * contact + (1|judge), data = wine)", mw2,
  c('emmeans(fit, ~ temp * contact)', 'emmeans(fit, ~ temp * contact, mode = "linear.predictor")',
    'emmeans(fit, ~ cut | temp, mode = "exc.prob")', 'emmeans(fit, ~ contact, mode = "mean.class", weights = "equal")',
    sprintf('contrast(emmeans(fit, ~ temp * contact), method = "%s", adjust = "%s")',
            c("poly", "consec", "eff", "del.eff", "trt.vs.ctrl", "pairwise"),
            c("none", "sidak", "holm", "bonferroni", "mvt", "tukey")),
    'pairs(emmeans(fit, ~ contact | temp, mode = "mean.class"), adjust = "none")',
    'update(emmeans(fit, ~ temp, mode = "mean.class"), level = 0.9)'),
  notes = list("clmm: random effects at zero; vcov includes ST1 (log SD), which emmeans drops"))

fso <- clm(rating ~ temp + contact, scale = ~ contact + offset(z2), data = wine_binary)
write_model("clm_wine_scale_offset", "wine_binary", "clm(rating ~ temp + contact, scale = ~ contact + offset(z2), data = wine_binary)", fso,
  c('emmeans(fit, ~ temp)', 'emmeans(fit, ~ temp, at = list(z2 = 1))',
    'emmeans(fit, ~ rating | temp, mode = "prob")', 'emmeans(fit, ~ contact, mode = "scale")',
    'emmeans(fit, ~ cut | contact, mode = "linear.predictor", at = list(z2 = c(-1, 1)))',
    'pairs(emmeans(fit, ~ temp | contact, mode = "mean.class"), adjust = "none")'),
  notes = list("a scale offset is evaluated on the reference grid (its variable at its mean, or at=), unlike a location offset"))
