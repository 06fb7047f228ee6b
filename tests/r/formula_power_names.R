# R's labels of power and function terms in clm, for tests/test_formula_power_names.py:
# coefficient names, drop1's and anova(type = "III")'s rows and the estimates
# (x^2 must be a power, not XOR).
# Data: ordinal's wine with x = as.numeric(judge) / 3 and z = as.numeric(bottle).
# Run from the repository root: Rscript tests/r/formula_power_names.R
suppressMessages({library(ordinal); library(jsonlite)})
out_dir <- "tests/data/reference/formula_names"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
w <- wine
w$x <- as.numeric(w$judge) / 3
w$z <- as.numeric(w$bottle)
one <- function(formula) {
  fit <- clm(as.formula(formula), data = w)
  d <- drop1(fit, test = "Chi")
  list(formula = formula, coef_names = names(coef(fit)), coef = unname(coef(fit)),
       logLik = as.numeric(logLik(fit)), drop1_rows = rownames(d), drop1_lrt = d$LRT,
       anova_rows = rownames(anova(fit, type = "III")))
}
cases <- list(
  one("rating ~ temp + I(x^2)"),
  one("rating ~ temp + I(x^2):z"),
  one("rating ~ temp + poly(x, 2)"),
  one("rating ~ temp + I(log(x))")
)
writeLines(toJSON(cases, digits = NA, auto_unbox = TRUE, na = "null"),
           file.path(out_dir, "clm_wine_power_names.json"))
