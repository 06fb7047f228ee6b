# rms::lrm's model statistics (fit$stats: LR test, C, Dxy, Gamma, Tau-a, R2 measures,
# Brier, g, gr, gp) of ordinal logistic fits, and rms::orm's (LR and score tests, rho,
# R2 measures, g, gr, pdm) under its families, for tests/results/test_rms_stats.py.
# rms 6.5's Fortran bins P(Y > middle level) into 5001 cells for the rank correlations.
# Run from the repository root: Rscript tests/r/rms_stats.R
suppressMessages({library(rms); library(ordinal); library(jsonlite)})
data_dir <- "tests/data/r_datasets"
out_dir <- "tests/data/reference/rms_stats"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
source("tests/r/write_dataset.R")
write_stats <- function(name, call, fit) {
  writeLines(toJSON(list(r_call = call, rms_version = as.character(packageVersion("rms")),
                         names = names(fit$stats), stats = unname(fit$stats),
                         coef = unname(coef(fit))),
                    digits = NA, auto_unbox = TRUE),
             file.path(out_dir, paste0(name, ".json")))
}
bank <- read_dataset("bankwages")
write_stats("bankwages", "lrm(job ~ education + gender + minority, data = bankwages)",
            lrm(job ~ education + gender + minority, data = bank))
write_stats("wine", "lrm(rating ~ temp + contact, data = wine)", lrm(rating ~ temp + contact, data = wine))
write_stats("housing_weights", "lrm(Sat ~ Infl + Type + Cont, data = housing, weights = Freq)",
            suppressWarnings(lrm(Sat ~ Infl + Type + Cont, data = MASS::housing, weights = Freq)))
write_stats("soup_six_levels", "lrm(SURENESS ~ PROD + DAY + GENDER + AGEGROUP, data = soup)",
            lrm(SURENESS ~ PROD + DAY + GENDER + AGEGROUP, data = soup))
# an offset: rms's C takes it, its Brier, g and gp (lp without the offset) do not
bank_o <- bank; bank_o$o <- (bank_o$education - 12) / 10
write_stats("bankwages_offset", "lrm(job ~ education + gender + offset(o), data = bankwages with o = (education - 12) / 10)",
            lrm(job ~ education + gender + offset(o), data = bank_o))
w <- bank; w$wt <- 1 + (seq_len(nrow(w)) %% 3) / 2
write_stats("bankwages_fractional_weights",
            "lrm(job ~ education + gender, data = bankwages, weights = 1 + (seq_len(474) %% 3) / 2)",
            suppressWarnings(lrm(job ~ education + gender, data = w, weights = wt)))

# orm (families named as orm names them; orm's loglog is ordstats' cloglog)
write_stats("orm_wine", "orm(rating ~ temp + contact, data = wine, eps = 1e-12, maxit = 200)", orm(rating ~ temp + contact, data = wine, eps = 1e-12, maxit = 200))
write_stats("orm_warpbreaks", "orm(breaks ~ wool + tension, data = warpbreaks, eps = 1e-12, maxit = 200)",
            orm(breaks ~ wool + tension, data = warpbreaks, eps = 1e-12, maxit = 200))
write_stats("orm_faithful_probit", "orm(waiting ~ eruptions, data = faithful, family = 'probit', eps = 1e-12, maxit = 200)",
            orm(waiting ~ eruptions, data = faithful, family = "probit", eps = 1e-12, maxit = 200))
write_stats("orm_faithful_loglog", "orm(waiting ~ eruptions, data = faithful, family = 'loglog', eps = 1e-12, maxit = 200)",
            orm(waiting ~ eruptions, data = faithful, family = "loglog", eps = 1e-12, maxit = 200))
write_stats("orm_bankwages_cloglog", "orm(job ~ education + gender + minority, data = bankwages, family = 'cloglog', eps = 1e-12, maxit = 200)",
            orm(job ~ education + gender + minority, data = bank, family = "cloglog", eps = 1e-12, maxit = 200))
# a response with (nearly) all values distinct: the effective size rounds to n, and R's
# R2Measures names repeat ("R2(50)" twice)
lcs <- LifeCycleSavings[, c("sr", "pop15", "dpi")]
write_dataset(lcs, "lifecyclesavings", "datasets::LifeCycleSavings",
  "Savings ratio of 50 countries, 1960-1970 (49 distinct values)", "columns sr, pop15, dpi",
  "sr", dir = data_dir)
lcs <- read_dataset("lifecyclesavings")
write_stats("orm_lifecyclesavings", "orm(sr ~ pop15 + dpi, data = LifeCycleSavings, eps = 1e-12, maxit = 200)",
            orm(sr ~ pop15 + dpi, data = lcs, eps = 1e-12, maxit = 200))
