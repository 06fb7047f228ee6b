# Contrasts of nonEst means in emmeans' nonlinear modes: wine without its warm/yes rows,
# rating ~ temp * contact + judge (temp:contact aliased).  The judge means within warm
# average over contact, whose yes cell has no rows: nonEst in every mode.  Their
# differences are estimable on the latent and linear-predictor scales (judge's
# coefficients) and nonEst on the probability and mean-class scales.
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_nonlinear_nonest.R
# Reads ordstats/datasets/wine.csv; writes tests/data/reference/emmeans_nonlinear_nonest.json
# for tests/results/test_emmeans_nonest.py.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)
wine$temp <- factor(wine$temp, levels = c("cold", "warm"))
wine$contact <- factor(wine$contact, levels = c("no", "yes"))
wine$judge <- factor(wine$judge, levels = 1:9)
data <- subset(wine, !(temp == "warm" & contact == "yes"))
fit <- clm(rating ~ temp * contact + judge, data = data)

specs <- list(latent = ~ judge | temp, linear.predictor = ~ judge | temp + cut,
              mean.class = ~ judge | temp, cum.prob = ~ judge | temp + cut,
              exc.prob = ~ judge | temp + cut)
calls <- lapply(names(specs), function(mode) {
  em <- emmeans(fit, specs[[mode]], mode = mode)
  tab <- as.data.frame(summary(contrast(em, "trt.vs.ctrl", adjust = "none")))
  list(mode = mode, specs = deparse(specs[[mode]]),
       r_call = sprintf('contrast(emmeans(fit, %s, mode = "%s"), "trt.vs.ctrl", adjust = "none")',
                        deparse(specs[[mode]]), mode),
       contrast = as.character(tab$contrast), estimate = tab$estimate, SE = tab$SE)
})
write_json(list(
  data = 'subset(wine, !(temp == "warm" & contact == "yes"))',
  fit_call = "clm(rating ~ temp * contact + judge, data = data)",
  versions = list(R = R.version.string, emmeans = as.character(packageVersion("emmeans")),
                  ordinal = as.character(packageVersion("ordinal"))),
  calls = calls
), "tests/data/reference/emmeans_nonlinear_nonest.json")
