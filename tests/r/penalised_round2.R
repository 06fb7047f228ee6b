# Round-2 references for penalised fits: brglm2::bracl (adjacent-category logit, bias
# reduction) on stemcell and housing with frequency weights, parallel and non-parallel;
# brglm2::brglmFit on the weighted binary data for logit/probit/cloglog; glmnet with case
# weights, an offset, standardize and the default lambda sequence, and cv.glmnet with them.
#
# Run from the repository root (R 4.2, brglm2 0.9, glmnet 4.1, jsonlite):
#   Rscript tests/r/penalised_round2.R
# Reads tests/data/r_datasets/{stemcell,wine_binary}.csv and ordstats/datasets/housing.csv;
# writes tests/data/reference/penalised/round2.json.
suppressMessages({library(brglm2); library(glmnet); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # named(), rows(), write_json()
stem <- read_dataset("stemcell", "tests/data/r_datasets")
stem$religion_num <- as.numeric(stem$religion)   # 1, 2, 3 (brglm2's own example)
housing <- read_dataset("housing", "ordstats/datasets")
wb <- read_dataset("wine_binary", "tests/data/r_datasets")
wb$w <- rep(c(1, 2, 0.5), length.out = nrow(wb))
wb$off <- round(seq(-0.5, 0.5, length.out = nrow(wb)), 6)

quiet <- function(call_text) {
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text)), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") })
  list(fit = fit, warnings = unique(warns))
}
brglm_out <- function(call_text) {
  q <- quiet(call_text); fit <- q$fit; V <- vcov(fit)
  list(r_call = call_text, type = fit$type, coef = named(coef(fit)),
       se = named(sqrt(diag(V)), colnames(V)), loglik = as.numeric(logLik(fit)),
       converged = fit$converged, n_warnings = length(q$warnings), first_warning = q$warnings[1])
}

bracl <- list()
for (par in c(TRUE, FALSE)) for (ty in c("ML", "AS_mean", "MPL_Jeffreys", "AS_median")) {
  key <- sprintf("stemcell_%s_%s", if (par) "parallel" else "nonparallel", ty)
  bracl[[key]] <- brglm_out(sprintf(paste0("bracl(research ~ religion_num + gender, weights = frequency, ",
    "data = stem, parallel = %s, type = \"%s\", epsilon = 1e-12, maxit = 1000)"), par, ty))
}
for (ty in c("ML", "AS_mean", "MPL_Jeffreys")) {
  bracl[[paste0("housing_parallel_", ty)]] <- brglm_out(sprintf(paste0(
    "bracl(Sat ~ Infl + Type + Cont, weights = Freq, data = housing, parallel = TRUE, ",
    "type = \"%s\", epsilon = 1e-12, maxit = 1000)"), ty))
}

binary <- list()
for (link in c("logit", "probit", "cloglog")) for (ty in c("ML", "AS_mean", "MPL_Jeffreys", "AS_median")) {
  response <- if (link == "cloglog") "I(1 - y)" else "y"
  binary[[paste(link, ty, sep = "_")]] <- brglm_out(sprintf(paste0(
    "glm(%s ~ temp + contact + z1 + z2, family = binomial(\"%s\"), weights = w, data = wb, ",
    "method = \"brglmFit\", control = brglm_control(type = \"%s\", epsilon = 1e-12, maxit = 1000))"),
    response, link, ty))
}

for (link in c("logit", "probit")) {
  binary[[paste0(link, "_offset_MPL_Jeffreys")]] <- brglm_out(sprintf(paste0(
    "glm(y ~ temp + contact + z1 + z2, family = binomial(\"%s\"), weights = w, offset = off, data = wb, ",
    "method = \"brglmFit\", control = brglm_control(type = \"MPL_Jeffreys\", epsilon = 1e-12, maxit = 1000))"), link))
}

X <- model.matrix(~ temp + contact + z1 + z2, data = wb)[, -1]
glm_cases <- list()
for (std in c(FALSE, TRUE)) for (a in c(0.3, 1)) {
  call_text <- sprintf(paste0("glmnet(X, wb$y, family = \"binomial\", weights = wb$w, offset = wb$off, ",
    "alpha = %s, nlambda = 12, lambda.min.ratio = 0.02, standardize = %s, thresh = 1e-16, maxit = 1e7)"), a, std)
  fit <- eval(parse(text = call_text))
  B <- as.matrix(coef(fit))
  glm_cases[[sprintf("alpha%s_std%s", a, std)]] <- list(r_call = call_text, alpha = a, standardize = std,
    lambda = as.numeric(fit$lambda), coef_names = rownames(B), coef = rows(t(B)))
}
foldid <- rep(1:4, length.out = nrow(wb))
cvfit <- cv.glmnet(X, wb$y, family = "binomial", weights = wb$w, offset = wb$off, foldid = foldid,
  lambda = c(0.1, 0.03, 0.01, 0.003), alpha = 0.3, standardize = TRUE, thresh = 1e-14, maxit = 1e6,
  type.measure = "deviance")
cv_case <- list(r_call = paste("cv.glmnet(X, wb$y, family = 'binomial', weights = wb$w, offset = wb$off,",
  "foldid = rep(1:4, length.out = 72), lambda = c(0.1, 0.03, 0.01, 0.003), alpha = 0.3, standardize = TRUE,",
  "thresh = 1e-14, type.measure = 'deviance')"), foldid = foldid, lambda = cvfit$lambda,
  cvm = cvfit$cvm, cvsd = cvfit$cvsd, note = "cvm, cvsd: binomial deviance, twice ordstats' log loss; each fold standardised on its own rows")
out <- list(
  bracl = bracl, binary = binary, glmnet = glm_cases, cv_glmnet = cv_case,
  data = list(stemcell = "religion_num = as.numeric(religion)",
              wine_binary = "w = rep(c(1, 2, 0.5), length.out = 72); off = round(seq(-0.5, 0.5, length.out = 72), 6)"),
  notes = c("bracl: log P(Y = j) / P(Y = j + 1) = 'j:(Intercept)' + x'beta_(j); ordstats' acat is its negation.",
            "cloglog fits model P(y = 0) (response 1 - y) so that ordstats' threshold = (Intercept), slopes negated.",
            "glmnet: sequence of nlambda values from lambda_max down to lambda.min.ratio * lambda_max (it may stop early).",
            "bracl warns 'non-integer x' (dmultinom on its internally adjusted counts); its coefficients and logLik are those of the weighted multinomial likelihood.",
            "binomial logLik with non-integer weights: R rounds the trials, so rows of weight 0.5 (round(0.5) = 0) drop out of logLik(); ordstats' llf is sum w_i log p_i, which differs by those rows' 0.5 log p_i (the coefficients and SEs agree).",
            "glmnet's penalty.factor and intercept = FALSE have no ordstats counterpart (thresholds are never penalised and always estimated).",
            "AS_median (median-bias reduction) is not an ordstats estimator; it is here to show how far it is from AS_mean."),
  packages = list(R = R.version.string, brglm2 = as.character(packageVersion("brglm2")),
                  glmnet = as.character(packageVersion("glmnet"))))
write_json(out, "tests/data/reference/penalised/round2.json")
