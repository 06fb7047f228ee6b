# Writes the extra data sets the R reference scripts use to tests/data/r_datasets/
# (<name>.csv + <name>.levels.json, same format as ordstats/datasets/wine.levels.json).
# Simulated columns are drawn here with the seeds R ordinal's own tests use, so the
# numbers are in the CSV and Python fits exactly what R fits (the reference scripts
# re-read these CSVs before fitting).
#
# Run from the repository root:  Rscript tests/r/make_r_datasets.R
suppressMessages({library(jsonlite)})

data_dir <- "ordstats/datasets"
out_dir <- "tests/data/r_datasets"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
source("tests/r/write_dataset.R")  # write_dataset(d, name, ...) into out_dir, read_dataset
wine <- read_dataset("wine")
soup <- read_dataset("soup")

## income (ordinal::income, defined in its help page)
lev <- c(0, 3, 5, 7, 10, 12, 15)
inc <- paste(lev, c(rep("-", 6), "+"), c(lev[-1], ""), sep = "")
income <- data.frame(year = factor(rep(c("1960", "1970"), each = 7)),
                     pct = c(6.5, 8.2, 11.3, 23.5, 15.6, 12.7, 22.2, 4.3, 6, 7.7, 13.2, 10.5, 16.3, 42.1),
                     income = factor(rep(inc, 2), ordered = TRUE, levels = inc))
write_dataset(income, "income", "ordinal::income",
  "US household income distribution 1960 and 1970 (percent per income class, in 1000 USD)", NULL,
  "income", "pct")

## dat26: soup aggregated to a PROD x SURENESS table (tests/testCLM.R)
tab26 <- with(soup, table(PROD, SURENESS))
dat26 <- expand.grid(sureness = factor(1:6, ordered = TRUE), prod = factor(c("Ref", "Test")))
dat26$wghts <- c(t(tab26))
write_dataset(dat26, "soup_dat26", "derived from ordinal::soup",
  "Counts of SURENESS by PROD in soup (12 rows, weights = counts)",
  "expand.grid(sureness = 1:6, prod = c('Ref','Test')); wghts = c(t(table(soup$PROD, soup$SURENESS))) (tests/testCLM.R)",
  "sureness", "wghts")

## dat26.2: 12 response levels, one observation each (tests/testCLM.R, ill-defined vcov)
dat26_2 <- data.frame(sureness = factor(1:12, ordered = TRUE),
                      prod = factor(rep(c("One", "Two", "Three"), each = 4)))  # levels alphabetical as R makes them
write_dataset(dat26_2, "dat26_2", "ordinal tests/testCLM.R",
  "12 observations, 12 response categories, a 3-level factor: singular Hessian", NULL, "sureness")

## Kosmidis 2x3 table with a large scale effect (tests/testCLM.R)
kos <- data.frame(response = factor(rep(c(1, 2, 3), times = 2), ordered = TRUE),
                  x = rep(0:1, each = 3), freq = c(1, 11, 1, 13, 1, 14))
write_dataset(kos, "kosmidis_2x3", "ordinal tests/testCLM.R (bug report by I. Kosmidis)",
  "2x3 table whose saturated location-scale fit has a large scale coefficient; loglik should be sum(freq*log(freq/totals)) = -29.97808",
  NULL, "response", "freq")

## wine with the simulated columns of ordinal's tests
ws <- wine
set.seed(1); ws$u1 <- runif(72)              # clm.fit.R (off1, wet), testthat/test-clm.R (off)
set.seed(1); ws$n1 <- rnorm(72)              # clm.fit.R (off2)
set.seed(123); ws$x123 <- rnorm(72)          # test.clm.Theta.R (x)
set.seed(321); ws$y321 <- rnorm(72)          # test.clm.Theta.R (y)
set.seed(123454321); ws$wt123454321 <- runif(72)   # nominal.test.R (wt)
set.seed(123454321); ws$x123454321 <- rnorm(72)    # nominal.test.R (x)
set.seed(1234); ws$wts1234 <- runif(72, 0, 2)      # test.clm.convergence.R (wts)
set.seed(1); ws$xr1 <- rnorm(72, sd = 2) + as.numeric(ws$rating)  # test.clm.predict.R (x)
set.seed(123); ws$w123 <- runif(72, 0.5, 1.5)      # test.clm.predict.R (weights)
ws$temp2 <- 1e4 * as.integer(ws$temp)              # testthat/test-clm.R (temp2)
write_dataset(ws, "wine_sim", "ordinal::wine + simulated columns",
  "wine with the simulated covariates, weights and offsets used in R ordinal's tests",
  paste("u1: set.seed(1); runif(72). n1: set.seed(1); rnorm(72). x123: set.seed(123); rnorm(72).",
        "y321: set.seed(321); rnorm(72). wt123454321: set.seed(123454321); runif(72).",
        "x123454321: set.seed(123454321); rnorm(72). wts1234: set.seed(1234); runif(72, 0, 2).",
        "xr1: set.seed(1); rnorm(72, sd = 2) + as.numeric(rating). w123: set.seed(123); runif(72, 0.5, 1.5).",
        "temp2: 1e4 * as.integer(temp) (10000 / 20000)."),
  "rating")

## wine without the cold & contact rows, three ratings missing (tests/test.clm.convergence.R)
w2 <- subset(wine, !(temp == "cold" & contact == "yes"))
w2[c(9, 15, 46), "rating"] <- NA
rownames(w2) <- NULL
write_dataset(w2, "wine2_na", "derived from ordinal::wine",
  "wine without the 18 cold/contact='yes' rows (54 rows); rating set to NA in rows 9, 15, 46 of the subset",
  "subset(wine, !(temp == 'cold' & contact == 'yes')); rating[c(9, 15, 46)] <- NA (tests/test.clm.convergence.R)",
  "rating")

## soup with simulated offsets/weights and an ordered copy of PRODID
ss <- soup
set.seed(290980); ss$offs290980 <- runif(nrow(ss))   # testCLM.R (offs)
set.seed(12345); ss$wts12345 <- runif(nrow(ss))      # test.clm.Theta.R (wts)
ss$prodid <- factor(ss$PRODID, ordered = TRUE)       # test.clm.Theta.R (ordered factor predictor -> contr.poly)
write_dataset(ss, "soup_sim", "ordinal::soup + simulated columns",
  "soup with simulated offset/weights and prodid = ordered copy of PRODID (an ordered-factor PREDICTOR: R uses contr.poly for it)",
  "offs290980: set.seed(290980); runif(1847). wts12345: set.seed(12345); runif(1847). prodid: factor(PRODID, ordered = TRUE).",
  "SURENESS")
cat("written to", out_dir, "\n")
