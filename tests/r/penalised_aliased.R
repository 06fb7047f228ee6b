# glmnet on a design with an exactly aliased column (x3 = x1 + x2): glmnet keeps every
# column, as ordstats with collinear="keep" does (a penalty estimates aliased columns).
#
# Run from the repository root (R 4.2, glmnet 4.1, jsonlite):
#   Rscript tests/r/penalised_aliased.R
# Writes tests/data/r_datasets/aliased_binary.csv (y, x1, x2, x3; simulated here) and
# tests/data/reference/penalised_aliased.json: for the lasso (alpha = 1) and an elastic
# net (alpha = 0.5) at lambda = 0.05, standardize = FALSE, the intercept and slopes
# (glmnet's sign: P(y = 1) = plogis(a0 + x'b)) and the objective
# -mean(loglik) + lambda * (alpha |b|_1 + (1 - alpha) |b|_2^2 / 2).
suppressMessages({library(glmnet); library(jsonlite)})
set.seed(20261127)
n <- 100
x1 <- round(rnorm(n), 4); x2 <- round(rnorm(n), 4); x3 <- x1 + x2
y <- as.integer(1.5 * x1 + x2 + rlogis(n) > 0)
d <- data.frame(y = y, x1 = x1, x2 = x2, x3 = x3)
write.csv(d, "tests/data/r_datasets/aliased_binary.csv", row.names = FALSE)
X <- as.matrix(d[, c("x1", "x2", "x3")])
fits <- list()
for (a in c(1, 0.5)) {
  f <- glmnet(X, d$y, family = "binomial", alpha = a, lambda = 0.05, standardize = FALSE,
              thresh = 1e-16, maxit = 1e7)
  b <- as.vector(as.matrix(coef(f)))
  eta <- b[1] + X %*% b[-1]
  objective <- -mean(d$y * eta - log1p(exp(eta))) +
    0.05 * (a * sum(abs(b[-1])) + (1 - a) * sum(b[-1]^2) / 2)
  fits[[length(fits) + 1]] <- list(alpha = a, lambda = 0.05, intercept = b[1],
                                   coef = b[-1], objective = objective)
}
writeLines(toJSON(list(call = "glmnet(X, y, family = 'binomial', lambda = 0.05, standardize = FALSE, thresh = 1e-16)",
                       fits = fits), digits = NA, auto_unbox = TRUE),
           "tests/data/reference/penalised_aliased.json")
