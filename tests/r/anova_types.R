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
  tables <- lapply(c(III = "III", II = "II", I = "I", marginal = "marginal"), function(type) {
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
write_types("wine_one_term", "clm(rating ~ temp, data = wine)", clm(rating ~ temp, data = wine))
