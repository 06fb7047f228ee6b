# Time ordinal::clmm on a CSV that bench/bench_clmm.py wrote (--write-csv), for the
# benchmarks beyond tests/r/clmm_bench.R's own data (crossed random effects).
#
# Usage (from the repository root):
#   Rscript tests/r/clmm_bench_fit.R <data.csv> "<formula>"
# e.g. Rscript tests/r/clmm_bench_fit.R /tmp/crossed.csv "y ~ x1 + ... + x10 + (1|g) + (1|h)"
# Prints elapsed_seconds, logLik, the SD of each random term and the coefficients
# in the format bench/bench_clmm.py --r-output reads.
suppressMessages(library(ordinal))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) stop("usage: Rscript tests/r/clmm_bench_fit.R <data.csv> <formula>")
d <- read.csv(args[1])
d$y <- factor(d$y, levels = 1:5, ordered = TRUE)
for (v in intersect(c("g", "h"), names(d))) d[[v]] <- factor(d[[v]])
cat(sprintf("n = %d, formula %s\n", nrow(d), args[2]))
elapsed <- system.time(fit <- clmm(as.formula(args[2]), data = d))[["elapsed"]]
cat(sprintf("elapsed_seconds %.3f\n", elapsed))
sds <- sapply(VarCorr(fit), function(v) sqrt(v[1, 1]))
cat(sprintf("logLik %.10f  %s  max|grad| %.2e\n", as.numeric(logLik(fit)),
            paste(sprintf("sd(%s) %.8f", names(sds), sds), collapse = "  "),
            max(abs(fit$gradient))))
print(coef(fit), digits = 12)
