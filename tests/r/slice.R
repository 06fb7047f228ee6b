# R ordinal's slice(): the log-likelihood through the estimates along each parameter,
# the others held at their estimates, relative to the maximum, with its quadratic
# approximation -(par - mle)^2 / curv^2 / 2 (curv = sqrt(1 / diag(Hessian))).
# Run from the repository root: Rscript tests/r/slice.R
suppressMessages({library(ordinal); library(MASS); library(jsonlite)})
out_dir <- "tests/data/reference/slice"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
write_slice <- function(name, call, fit, ...) {
  s <- slice(fit, ...)
  parts <- lapply(names(s), function(p) list(
    parameter = p, value = s[[p]][[1]], logLik = s[[p]]$logLik,
    quad = if (is.null(s[[p]]$quad)) NULL else s[[p]]$quad))
  writeLines(toJSON(list(r_call = call, coef = unname(coef(fit)), names = names(coef(fit)),
                         logLik = as.numeric(logLik(fit)), slices = parts),
                    digits = NA, auto_unbox = TRUE, null = "null"),
             file.path(out_dir, paste0(name, ".json")))
}
hs <- housing
fit <- clm(rating ~ temp + contact, data = wine)
write_slice("wine", "slice(clm(rating ~ temp + contact, data = wine))", fit)
write_slice("wine_lambda_grid", "slice(clm(rating ~ temp + contact, data = wine), parm = c(2, 5), lambda = 2, grid = 7)",
            fit, parm = c(2, 5), lambda = 2, grid = 7)
write_slice("wine_names_noquad", "slice(clm(rating ~ temp + contact, data = wine), parm = c('contactyes', '1|2'), grid = 5, quad.approx = FALSE)",
            fit, parm = c("contactyes", "1|2"), grid = 5, quad.approx = FALSE)
fit <- clm(Sat ~ Infl + Type, scale = ~ Cont, weights = Freq, data = hs, link = "probit")
write_slice("housing_scale_probit", "slice(clm(Sat ~ Infl + Type, scale = ~ Cont, weights = Freq, data = housing, link = 'probit'), grid = 9)",
            fit, grid = 9)
fit <- clm(rating ~ temp + contact, data = wine, threshold = "equidistant", link = "cloglog")
write_slice("wine_equidistant_cloglog", "slice(clm(rating ~ temp + contact, data = wine, threshold = 'equidistant', link = 'cloglog'), grid = 11)",
            fit, grid = 11)
