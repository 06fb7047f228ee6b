# Time ordinal::clm on a data set written by bench_fit.py.
#
# Usage: Rscript bench_clm.R DATA.csv REPEATS
#
# DATA.csv has an integer column "y" (category codes) and numeric columns
# x1..xp.  Reading the file and starting R are not timed: each repeat times
# clm() (model frame, Newton fit) plus the standard errors from vcov(), with
# system.time()'s elapsed seconds.  Results go to stdout as "KEY value" lines
# that bench_fit.py parses.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2L) stop("usage: Rscript bench_clm.R DATA.csv REPEATS")
path <- args[[1L]]
repeats <- as.integer(args[[2L]])

suppressPackageStartupMessages(library(ordinal))

read_data <- function(path) {
  if (requireNamespace("data.table", quietly = TRUE)) {
    as.data.frame(data.table::fread(path, showProgress = FALSE))
  } else {
    utils::read.csv(path)
  }
}

d <- read_data(path)
d$y <- factor(d$y, levels = sort(unique(d$y)), ordered = TRUE)
xnames <- setdiff(names(d), "y")
form <- stats::reformulate(xnames, response = "y")

times <- numeric(repeats)
for (i in seq_len(repeats)) {
  times[i] <- system.time({
    fit <- clm(form, data = d, link = "logit")
    se <- sqrt(diag(vcov(fit)))
  })[["elapsed"]]
}

out <- function(key, value) cat(key, paste(format(value, digits = 17), collapse = " "), "\n")
out("R_VERSION", paste(R.version$major, R.version$minor, sep = "."))
out("ORDINAL_VERSION", as.character(utils::packageVersion("ordinal")))
out("TIMES", times)
out("MEDIAN", stats::median(times))
out("LLF", as.numeric(logLik(fit)))
out("NITER", fit$niter[[1L]])
out("CONVERGED", as.integer(fit$convergence$code == 0L))
out("MAXGRAD", fit$maxGradient)
out("BETA", unname(coef(fit)[xnames]))
out("SE_FINITE", as.integer(all(is.finite(se))))
out("CHECKSUM", sum(as.matrix(d[xnames])))
