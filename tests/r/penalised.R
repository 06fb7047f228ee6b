# glmnet (binary logistic elastic net) and Firth / bias-reduced (brglm2) references.
#
# Run from the repository root (glmnet 4.1-6, brglm2 0.9, jsonlite):
#   Rscript tests/r/penalised.R
# Writes tests/data/r_datasets/wine_binary.csv (+ .levels.json) and
# tests/data/reference/penalised/<case>.json.
suppressMessages({library(glmnet); library(brglm2); library(jsonlite)})

source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine", "ordstats/datasets")
rd <- "tests/data/r_datasets"
out_dir <- "tests/data/reference/penalised"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
pkgs <- c("ordinal", "MASS", "VGAM", "glmnet", "brglm2", "jsonlite")
package_versions <- c(list(R = R.version.string),
  setNames(lapply(pkgs, function(p) as.character(packageVersion(p))), pkgs))
source("tests/r/json_output.R")  # named(), rows(), write_json()

## --- the binary data set (vendored) --------------------------------------------
wb <- wine[c("rating", "temp", "contact", "judge")]
wb$y <- as.integer(as.integer(as.character(wine$rating)) >= 3)
set.seed(20240601); wb$z1 <- round(rnorm(72), 6)
set.seed(20240602); wb$z2 <- round(runif(72, -2, 2), 6)
# perfectly separating column: sep > 0 exactly when y = 1
set.seed(20240603); wb$sep <- round((2 * wb$y - 1) * (0.25 + runif(72)), 6)
write.csv(wb, file.path(rd, "wine_binary.csv"), row.names = FALSE)
meta <- list(dataset = "wine_binary", source = "derived from ordinal::wine",
  description = "wine with y = 1 if rating >= 3 (0/1), two simulated numeric covariates and a perfectly separating column",
  derivation = paste("y = as.integer(rating >= 3). z1: set.seed(20240601); round(rnorm(72), 6).",
                     "z2: set.seed(20240602); round(runif(72, -2, 2), 6).",
                     "sep: set.seed(20240603); round((2*y - 1) * (0.25 + runif(72)), 6)  (sep > 0 <=> y = 1)."),
  n_rows = nrow(wb), columns = names(wb),
  column_types = list(rating = "ordered", temp = "factor", contact = "factor", judge = "factor",
                      y = "numeric", z1 = "numeric", z2 = "numeric", sep = "numeric"),
  response = "y", weights = NULL,
  ordered = list(rating = levels(wine$rating)),
  factors = list(temp = levels(wine$temp), contact = levels(wine$contact), judge = levels(wine$judge)),
  csv_numeric_format = "R write.csv; z1, z2, sep rounded to 6 decimals so the CSV is exact")
writeLines(toJSON(meta, auto_unbox = TRUE, pretty = TRUE, null = "null"), file.path(rd, "wine_binary.levels.json"))
wb <- read_dataset("wine_binary", rd)   # fit exactly the numbers in the CSV

X <- model.matrix(~ temp + contact + z1 + z2, data = wb)[, -1]
y <- wb$y
n <- nrow(X)
lambdas <- c(0.2, 0.1, 0.05, 0.02, 0.005)
objective_text <- paste(
  "glmnet binomial objective (weights 1): minimise over (b0, b)",
  "  -(1/n) * sum_i [ y_i * (b0 + x_i'b) - log(1 + exp(b0 + x_i'b)) ]  +  lambda * ( (1 - alpha)/2 * ||b||_2^2 + alpha * ||b||_1 )",
  "i.e. (1/n) * sum of deviance_i / 2 + lambda * penalty; the intercept b0 is NOT penalised.",
  "standardize = TRUE: glmnet standardises each column of X (mean 0, variance with divisor n) BEFORE applying the",
  "penalty, i.e. the penalty is on b_j * sd_j (sd with divisor n), and returns b on the original scale.")

kkt <- function(b0, b, lambda, alpha, sdx) {
  eta <- b0 + drop(X %*% b); p <- plogis(eta)
  obj_pen <- if (is.null(sdx)) 1 else sdx
  bs <- b * obj_pen
  obj <- -mean(y * eta - log1p(exp(eta))) + lambda * ((1 - alpha) / 2 * sum(bs^2) + alpha * sum(abs(bs)))
  g <- -drop(crossprod(X, y - p)) / n / obj_pen   # gradient of the smooth part w.r.t. standardised b
  g <- g + lambda * (1 - alpha) * bs
  viol <- ifelse(bs != 0, abs(g + lambda * alpha * sign(bs)), pmax(abs(g) - lambda * alpha, 0))
  list(objective = obj, intercept_score = mean(y - p), max_kkt_violation = max(viol))
}

for (std in c(FALSE, TRUE)) for (alpha in c(1, 0.5, 0)) {
  if (std && alpha != 0.5) next   # one standardize = TRUE case
  call_text <- sprintf("glmnet(X, y, family = \"binomial\", alpha = %s, lambda = c(0.2, 0.1, 0.05, 0.02, 0.005), standardize = %s, thresh = 1e-14, maxit = 1e7)",
                       format(alpha), std)
  fit <- eval(parse(text = call_text))
  B <- as.matrix(coef(fit))
  sdx <- if (std) apply(X, 2, function(v) sqrt(mean((v - mean(v))^2))) else NULL
  name <- sprintf("glmnet_alpha%s%s", sub("\\.", "", format(alpha)), if (std) "_standardize" else "")
  out <- list(case = paste0("penalised_", name), set = "generated", kind = "fit", dataset = "wine_binary",
    r_call = call_text, x_construction = "X <- model.matrix(~ temp + contact + z1 + z2, data = wine_binary)[, -1]; y <- wine_binary$y",
    package = "glmnet", package_version = as.character(packageVersion("glmnet")), package_versions = package_versions,
    objective = objective_text, alpha = alpha, standardize = std, lambda = as.numeric(fit$lambda),
    coef_names = rownames(B),
    coef_by_lambda = lapply(seq_along(fit$lambda), function(k) named(B[, k], rownames(B))),
    dev_ratio = as.numeric(fit$dev.ratio), nulldev = fit$nulldev, df = as.numeric(fit$df), npasses = fit$npasses, jerr = fit$jerr,
    check = lapply(seq_along(fit$lambda), function(k) kkt(B[1, k], B[-1, k], fit$lambda[k], alpha, sdx)),
    sd_x_divisor_n = if (std) named(sdx) else NULL,
    notes = c("glmnet's solutions satisfy the KKT conditions to ~3e-9 (see check), so compare coefficients at ~1e-8.", "check[k]: our evaluation of the objective at glmnet's solution, the intercept score mean(y - p) and the max KKT violation (on the scale the penalty applies to)",
              "lambda is the user-supplied decreasing sequence (warm starts along it, as glmnet does)"))
  write_json(out, file.path(out_dir, paste0(name, ".json")))
  cat(name, "max KKT", max(sapply(out$check, `[[`, "max_kkt_violation")), "\n")
}

## --- Firth (brglm2 AS_mean) ------------------------------------------------------
glm_case <- function(name, call_text, notes = character()) {
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text)), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") })
  sm <- summary(fit)$coefficients
  V <- vcov(fit)
  out <- list(case = paste0("penalised_", name), set = "generated", kind = "fit", dataset = "wine_binary",
    r_call = call_text, package = if (grepl("brglm", call_text)) "brglm2" else "stats",
    package_version = if (grepl("brglm", call_text)) as.character(packageVersion("brglm2")) else as.character(getRversion()),
    package_versions = package_versions,
    coef = named(coef(fit)), se = named(sm[, 2], rownames(sm)), vcov = rows(V), vcov_names = colnames(V),
    loglik = as.numeric(logLik(fit)), deviance = fit$deviance, converged = fit$converged, iter = fit$iter,
    type = fit$type, warnings = I(unique(warns)),
    notes = c("brglm2 default epsilon is 1e-6; the calls use epsilon = 1e-12.", "AS_mean = Firth (1993) mean-bias reduction; for logistic regression it equals maximising loglik + 0.5*log det(X'WX) (Jeffreys prior). SEs from the inverse expected information at the estimates.",
              notes))
  write_json(out, file.path(out_dir, paste0(name, ".json")))
  cat(name, "converged", fit$converged, "\n")
}
glm_case("firth", "glm(y ~ temp + contact + z1 + z2, family = binomial, data = wb, method = \"brglmFit\", type = \"AS_mean\", epsilon = 1e-12, maxit = 1000)")
glm_case("ml_binary", "glm(y ~ temp + contact + z1 + z2, family = binomial, data = wb, control = glm.control(epsilon = 1e-14, maxit = 100))", "plain ML for comparison")
glm_case("firth_separated", "glm(y ~ temp + contact + z1 + z2 + sep, family = binomial, data = wb, method = \"brglmFit\", type = \"AS_mean\", epsilon = 1e-12, maxit = 1000)",
         "sep separates y perfectly: ML estimates do not exist, Firth's are finite")
glm_case("ml_separated", "glm(y ~ temp + contact + z1 + z2 + sep, family = binomial, data = wb)",
         "ML under perfect separation: glm stops with huge coefficients and warns (fitted probabilities 0 or 1)")

## --- bracl (adjacent-category, bias-reduced) on wine ------------------------------
for (ty in c("AS_mean", "ML")) {
  call_text <- sprintf("bracl(rating ~ temp + contact, data = wine, parallel = TRUE, type = \"%s\", epsilon = 1e-12, maxit = 1000)", ty)
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text)), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") })
  V <- vcov(fit)
  out <- list(case = paste0("penalised_bracl_wine_", tolower(ty)), set = "generated", kind = "fit", dataset = "wine",
    r_call = call_text, package = "brglm2", package_version = as.character(packageVersion("brglm2")),
    package_versions = package_versions,
    parametrisation = "brglm2::bracl: log(P(Y = j) / P(Y = j+1)) = 'j:(Intercept)' + x'beta, j = 1..K-1 (parallel = TRUE: one beta). Positive beta = LOWER categories. Checked: the ML fit is exactly VGAM acat(parallel = TRUE) with every coefficient negated (VGAM wine acat: (Intercept):1 = 0.9899046, tempwarm = 1.6884843).",
    coef = named(coef(fit)), se = named(sqrt(diag(V)), colnames(V)), vcov = rows(V), vcov_names = colnames(V),
    loglik = as.numeric(logLik(fit)), converged = fit$converged, iter = fit$iter, type = fit$type,
    warnings = I(unique(warns)),
    fitted_first5 = rows(fitted(fit)[1:5, , drop = FALSE]))
  write_json(out, file.path(out_dir, paste0("bracl_wine_", tolower(ty), ".json")))
  cat("bracl", ty, "loglik", out$loglik, "\n"); print(coef(fit))
}
