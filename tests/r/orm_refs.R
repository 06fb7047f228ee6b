# References for the quantities of a continuous-response fit: rms::orm with its
# Quantile(), Mean() and ExProb() (rms 6.5), with the intervals they form.
# Each data set's rows, the R call and R's numbers go to one JSON file in
# tests/data/reference/orm/, so the Python tests need neither R nor the data
# packages.  Run from the repository root:  Rscript tests/r/orm_refs.R
suppressMessages({library(rms); library(MASS); library(jsonlite)})

out_dir <- "tests/data/reference/orm"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

probs <- c(0.1, 0.25, 0.5, 0.75, 0.9)
level <- 0.95

reference <- function(name, source, data, formula, family, ordstats_link, rows, ys) {
  data <- as.data.frame(data)
  # converged far beyond orm's default (eps = 0.005 in -2 log L), so that the
  # quantities compare at 1e-6 rather than at the default's convergence error
  fit <- orm(formula, data = data, family = family, x = TRUE, eps = 1e-12, maxit = 100)
  newdata <- data[rows, , drop = FALSE]
  X <- predict(fit, newdata, type = "x")
  lp <- predict(fit, newdata)
  qu <- Quantile(fit)
  mean_of <- Mean(fit)
  exprob <- ExProb(fit)
  quantiles <- lapply(probs, function(q) {
    z <- qu(q, X = X, conf.int = level)
    lim <- attr(z, "limits")
    list(q = q, estimate = unname(as.vector(z)), lower = unname(lim$lower),
         upper = unname(lim$upper), estimate_from_lp = unname(as.vector(qu(q, lp = lp))))
  })
  m <- mean_of(X = X, conf.int = level)
  lim <- attr(m, "limits")
  ex <- exprob(X = X, y = ys, conf.int = level)
  exlim <- attr(ex, "limits")
  ex_lp <- exprob(lp = lp, y = ys)
  coefs <- coef(fit)
  slopes <- coefs[-seq_len(fit$non.slopes)]
  list(
    dataset = name, source = source,
    r_call = sprintf("orm(%s, family = \"%s\", eps = 1e-12, maxit = 100); Quantile/Mean/ExProb with X and conf.int = %g",
                     deparse(formula), family, level),
    rms_version = as.character(packageVersion("rms")),
    formula = deparse(formula), response = all.vars(formula)[1],
    family = family, ordstats_link = ordstats_link, conf_level = level,
    data = as.list(data[, all.vars(formula)]),
    newdata_rows = rows,
    n_levels = length(fit$yunique),
    slopes = as.list(slopes),
    slope_se = as.list(sqrt(diag(vcov(fit)))[names(slopes)]),
    loglik = as.numeric(logLik(fit)),
    quantile = quantiles,
    mean = list(estimate = unname(as.vector(m)), lower = unname(lim$lower),
                upper = unname(lim$upper)),
    exprob = list(y = ys, estimate = unname(ex$prob), lower = unname(exlim$lower),
                  upper = unname(exlim$upper), estimate_from_lp = unname(ex_lp$prob))
  )
}

write_case <- function(case, file) {
  writeLines(toJSON(case, digits = NA, auto_unbox = TRUE, pretty = FALSE),
             file.path(out_dir, paste0(file, ".json")))
}

write_case(reference(
  "Boston", "MASS::Boston", Boston, medv ~ lstat + rm, "logistic", "logit",
  rows = c(1:3, 100, 200, 300, 400, 500), ys = c(4, 5, 21.7, 30, 37.35, 50, 51)
), "boston_logistic")

air <- na.omit(airquality[, c("Ozone", "Temp", "Wind")])
write_case(reference(
  "airquality", "datasets::airquality (complete rows of Ozone, Temp, Wind)", air,
  Ozone ~ Temp + Wind, "probit", "probit",
  rows = c(1:5, 50, 100), ys = c(0, 1, 20, 20.5, 60, 168, 200)
), "airquality_probit")

write_case(reference(
  "mtcars", "datasets::mtcars", mtcars, mpg ~ wt + hp, "loglog", "cloglog",
  rows = c(1:6, 20, 31), ys = c(10, 10.4, 15, 19.2, 25.1, 33.9, 40)
), "mtcars_loglog")
cat("wrote", list.files(out_dir), "\n")
