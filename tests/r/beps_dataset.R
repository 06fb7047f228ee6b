# Writes carData::BEPS to tests/data/r_datasets/beps.csv + beps.levels.json, the two
# economic-condition ratings as ordered factors (levels 1-5).
# Run from the repository root:  Rscript tests/r/beps_dataset.R
suppressMessages({library(jsonlite); library(carData)})
out_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")
d <- BEPS
d$economic.cond.national <- factor(d$economic.cond.national, levels = 1:5, ordered = TRUE)
d$economic.cond.household <- factor(d$economic.cond.household, levels = 1:5, ordered = TRUE)
write_dataset(d, "beps", "carData::BEPS",
  "British Election Panel Study 1997-2001: national and household economic conditions (1-5) with vote, age, gender, leader ratings, Europe and political knowledge (1525 rows)",
  "economic.cond.national and economic.cond.household as ordered factors with levels 1-5",
  "economic.cond.national")
