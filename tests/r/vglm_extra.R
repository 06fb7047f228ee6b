# Extra VGAM reference results for ordstats' sequential and adjacent-category
# families: links other than logit, non-parallel (nominal) effects and offsets.
# The public vglm_*.json files (from ../shared/reference) cover logit/parallel.
#
# Run from the repository root (needs VGAM 1.1-7 and jsonlite):
#   Rscript tests/r/vglm_extra.R
# Writes tests/data/reference/vglm_extra_<case>.json in the schema of the
# public files (a subset of their fields).
suppressMessages({library(VGAM); library(jsonlite)})

data_dir <- "ordstats/datasets"
source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine")
housing <- read_dataset("housing")
wine_offset <- 0.25 * ((seq_len(nrow(wine)) - 1) %% 3)
ctrl <- vglm.control(epsilon = 1e-13, maxit = 100)

source("tests/r/json_output.R")  # named(), rows(), write_json()

case <- function(name, call_text, dataset, notes = character()) {
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text)), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning")
  })
  V <- vcov(fit)
  out <- list(
    case = paste0("vglm_extra_", name), set = "generated", kind = "fit", dataset = dataset,
    r_call = call_text, package = "VGAM", package_version = as.character(packageVersion("VGAM")),
    link = paste(fit@misc$link, collapse = ","), n = nrow(fit@x), nobs = nobs(fit),
    loglik = as.numeric(logLik(fit)), aic = AIC(fit), bic = BIC(fit), df = length(coef(fit)),
    coef = named(coef(fit)), se = named(sqrt(diag(V))),
    vcov = unname(lapply(seq_len(nrow(V)), function(i) as.numeric(V[i, ]))),
    vcov_names = colnames(V),
    pred_prob = unname(lapply(1:10, function(i) as.numeric(fitted(fit)[i, ]))),
    pred_prob_levels = colnames(fitted(fit)),
    extra = list(
      predictors_names = fit@misc$predictors.names,
      linear_predictors_first10 = unname(lapply(1:10, function(i) as.numeric(predict(fit)[i, ])))
    ),
    warnings = warns,
    notes = c("SEs are VGAM's: inverse EXPECTED information (Fisher scoring).",
              "Under epsilon = 1e-13 a half-step warning only means the criterion cannot improve further.",
              notes)
  )
  path <- file.path("tests/data/reference", paste0("vglm_extra_", name, ".json"))
  writeLines(toJSON(out, auto_unbox = TRUE, digits = I(15), pretty = TRUE), path)
}

w <- "rating ~ temp + contact"
for (fam in c("sratio", "cratio")) {
  for (lk in c("probitlink", "clogloglink", "cauchitlink")) {
    for (rev in c(FALSE, TRUE)) {
      nm <- paste0("wine_", fam, "_", sub("link$", "", lk), if (rev) "_reverse" else "")
      case(nm, sprintf(
        "vglm(%s, family = %s(link = \"%s\", parallel = TRUE%s), data = wine, control = ctrl)",
        w, fam, lk, if (rev) ", reverse = TRUE" else ""), "wine")
    }
  }
}
for (fam in c("sratio", "cratio", "acat")) {
  for (rev in c(FALSE, TRUE)) {
    nm <- paste0("wine_", fam, "_nonparallel", if (rev) "_reverse" else "")
    case(nm, sprintf(
      "vglm(%s, family = %s(parallel = FALSE ~ contact%s), data = wine, control = ctrl)",
      w, fam, if (rev) ", reverse = TRUE" else ""), "wine",
      "contact has category-specific effects contactyes:j, temp a shared slope")
  }
}
for (fam in c("sratio", "acat")) {
  case(paste0("wine_", fam, "_offset"), sprintf(
    "vglm(%s, family = %s(parallel = TRUE), data = wine, offset = wine_offset, control = ctrl)",
    w, fam), "wine",
    "wine_offset <- 0.25 * ((seq_len(nrow(wine)) - 1) %% 3), added to every linear predictor")
}
case("housing_cratio_nonparallel",
  "vglm(Sat ~ Infl + Type + Cont, family = cratio(parallel = FALSE ~ Cont), data = housing, weights = Freq, control = ctrl)",
  "housing")
case("housing_sratio_cloglog",
  "vglm(Sat ~ Infl + Type + Cont, family = sratio(link = \"clogloglink\", parallel = TRUE), data = housing, weights = Freq, control = ctrl)",
  "housing")
