# write_dataset(): one data set as tests/data/r_datasets/<name>.csv + <name>.levels.json
# (R's level orders), and read_dataset(), which reads one back with its levels; shared by
# make_r_datasets.R, parity_sweep.R and formula_functions.R.  write_dataset writes into
# `out_dir` of the caller (a global of the sourcing script) unless `dir` is given;
# read_dataset reads from `data_dir` of the caller.
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

read_dataset <- function(name, dir = get("data_dir", envir = globalenv())) {
  d <- read.csv(file.path(dir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                check.names = FALSE)
  meta <- jsonlite::fromJSON(file.path(dir, paste0(name, ".levels.json")))
  for (v in names(meta$ordered)) d[[v]] <- factor(d[[v]], levels = meta$ordered[[v]], ordered = TRUE)
  for (v in names(meta$factors)) d[[v]] <- factor(d[[v]], levels = meta$factors[[v]])
  d
}
