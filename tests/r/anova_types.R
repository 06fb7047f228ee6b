# R ordinal's anova() of ONE clm: Wald chi-square tests of each location term of
# type III (the default), II, I and "marginal" (the contrasts of lmerTest that ordinal
# shares), for tests/results/test_anova_types.py.  Per case: the R call and, per type,
# Df, Chisq and Pr(>Chisq) of each term.
# Run from the repository root: Rscript tests/r/anova_types.R
suppressMessages({library(ordinal); library(MASS); library(jsonlite)})
data_dir <- "tests/data/r_datasets"
out_dir <- "tests/data/reference/anova_types"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
source("tests/r/write_dataset.R")
write_types <- function(name, call, fit) {
  tables <- lapply(c(III = "III", II = "II", I = "I", marginal = "marginal", "2b" = "2b"), function(type) {
    a <- anova(fit, type = type)
    list(terms = rownames(a), df = a$Df, chisq = a$Chisq, p = a[["Pr(>Chisq)"]],
         heading = attr(a, "heading"))
  })
  writeLines(toJSON(list(r_call = call, logLik = as.numeric(logLik(fit)), types = tables),
                    digits = NA, auto_unbox = TRUE, null = "null", na = "null"),
             file.path(out_dir, paste0(name, ".json")))
}
soup2 <- soup
soup2$AG <- factor(soup2$AGEGROUP, ordered = TRUE)  # contr.poly, as an ordered predictor
bank <- read_dataset("bankwages")
write_types("housing", "clm(Sat ~ Infl * Type + Cont, weights = Freq, data = housing)",
            clm(Sat ~ Infl * Type + Cont, weights = Freq, data = housing))
write_types("soup_three_way", "clm(SURENESS ~ PROD * DAY * GENDER + AGEGROUP, data = soup)",
            clm(SURENESS ~ PROD * DAY * GENDER + AGEGROUP, data = soup))
write_types("soup_ordered_predictor", "clm(SURENESS ~ PROD * AG, data = soup) with AG = factor(AGEGROUP, ordered = TRUE)",
            clm(SURENESS ~ PROD * AG, data = soup2))
write_types("soup_sum_contrasts", "clm(SURENESS ~ PROD * GENDER + DAY, data = soup, contrasts = list(PROD = 'contr.sum', GENDER = 'contr.helmert'))",
            clm(SURENESS ~ PROD * GENDER + DAY, data = soup, contrasts = list(PROD = "contr.sum", GENDER = "contr.helmert")))
write_types("soup_nominal_scale", "clm(SURENESS ~ PROD * GENDER + AGEGROUP, nominal = ~ DAY, scale = ~ COLD, data = soup, link = 'probit')",
            clm(SURENESS ~ PROD * GENDER + AGEGROUP, nominal = ~ DAY, scale = ~ COLD, data = soup, link = "probit"))
write_types("bankwages_numeric", "clm(job ~ education * gender + minority + education:minority, data = bankwages)",
            clm(job ~ education * gender + minority + education:minority, data = bank))
write_types("bankwages_not_hierarchical", "clm(job ~ education:gender + minority, data = bankwages)",
            clm(job ~ education:gender + minority, data = bank))
write_types("bankwages_poly", "clm(job ~ poly(education, 2) * gender + minority, data = bankwages)",
            clm(job ~ poly(education, 2) * gender + minority, data = bank))
write_types("wine_one_term", "clm(rating ~ temp, data = wine)", clm(rating ~ temp, data = wine))

# car::Anova of a polr fit: likelihood-ratio tests of type II (car's default) and III,
# refitting polr(y ~ X[, -columns]) (car refits with polr's default logit link and no
# offset, so only logit fits are compared with car itself; lr_probit_by_hand repeats
# car's construction with method = "probit", the link ordstats keeps).
suppressMessages(library(car))
write_lr <- function(name, call, fit) {
  tables <- lapply(c(II = "II", III = "III"), function(type) {
    a <- Anova(fit, type = type)
    list(terms = rownames(a), lr = a[["LR Chisq"]], df = a$Df, p = a[["Pr(>Chisq)"]])
  })
  writeLines(toJSON(list(r_call = call, logLik = as.numeric(logLik(fit)), types = tables),
                    digits = NA, auto_unbox = TRUE, null = "null", na = "null"),
             file.path(out_dir, paste0("lr_", name, ".json")))
}
write_lr("housing", "car::Anova(polr(Sat ~ Infl * Type + Cont, weights = Freq, data = housing))",
         polr(Sat ~ Infl * Type + Cont, weights = Freq, data = housing, Hess = TRUE))
write_lr("bankwages_numeric", "car::Anova(polr(job ~ education * gender + minority, data = bankwages))",
         polr(job ~ education * gender + minority, data = bank, Hess = TRUE))
write_lr("soup_ordered_predictor", "car::Anova(polr(SURENESS ~ PROD * AG + DAY, data = soup)) with AG = factor(AGEGROUP, ordered = TRUE)",
         polr(SURENESS ~ PROD * AG + DAY, data = soup2, Hess = TRUE))
# car's type II construction by hand with the probit link
fit <- polr(Sat ~ Infl * Type + Cont, weights = Freq, data = housing, method = "probit")
X <- model.matrix(fit); asgn <- attr(X, "assign"); y <- housing$Sat; wt <- housing$Freq
dev_without <- function(terms) {
  drop <- which(asgn %in% terms)
  deviance(polr(y ~ X[, -c(1, drop)], weights = wt, method = "probit"))
}
lr2 <- c(Infl = dev_without(c(1, 4)) - dev_without(4), Type = dev_without(c(2, 4)) - dev_without(4),
         Cont = dev_without(3) - deviance(fit), "Infl:Type" = dev_without(4) - deviance(fit))
lr3 <- sapply(1:4, function(k) dev_without(k) - deviance(fit))
writeLines(toJSON(list(r_call = "car's construction with method = 'probit': polr(Sat ~ X[, -columns], weights = Freq, method = 'probit') for Sat ~ Infl * Type + Cont",
                       logLik = as.numeric(logLik(fit)),
                       types = list(II = list(terms = names(lr2), lr = unname(lr2), df = c(2, 3, 1, 6)),
                                    III = list(terms = names(lr2), lr = lr3, df = c(2, 3, 1, 6)))),
                  digits = NA, auto_unbox = TRUE), file.path(out_dir, "lr_probit_by_hand.json"))
