# R's clm with an offset(...) term in the scale formula: the scale is exp(z'zeta + o).
# Run from the repository root: Rscript tests/r/scale_offset.R
# Writes tests/data/reference/scale_offset.json (tests/estimation/test_scale_offset.py).
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, ordered = TRUE)
wine$temp <- factor(wine$temp); wine$contact <- factor(wine$contact)
wine$x <- seq(0, 1, len = 72)^2
wine$w <- seq(-1, 1, len = 72)
newdata <- data.frame(temp = c("cold", "warm", "warm"), contact = c("no", "yes", "no"),
                      x = c(0.1, 0.5, 2), w = c(0.3, -0.2, 1))
fit_case <- function(fit) {
  p <- predict(fit, newdata = newdata, type = "prob")$fit
  list(logLik = as.numeric(logLik(fit)), coef = named(coef(fit)),
       se = named(sqrt(diag(vcov(fit)))), prob = rows(p))
}
fit <- clm(rating ~ temp, scale = ~ contact + offset(x), data = wine)
cases <- list(
  scale = fit_case(fit),
  both = fit_case(clm(rating ~ temp + offset(w), scale = ~ contact + offset(x), data = wine,
                      link = "probit")),
  structured = fit_case(clm(rating ~ contact, nominal = ~ temp, scale = ~ contact + offset(x),
                            threshold = "equidistant", link = "cloglog", data = wine))
)
cases$newdata <- newdata
# refits keep the scale offset: R's tests of the terms (LRT column; first row is <none>)
cases$scale_test <- named(scale_test(fit)$LRT[-1], rownames(scale_test(fit))[-1])
cases$nominal_test <- named(nominal_test(fit)$LRT[-1], rownames(nominal_test(fit))[-1])
bigger <- clm(rating ~ temp + contact, scale = ~ contact + offset(x), data = wine)
cases$anova_lr <- anova(fit, bigger)$LR.stat[2]
cases$drop1_aic <- named(drop1(fit)$AIC, rownames(drop1(fit)))
write_json(cases, "tests/data/reference/scale_offset.json")
