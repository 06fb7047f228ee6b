# The names emmeans gives contrasts: numeric-looking levels prefixed by their factor's name
# (enhance.levels) and labels with an operator sign in parentheses (parens).
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_contrast_labels.R
# Reads tests/data/coded_factor.csv (columns y, x, k) and adds factors made from k and x
# (the test makes the same columns); writes tests/data/reference/emmeans_contrast_labels.json
# for tests/results/test_emmeans_labels.py: for each case its R call and contrast names.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
d <- read.csv("tests/data/coded_factor.csv")
d$y <- factor(d$y, ordered = TRUE)
d$f <- factor(d$k)                                  # levels 1 2 3
d$g <- factor(c("a-b", "c+d", "e f")[d$k])          # operator signs, a space
d$h <- factor(c("1a", "2", "3")[d$k])               # some levels numeric-looking, not all
d$m <- factor(c(-1, 0.5, 2)[d$k])                   # negative and decimal numbers
d$e <- factor(ifelse(d$x > 0, "y", "x"))
d$n <- factor(ifelse(d$x > 0, 1, 0))
labels_of <- function(con) as.character(summary(con)$contrast)
cases <- list(
  list(formula = "y ~ x + f", specs = "~ f", method = "pairwise"),
  list(formula = "y ~ x + f", specs = "~ f", method = "consec"),
  list(formula = "y ~ x + f", specs = "~ f", method = "eff"),
  list(formula = "y ~ x + f", specs = "~ f", method = "poly"),
  list(formula = "y ~ x + g", specs = "~ g", method = "pairwise"),
  list(formula = "y ~ x + g", specs = "~ g", method = "eff"),
  list(formula = "y ~ x + h", specs = "~ h", method = "pairwise"),
  list(formula = "y ~ x + m", specs = "~ m", method = "pairwise"),
  list(formula = "y ~ x + m", specs = "~ m", method = "trt.vs.ctrl"),
  list(formula = "y ~ g * e", specs = "~ g * e", method = "pairwise"),
  list(formula = "y ~ h * e", specs = "~ h * e", method = "pairwise"),
  list(formula = "y ~ f * n", specs = "~ f * n", method = "consec"),
  list(formula = "y ~ f * n", specs = "~ f | n", method = "pairwise")
)
out <- lapply(cases, function(case) {
  fit <- clm(as.formula(case$formula), data = d)
  emm <- suppressMessages(emmeans(fit, as.formula(case$specs)))
  c(case, list(contrast = labels_of(contrast(emm, case$method))))
})
at_x <- suppressMessages(emmeans(clm(y ~ x + f, data = d), ~ x, at = list(x = c(-1, 1))))
out[[length(out) + 1]] <- list(formula = "y ~ x + f", specs = "~ x", at = list(x = c(-1, 1)),
                               method = "pairwise", contrast = labels_of(pairs(at_x)))
write_json(out, "tests/data/reference/emmeans_contrast_labels.json")
