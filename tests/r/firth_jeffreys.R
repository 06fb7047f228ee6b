# Firth's penalty with a non-canonical link: brglm2's MPL_Jeffreys (loglik + 1/2 log det I,
# what ordstats' fit(penalty="firth") maximises) against its AS_mean (mean-bias reduction,
# the same only for the logit link).
#
# Run from the repository root (brglm2 0.9, jsonlite):
#   Rscript tests/r/firth_jeffreys.R
# Reads tests/data/r_datasets/wine_binary.csv (written by tests/r/penalised.R) and writes
# tests/data/reference/penalised/firth_<link>_<type>.json.
suppressMessages({library(brglm2); library(jsonlite)})
source("tests/r/json_output.R")  # named(), rows(), write_json()
wb <- read.csv("tests/data/r_datasets/wine_binary.csv")
out_dir <- "tests/data/reference/penalised"
package_versions <- list(R = R.version.string, brglm2 = as.character(packageVersion("brglm2")),
                         jsonlite = as.character(packageVersion("jsonlite")))
for (link in c("probit", "cloglog")) for (type in c("MPL_Jeffreys", "AS_mean")) {
  # y = 1 above the threshold: probit models P(y = 1); cloglog models P(y = 0) = F(theta - x'b)
  response <- if (link == "cloglog") "I(1 - y)" else "y"
  call_text <- sprintf(paste0("glm(%s ~ temp + contact + z1 + z2 + sep, family = binomial(\"%s\"), ",
    "data = wb, method = \"brglmFit\", control = brglm_control(type = \"%s\", epsilon = 1e-12, maxit = 1000))"),
    response, link, type)
  warns <- character()
  fit <- withCallingHandlers(eval(parse(text = call_text)), warning = function(w) {
    warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") })
  V <- vcov(fit)
  out <- list(case = sprintf("penalised_firth_%s_%s", link, tolower(type)), set = "generated",
    kind = "fit", dataset = "wine_binary", r_call = call_text, package = "brglm2",
    package_version = package_versions$brglm2, package_versions = package_versions,
    coef = named(coef(fit)), se = named(sqrt(diag(V)), colnames(V)), vcov = rows(V),
    vcov_names = colnames(V), loglik = as.numeric(logLik(fit)), converged = fit$converged,
    iter = fit$iter, type = fit$type, warnings = I(unique(warns)),
    notes = c("sep separates y: ML estimates do not exist.",
              "MPL_Jeffreys (a = 1/2) maximises loglik + 1/2 log det I; AS_mean solves the mean-bias-reducing score, equal to it only for canonical links (logit).",
              "probit: ordstats' threshold = -(Intercept), slopes as given; cloglog (response 1 - y): threshold = (Intercept), slopes negated."))
  write_json(out, file.path(out_dir, sprintf("firth_%s_%s.json", link, tolower(type))))
  cat(link, type, "converged", fit$converged, "\n"); print(coef(fit))
}
