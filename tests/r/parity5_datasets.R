# Writes three data sets new to the project to tests/data/r_datasets/:
#   vocab.csv.gz   carData::Vocab (all 30,351 rows; gzip-compressed, read.csv and pandas read it)
#   inhaler.csv    brms::inhaler (572 rows)
#   gsoep9402.csv  AER::GSOEP9402 (675 rows)
# each with <name>.levels.json.  Run from the repository root:  Rscript tests/r/parity5_datasets.R
suppressMessages({library(jsonlite); library(carData); library(AER)})
out_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")
v <- Vocab
attr(v, "na.action") <- NULL
rownames(v) <- NULL
v$vocabulary <- factor(v$vocabulary, levels = 0:10, ordered = TRUE)
write_dataset(v, "vocab", "carData::Vocab",
  "US General Social Surveys 1974-2016: vocabulary test score (0-10) with year, sex and years of education (30,351 rows)",
  "vocabulary as an ordered factor with levels 0-10; the CSV is gzip-compressed to vocab.csv.gz",
  "vocabulary")
csv <- file.path(out_dir, "vocab.csv")
gz <- gzfile(paste0(csv, ".gz"), "w")
writeLines(readLines(csv), gz)
close(gz)
invisible(file.remove(csv))
data(inhaler, package = "brms")
inh <- inhaler
inh$rating <- factor(inh$rating, levels = 1:4, ordered = TRUE)
write_dataset(inh, "inhaler", "brms::inhaler",
  "Crossover trial of an inhalation device: rating (1-4) with treatment, period and carry-over (coded -0.5/0.5 and -1/0/1), 286 subjects twice (572 rows)",
  "rating as an ordered factor with levels 1-4", "rating")
data(GSOEP9402, package = "AER")
g <- as.data.frame(GSOEP9402)
for (a in c("datalabel", "time.stamp", "formats", "types", "val.labels", "var.labels",
            "version", "label.table")) attr(g, a) <- NULL
g$school <- factor(g$school, levels = levels(GSOEP9402$school), ordered = TRUE)
write_dataset(g, "gsoep9402", "AER::GSOEP9402",
  "German Socio-Economic Panel 1994-2002: secondary school of the child (Hauptschule < Realschule < Gymnasium) with mother's education and employment, household income, size, parity, state, gender, kids (675 rows)",
  "school as an ordered factor (Hauptschule < Realschule < Gymnasium)", "school")
