# Writes carData::WVS to tests/data/r_datasets/wvs.csv + wvs.levels.json.
# Run from the repository root:  Rscript tests/r/wvs_dataset.R
suppressMessages({library(jsonlite); library(carData)})
out_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")
write_dataset(WVS, "wvs", "carData::WVS",
  "World Values Survey 1995-97: is the government doing too little / about right / too much for the poor (5381 rows)",
  NULL, "poverty")
