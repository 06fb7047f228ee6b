# VGAM 1.1-7 references for the secondary results of ordstats' sratio, cratio and acat
# fits (tests/families/test_step_vglm_secondary.py): non-parallel effects of some
# terms only (factor terms, `parallel = TRUE ~ -1 + x` too) with weights and an
# offset, non-logit links, reverse = TRUE; Wald and profile confidence intervals,
# predict(type = "response") on new data given as factor levels, fitted values and
# the LR test of parallel against non-parallel effects (lrtest()).
# VGAM's confint(method = "profile") and predict(newdata) fail for fits with an
# offset; those entries are null.
#
# Run from the repository root: Rscript tests/r/step_vglm_secondary.R
suppressMessages({library(VGAM); library(jsonlite)})
data_dir <- "ordstats/datasets"
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # named(), rows(), write_json()
housing <- read_dataset("housing")
soup <- read_dataset("soup")
housing_offset <- 0.1 * ((seq_len(nrow(housing)) - 1) %% 4)
ctrl <- vglm.control(epsilon = 1e-13, maxit = 200)
newdata <- data.frame(
  Infl = factor(c("Low", "High", "Medium"), levels = levels(housing$Infl)),
  Type = factor(c("Tower", "Atrium", "Terrace"), levels = levels(housing$Type)),
  Cont = factor(c("High", "Low", "High"), levels = levels(housing$Cont)))
h <- "Sat ~ Infl + Type + Cont"
calls <- c(
  sratio_offset = sprintf("vglm(%s, family = sratio(parallel = FALSE ~ Cont), data = housing, weights = Freq, offset = housing_offset, control = ctrl)", h),
  cratio_probit = sprintf("vglm(%s, family = cratio(link = \"probitlink\", parallel = FALSE ~ Infl), data = housing, weights = Freq, control = ctrl)", h),
  acat_reverse_offset = sprintf("vglm(%s, family = acat(parallel = TRUE ~ -1 + Type, reverse = TRUE), data = housing, weights = Freq, offset = housing_offset, control = ctrl)", h),
  sratio_cloglog_reverse = sprintf("vglm(%s, family = sratio(link = \"clogloglink\", parallel = FALSE ~ Cont, reverse = TRUE), data = housing, weights = Freq, control = ctrl)", h),
  cratio_cauchit = sprintf("vglm(%s, family = cratio(link = \"cauchitlink\", parallel = TRUE), data = housing, weights = Freq, control = ctrl)", h),
  soup_sratio_cloglog_reverse = "vglm(SURENESS ~ PROD + DAY + COLD, family = sratio(link = \"clogloglink\", parallel = FALSE ~ PROD, reverse = TRUE), data = soup, control = ctrl)",
  soup_cratio_cauchit = "vglm(SURENESS ~ PROD + DAY, family = cratio(link = \"cauchitlink\", parallel = FALSE ~ DAY), data = soup, control = ctrl)")
cases <- list()
for (nm in names(calls)) {
  fit <- eval(parse(text = calls[[nm]]))
  ci <- confint(fit)
  profile <- tryCatch(confint(fit, method = "profile"), error = function(e) NULL)
  has_newdata <- !grepl("offset", calls[[nm]]) && grepl("housing", calls[[nm]])
  cases[[nm]] <- list(
    r_call = calls[[nm]], loglik = as.numeric(logLik(fit)), aic = AIC(fit),
    coef = named(coef(fit)), se = named(sqrt(diag(vcov(fit)))),
    wald_lower = named(ci[, 1]), wald_upper = named(ci[, 2]),
    profile_lower = if (is.null(profile)) NULL else named(profile[, 1]),
    profile_upper = if (is.null(profile)) NULL else named(profile[, 2]),
    fitted_first5 = rows(fitted(fit)[1:5, ]),
    newdata_prob = if (has_newdata) rows(predict(fit, newdata = newdata, type = "response")) else NULL)
}
parallel <- vglm(Sat ~ Infl + Type + Cont, family = sratio(parallel = TRUE), data = housing,
                 weights = Freq, control = ctrl)
nonparallel <- vglm(Sat ~ Infl + Type + Cont, family = sratio(parallel = FALSE ~ Cont),
                    data = housing, weights = Freq, control = ctrl)
lr <- lrtest(nonparallel, parallel)@Body
write_json(list(
  package = "VGAM", package_version = as.character(packageVersion("VGAM")),
  newdata = newdata, cases = cases,
  lrtest_sratio_cont = list(chisq = lr$Chisq[2], df = lr$Df[2], p = lr[["Pr(>Chisq)"]][2]),
  notes = c("SEs and Wald intervals are VGAM's: inverse expected information.",
            "housing_offset <- 0.1 * ((seq_len(nrow(housing)) - 1) %% 4)")),
  "tests/data/reference/step_vglm_secondary.json")
