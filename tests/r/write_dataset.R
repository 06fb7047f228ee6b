# write_dataset(): one data set as tests/data/r_datasets/<name>.csv + <name>.levels.json
# (R's level orders), shared by make_r_datasets.R and parity_sweep.R; read_dataset() (below)
# re-reads one for the reference scripts of tests/r/ that fit the vendored CSVs.
# Writes into `out_dir` of the caller (a
# global of the sourcing script) unless `dir` is given.
write_dataset <- function(d, name, source, description, derivation, response, weights = NULL,
                          dir = get("out_dir", envir = globalenv())) {
  write.csv(d, file.path(dir, paste0(name, ".csv")), row.names = FALSE)
  type <- function(x) if (is.ordered(x)) "ordered" else if (is.factor(x)) "factor" else "numeric"
  ord <- names(d)[sapply(d, is.ordered)]
  fac <- names(d)[sapply(d, function(x) is.factor(x) && !is.ordered(x))]
  meta <- list(
    dataset = name, source = source, description = description, derivation = derivation,
    n_rows = nrow(d), columns = names(d), column_types = lapply(d, type),
    response = response, weights = weights,
    ordered = setNames(lapply(ord, function(v) levels(d[[v]])), ord),
    factors = setNames(lapply(fac, function(v) levels(d[[v]])), fac),
    csv_numeric_format = "R write.csv (15 significant digits); the reference scripts fit the re-read CSV; NA = missing")
  if (!length(ord)) meta$ordered <- setNames(list(), character())
  if (!length(fac)) meta$factors <- setNames(list(), character())
  writeLines(toJSON(meta, auto_unbox = TRUE, pretty = TRUE, null = "null"),
             file.path(dir, paste0(name, ".levels.json")))
}

# read_dataset(): a data set written by write_dataset(), re-read with R's level orders
# (ordered and unordered factors), from `data_dir` of the caller unless `data_dir` is given.
read_dataset <- function(name, data_dir = get("data_dir", envir = globalenv())) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                check.names = FALSE)
  meta <- jsonlite::fromJSON(file.path(data_dir, paste0(name, ".levels.json")))
  for (v in names(meta$ordered)) d[[v]] <- factor(d[[v]], levels = meta$ordered[[v]], ordered = TRUE)
  for (v in names(meta$factors)) d[[v]] <- factor(d[[v]], levels = meta$factors[[v]])
  d
}

# The data sets of the parity sweep (written by parity_sweep.R), re-read into the caller's
# global environment under the names parity_sweep.R and parity_results.R fit them by.
read_sweep_datasets <- function(data_dir = get("data_dir", envir = globalenv())) {
  files <- c(pneumo = "pneumo", housing_ordinf = "housing_ordinf",
             survey_students = "survey_students", esoph_d = "esoph",
             warpbreaks_d = "warpbreaks", cars93 = "cars93", mtcars_d = "mtcars",
             income = "income")
  for (object in names(files))
    assign(object, read_dataset(files[[object]], data_dir), envir = globalenv())
  assign("soup", read_dataset("soup", "ordstats/datasets"), envir = globalenv())
}
