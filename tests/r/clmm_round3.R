# ordinal::clmm references for what clmm_extra.R / clmm_slopes.R do not cover:
# symmetric2 thresholds, links and structured thresholds under adaptive quadrature,
# a numeric grouping column, subset=, zero and fractional weights with an offset, NA in
# the grouping factor, and single-term fits on carrots / the Chem97 sample.
#
# Run from the repository root (ordinal 2022.11.16, jsonlite; ~1 min):
#   Rscript tests/r/clmm_round3.R
# Writes tests/data/reference/clmm_round3.json.
#
# Every single scalar term is fitted twice.  R's default path for it (C code, "ssr") gives
# the estimates; its standard errors come from finite differences of a Laplace objective
# whose inner mode search stops at gradTol, and under symmetric2 they are far off
# (chem97 spacing.1: 0.0387 against 0.0308).  `se_env` is the same model fitted with
# clmm.control(useMatrix = TRUE) (R's general path), whose SEs agree with a numerical
# Hessian of the exact objective; the tests compare with those.
# R's single-term code swaps cloglog and loglog (clmm_extra/README.md): `ordstats_link`
# names the link of the model R actually fitted.
suppressMessages({library(ordinal); library(jsonlite)})
data_dir <- "ordstats/datasets"
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # named(), write_json()

wine <- read_dataset("wine")
i <- seq_len(nrow(wine))
wine$jnum <- as.integer(as.character(wine$judge)) * 10
wine$wfrac <- 0.5 + ((i - 1) %% 4) * 0.3
wine$off <- 0.1 * ((i - 1) %% 5)
wine$wzero <- ifelse(wine$judge == "3" | i <= 2, 0, 1)
wine$judge_na <- wine$judge
wine$judge_na[c(2, 5)] <- NA
ca <- read.csv("tests/data/carrots.csv", colClasses = c(Consumer = "factor", Product = "factor",
                                                          Homesize = "factor"))
ca$P <- factor(ca$Preference, ordered = TRUE)
ch <- read.csv("tests/data/chem97_12lea.csv", colClasses = c(lea = "factor", school = "factor",
                                                               gender = "factor"))
ch$S <- factor(ch$score, ordered = TRUE)

W <- "rating ~ temp + contact + (1|judge)"
WO <- "rating ~ temp + contact + offset(off) + (1|judge)"
# name = data, formula, link, threshold, nAGQ, weights column, subset (R expression text)
specs <- list(
  wine_sym2 = list("wine", W, "logit", "symmetric2", 1),
  wine_sym2_agq5 = list("wine", W, "logit", "symmetric2", 5),
  wine_probit_agq5 = list("wine", W, "probit", "flexible", 5),
  wine_cauchit_agq5 = list("wine", W, "cauchit", "flexible", 5),
  wine_cloglog_agq5 = list("wine", W, "cloglog", "flexible", 5),
  wine_equidistant_agq5 = list("wine", W, "logit", "equidistant", 5),
  wine_symmetric_agq5 = list("wine", W, "logit", "symmetric", 5),
  wine_numeric_group = list("wine", "rating ~ temp + contact + (1|jnum)", "logit", "flexible", 1),
  wine_subset = list("wine", W, "logit", "flexible", 1, NULL, "judge != '3'"),
  wine_zero_weights = list("wine", W, "logit", "flexible", 1, "wzero"),
  wine_na_group = list("wine", "rating ~ temp + contact + (1|judge_na)", "logit", "flexible", 1),
  wine_wfrac_offset_probit = list("wine", WO, "probit", "flexible", 1, "wfrac"),
  wine_wfrac_offset_probit_agq7 = list("wine", WO, "probit", "flexible", 7, "wfrac"),
  carrots_sym2_agq7 = list("ca", "P ~ sens1 + sens2 + (1|Consumer)", "logit", "symmetric2", 7),
  carrots_probit_symmetric = list("ca", "P ~ sens1 + sens2 + Homesize + (1|Consumer)", "probit",
                                  "symmetric", 1),
  carrots_loglog_crossed = list("ca", "P ~ sens1 + sens2 + (1|Consumer) + (1|Product)", "loglog",
                                "flexible", 1),
  chem_probit_agq5 = list("ch", "S ~ gcsecnt + gender + (1|school)", "probit", "flexible", 5),
  chem_sym2 = list("ch", "S ~ gcsecnt + gender + (1|lea)", "logit", "symmetric2", 1),
  chem_nested_probit = list("ch", "S ~ gcsecnt + gender + (1|lea/school)", "probit", "flexible", 1)
)

fit_spec <- function(s, use_matrix) {
  d <- get(s[[1]])
  if (length(s) >= 7) d <- d[eval(parse(text = s[[7]]), d), ]
  if (length(s) >= 6 && !is.null(s[[6]])) d$.w <- d[[s[[6]]]] else d$.w <- 1
  suppressWarnings(clmm(as.formula(s[[2]]), data = d, weights = .w, link = s[[3]],
                        threshold = s[[4]], nAGQ = s[[5]],
                        control = clmm.control(gradTol = 1e-8, useMatrix = use_matrix)))
}
single <- function(f) is.null(f$Zt)  # the ssr path keeps no Zt
swap <- c(logit = "logit", probit = "probit", cauchit = "cauchit", cloglog = "loglog",
          loglog = "cloglog")

out <- list(package_version = as.character(packageVersion("ordinal")))
for (nm in names(specs)) {
  s <- specs[[nm]]
  fit <- fit_spec(s, FALSE)
  se <- sqrt(diag(vcov(fit)))[names(coef(fit))]
  se_env <- NULL
  if (single(fit) && s[[5]] == 1) {
    env <- fit_spec(s, TRUE)
    se_env <- named(sqrt(diag(vcov(env)))[names(coef(fit))])
  }
  vc <- VarCorr(fit)
  out[[nm]] <- list(
    data = s[[1]], formula = s[[2]], link = s[[3]], threshold = s[[4]], nagq = s[[5]],
    weights = if (length(s) >= 6 && !is.null(s[[6]])) s[[6]] else NULL,
    subset = if (length(s) >= 7) s[[7]] else NULL,
    ordstats_link = if (single(fit)) swap[[s[[3]]]] else s[[3]],
    loglik = fit$logLik, nobs = nobs(fit), df = attr(logLik(fit), "df"), aic = AIC(fit),
    bic = BIC(fit), max_grad = max(abs(fit$gradient)), coef = named(coef(fit)),
    se = named(se), se_env = se_env,
    sd = lapply(vc, function(V) as.numeric(attr(V, "stddev"))),
    ngroups = as.list(fit$dims$nlev.re))
  cat(nm, fit$logLik, "\n")
}
write_json(out, "tests/data/reference/clmm_round3.json")
