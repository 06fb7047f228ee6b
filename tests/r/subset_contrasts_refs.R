# R's clm(..., subset =) and clm(..., contrasts =) on the vendored MASS::survey data
# (tests/data/r_datasets/survey_students.csv), for tests/test_subset_contrasts.py.
#
# Writes tests/data/r/subset_contrasts.json: per case the exact R call, coefficients
# (R's names), standard errors, logLik with its df, nobs, and the probabilities
# predicted for the first rows of the data (response left out).
#
# Run from the repository root:  Rscript tests/r/subset_contrasts_refs.R
suppressMessages({
  library(jsonlite)
  library(ordinal)
})

source("tests/r/write_dataset.R")  # read_dataset()
survey_students <- read_dataset("survey_students", data_dir = "tests/data/r_datasets")
clap_matrix <- matrix(c(-1, 0, 1, 1, -2, 1), 3)  # linear and quadratic, no column names
clap_named <- clap_matrix
colnames(clap_named) <- c("lin", "quad")

cases <- list(
  contr_sum_helmert = 'clm(Exer ~ Fold + Clap + Age, data = survey_students, contrasts = list(Fold = "contr.sum", Clap = "contr.helmert"))',
  contr_poly_sas = 'clm(Exer ~ Sex + Fold + Pulse, data = survey_students, contrasts = list(Fold = "contr.poly", Sex = "contr.SAS"))',
  contr_nominal_treatment = 'clm(Exer ~ Smoke, nominal = ~ Sex, data = survey_students, contrasts = list(Sex = "contr.sum", Smoke = "contr.treatment"))',
  contr_matrix = "clm(Exer ~ Clap + Sex, data = survey_students, contrasts = list(Clap = clap_matrix))",
  contr_matrix_named = "clm(Exer ~ Clap + Sex, data = survey_students, contrasts = list(Clap = clap_named))",
  contr_interaction = 'clm(Exer ~ Sex * Fold, data = survey_students, contrasts = list(Fold = "contr.sum"))',
  subset_scale = 'clm(Exer ~ scale(Age) + Sex, data = survey_students, subset = Smoke != "Never")',
  subset_poly = 'clm(Exer ~ poly(Age, 2) + Sex, data = survey_students, subset = Height > 170)',
  subset_weights_offset = "clm(Exer ~ Sex + offset(Age / 10), data = survey_students, weights = Pulse / 70, subset = Height > 165)",
  subset_scale_effect = 'clm(Exer ~ Sex, scale = ~ scale(Height), data = survey_students, subset = W.Hnd == "Right")',
  subset_contrasts = 'clm(Exer ~ Fold + Smoke, data = survey_students, subset = Sex == "Male", contrasts = list(Fold = "contr.sum"))'
)

num <- function(x) {
  x <- unclass(x)
  out <- lapply(x, function(v) if (is.na(v)) "NA" else v)
  if (!is.null(names(x))) names(out) <- names(x)
  out
}

out <- list()
for (case in names(cases)) {
  fit <- eval(parse(text = cases[[case]]))
  cf <- coef(fit)
  nz <- length(fit$zeta)
  if (nz) names(cf)[length(cf) - rev(seq_len(nz)) + 1] <- paste0("sca.", names(fit$zeta))
  se <- sqrt(diag(vcov(fit)))
  names(se) <- names(cf)[!is.na(cf)]
  nd <- survey_students[1:8, setdiff(names(survey_students), "Exer")]
  used <- unique(c(all.vars(fit$terms), all.vars(fit$S.terms), all.vars(fit$nom.terms)))
  keep <- complete.cases(nd[, intersect(used, names(nd)), drop = FALSE])
  p <- predict(fit, newdata = nd[keep, ], type = "prob")$fit
  out[[case]] <- list(r_call = cases[[case]], coef = num(cf), se = num(se),
                      loglik = as.numeric(logLik(fit)), df = attr(logLik(fit), "df"),
                      nobs = nobs(fit), newdata_rows = which(keep),
                      newdata_prob = unname(p))
}
out$r_version <- R.version.string
out$ordinal_version <- as.character(packageVersion("ordinal"))
writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA),
           "tests/data/r/subset_contrasts.json")
cat("wrote", length(cases), "cases\n")
