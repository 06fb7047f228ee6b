# Robust (sandwich) and cluster-robust covariances of clm fits from R's sandwich
# package, for tests/test_covariance.py.  Run from the repository root:
#   Rscript tests/data/r/make_sandwich_reference.R
# Writes tests/data/reference/sandwich_*.json.
library(ordinal)
library(sandwich)
library(jsonlite)

data_dir <- "ordstats/datasets"
read_dataset <- function(name) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")))
  lev <- fromJSON(file.path(data_dir, paste0(name, ".levels.json")))
  for (v in names(lev$ordered)) d[[v]] <- factor(d[[v]], levels = lev$ordered[[v]], ordered = TRUE)
  for (v in names(lev$factors)) d[[v]] <- factor(d[[v]], levels = lev$factors[[v]])
  d
}
named <- function(x) as.list(setNames(unname(x), names(x)))
out <- function(case, r_call, fit, extra) {
  res <- c(list(case = case, kind = "table", r_call = r_call,
                package = "sandwich", package_version = as.character(packageVersion("sandwich")),
                loglik = as.numeric(logLik(fit)), coef = named(coef(fit))), extra)
  write(toJSON(res, auto_unbox = TRUE, digits = 15, pretty = TRUE),
        file.path("tests/data/reference", paste0(case, ".json")))
}

wine <- read_dataset("wine")
fit <- clm(rating ~ temp + contact, data = wine)
out("sandwich_wine", "clm(rating ~ temp + contact, data = wine)", fit, list(
  notes = c("se_robust = sqrt(diag(sandwich(fit))) (HC0)",
            "se_cluster = sqrt(diag(vcovCL(fit, cluster = ~judge))) (factor G/(G-1) for clm)",
            "se_cluster_hc0 = sqrt(diag(vcovCL(fit, cluster = ~judge, type = 'HC0', cadjust = FALSE)))"),
  se_robust = named(sqrt(diag(sandwich(fit)))),
  vcov_robust = unname(sandwich(fit)),
  se_cluster = named(sqrt(diag(vcovCL(fit, cluster = ~judge)))),
  se_cluster_hc0 = named(sqrt(diag(vcovCL(fit, cluster = ~judge, type = "HC0", cadjust = FALSE))))
))

# Frequency weights: sandwich's estfun.clm multiplies each row's score by its
# weight and treats the row as one unit, so on the weighted data it is a
# covariance clustered by cell.  Expanding the rows (Freq copies each) gives the
# robust covariance of the 1681 individual observations, which ordstats computes
# from the weighted data.
housing <- read_dataset("housing")
expanded <- housing[rep(seq_len(nrow(housing)), housing$Freq), ]
fit_h <- clm(Sat ~ Infl + Type + Cont, data = expanded)
out("sandwich_housing_expanded",
    "clm(Sat ~ Infl + Type + Cont, data = housing[rep(1:72, housing$Freq), ])", fit_h, list(
  notes = c("se_robust = sqrt(diag(sandwich(fit))) on the data expanded by Freq",
            "equals the frequency-weighted robust covariance of the weighted fit"),
  se_robust = named(sqrt(diag(sandwich(fit_h))))
))
