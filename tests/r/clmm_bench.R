# Benchmark: ordinal::clmm on synthetic data (K = 5, one random intercept).
# Measured once (ordinal 2022.11.16, R 4.2.2, the project's 2-core machine, nothing
# else running): n = 10000, groups = 500, seed 20240601 -> clmm 276.0 s elapsed
# (4:39 wall for the whole script, 254 MB max RSS); logLik -14278.2785648438,
# sd(g) 0.96751850, max|grad| 5.95e-03, "relative convergence (4)".
#
# Usage (from the repository root):
#   Rscript tests/r/clmm_bench.R <out.csv> [n = 10000] [groups = 500] [seed = 20240601]
# Writes the data to <out.csv> (y ordered 1..5, g factor, x1..x10 rounded to 6
# decimals so the CSV is exact), re-reads it, fits
#   clmm(y ~ x1 + ... + x10 + (1|g), data = d)
# with R's default control and prints the elapsed seconds, logLik, the SD and
# the coefficients, so Python can fit the same CSV and compare.
suppressMessages(library(ordinal))
args <- commandArgs(trailingOnly = TRUE)
if (!length(args)) stop("usage: Rscript tests/r/clmm_bench.R <out.csv> [n] [groups] [seed]")
out_csv <- args[1]
n <- if (length(args) >= 2) as.integer(args[2]) else 10000L
G <- if (length(args) >= 3) as.integer(args[3]) else 500L
seed <- if (length(args) >= 4) as.integer(args[4]) else 20240601L
p <- 10L
theta <- c(-2, -0.7, 0.7, 2)          # true thresholds, K = 5
beta <- seq(-0.5, 0.5, length.out = p)
sigma <- 1

set.seed(seed)
g <- rep_len(seq_len(G), n)[sample.int(n)]           # balanced groups, shuffled
X <- matrix(round(rnorm(n * p), 6), n, p, dimnames = list(NULL, paste0("x", seq_len(p))))
u <- rnorm(G, sd = sigma)
latent <- drop(X %*% beta) + u[g] + rlogis(n)
y <- findInterval(latent, theta) + 1L                 # P(Y <= j) = F(theta_j - x'beta - u)
d <- data.frame(y = y, g = g, X)
write.csv(d, out_csv, row.names = FALSE)

d <- read.csv(out_csv)
d$y <- factor(d$y, levels = 1:5, ordered = TRUE)
d$g <- factor(d$g, levels = seq_len(G))
form <- as.formula(paste("y ~", paste(colnames(X), collapse = " + "), "+ (1|g)"))
t0 <- proc.time()[["elapsed"]]
fit <- clmm(form, data = d)
el <- proc.time()[["elapsed"]] - t0
cat(sprintf("n = %d, groups = %d, p = %d, K = 5\n", n, G, p))
cat(sprintf("elapsed_seconds %.3f\n", el))
cat(sprintf("logLik %.10f  sd(g) %.8f  max|grad| %.2e  convergence %d (%s)\n",
            fit$logLik, fit$ST[[1]][1, 1], max(abs(fit$gradient)), fit$optRes$convergence, fit$optRes$message))
print(coef(fit), digits = 10)
