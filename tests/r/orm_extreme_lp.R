# rms::Quantile at a linear predictor so extreme that every P(Y >= v_j) rounds
# to 1: its interpolation weights are 0/0 and R's approx() drops those knots,
# reading the line from (1, v_1) to (0, v_K).  Writes
# tests/data/reference/orm_extreme/mtcars_extreme.json (rms 6.5).
# Run from the repository root:  Rscript tests/r/orm_extreme_lp.R
suppressMessages({library(rms); library(jsonlite)})

out_dir <- "tests/data/reference/orm_extreme"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

data <- mtcars[, c("mpg", "wt")]
fit <- orm(mpg ~ wt, data = data, family = "logistic", x = TRUE, eps = 1e-12, maxit = 100)
# wt = -30 puts every cut-point's P(Y >= v_j) at 1 in double precision
newdata <- data.frame(wt = c(2.62, 3.44, 5.42, -30))
X <- predict(fit, newdata, type = "x")
probs <- c(0.1, 0.5, 0.9)
qu <- Quantile(fit)
quantiles <- lapply(probs, function(q) {
  z <- qu(q, X = X, conf.int = 0.95)
  lim <- attr(z, "limits")
  list(q = q, estimate = unname(as.vector(z)), lower = unname(lim$lower),
       upper = unname(lim$upper))
})
case <- list(
  r_call = "orm(mpg ~ wt, data = mtcars, family = \"logistic\", eps = 1e-12, maxit = 100); Quantile(fit)(q, X = X, conf.int = 0.95)",
  rms_version = as.character(packageVersion("rms")),
  formula = "mpg ~ wt", data = as.list(data), newdata = as.list(newdata),
  exceed_at_last_row = unname(plogis(coef(fit)[seq_len(fit$non.slopes)] + X[4, ] * coef(fit)["wt"])),
  loglik = as.numeric(logLik(fit)), quantile = quantiles
)
writeLines(toJSON(case, digits = NA, auto_unbox = TRUE), file.path(out_dir, "mtcars_extreme.json"))
