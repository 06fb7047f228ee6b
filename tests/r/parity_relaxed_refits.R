## nominal_test / scale_test rows that R's clm gives as NA because its refit stops on
## "maximum number of consecutive Newton modifications reached" (maxModIter = 5),
## refitted with more modified iterations allowed (maxModIter = 50, maxIter = 1000):
## R then reaches the maximum, and these are the rows ordstats reports.  Run from the
## repository root as
##   Rscript tests/r/parity_relaxed_refits.R
## writes tests/data/r/parity_results/relaxed_refits.json: per case and test, the
## term, R's default refit (logLik, code), the longer refit (logLik, code, max|grad|)
## and its row (Df, logLik, LRT, Pr(>Chi)) against the model's own fit.
suppressMessages({library(ordinal); library(jsonlite)})
data_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")  # read_sweep_datasets()
read_sweep_datasets()

longer <- clm.control(maxModIter = 50, maxIter = 1000)
relaxed_row <- function(case, test, term, base_call, relaxed_call) {
  base <- eval(parse(text = base_call))
  short <- suppressWarnings(eval(parse(text = relaxed_call)))
  long_call <- sub(")$", ", control = longer)", relaxed_call)
  long <- suppressWarnings(eval(parse(text = long_call)))
  lrt <- 2 * (as.numeric(logLik(long)) - as.numeric(logLik(base)))
  df <- long$edf - base$edf
  list(case = case, test = test, term = term, base = base_call, relaxed = long_call,
       default_logLik = as.numeric(logLik(short)), default_code = short$convergence$code,
       logLik = as.numeric(logLik(long)), code = long$convergence$code,
       max_grad = max(abs(long$gradient)), Df = df, LRT = lrt,
       p = pchisq(lrt, df, lower.tail = FALSE))
}
rows <- list(
  relaxed_row("clm_esoph_alcohol", "nominal_test", "agegp",
              "clm(alcgp ~ agegp + tobgp, data = esoph_d, weights = ncontrols)",
              "clm(alcgp ~ agegp + tobgp, nominal = ~ agegp, data = esoph_d, weights = ncontrols)"),
  relaxed_row("clm_mtcars_cyl_ordered", "scale_test", "cyl",
              'clm(carb ~ cyl + wt, data = mtcars_d, link = "probit")',
              'clm(carb ~ cyl + wt, scale = ~ cyl, data = mtcars_d, link = "probit")')
)
out <- list(package_version = as.character(packageVersion("ordinal")), rows = rows)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           "tests/data/r/parity_results/relaxed_refits.json")
