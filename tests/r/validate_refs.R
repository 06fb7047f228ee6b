# rms::validate(fit, B = 20) (bootstrap optimism-corrected indexes) of lrm and orm fits, and
# the bootstrap rows predab.resample drew, for tests/results/test_validate.py.
# The rows are those validate itself used (its debug = TRUE prints them).  For lrm they are
# also drawn again from the same seed: predab.resample's only random draws are one
# sample(n, replace = TRUE) per resample (checked with the generator state after validate).
# (jsonlite also exports a validate(): rms:: is named.)
# Run from the repository root: Rscript tests/r/validate_refs.R
suppressMessages({library(rms); library(ordinal); library(jsonlite)})
out_dir <- "tests/data/r/validate"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
B <- 20
validate_case <- function(name, call, fit, seed = 1, ...) {
  n <- length(fit$y)
  set.seed(seed)
  printed <- capture.output(v <- rms::validate(fit, B = B, debug = TRUE, ...))
  after <- .Random.seed
  set.seed(seed)
  rows <- t(vapply(seq_len(B), function(i) sample(n, replace = TRUE), integer(n)))
  same_state <- identical(after, .Random.seed)
  # the rows validate printed after "Subscripts of training sample:"
  starts <- grep("Subscripts of training sample", printed)
  ends <- grep("Subscripts of test sample", printed)
  used <- t(vapply(seq_along(starts), function(i) {
    lines <- printed[(starts[i] + 1):(ends[i] - 1)]
    as.integer(unlist(lapply(strsplit(sub("^ *\\[[0-9]+\\]", "", lines), " +"),
                             function(s) s[nzchar(s)])))
  }, integer(n)))
  # lrm's refits draw nothing, so the rows are the draws of sample() alone; orm's refits
  # draw random numbers too (between the samples), so its rows are those validate printed
  stopifnot(inherits(fit, "orm") || length(list(...)) || (identical(used, rows) && same_state))
  v <- unclass(v)
  writeLines(toJSON(list(r_call = call, rms_version = as.character(packageVersion("rms")),
                         B = B, seed = seed, rows = used - 1L, index = rownames(v),
                         columns = colnames(v), table = unname(v)),
                    digits = NA, auto_unbox = TRUE, matrix = "rowmajor"),
             file.path(out_dir, paste0(name, ".json")))
}
# set.seed(1) draws a sample without the lowest rating, which predab.resample refuses:
# its rows are kept for the test of that refusal
wine_fit <- lrm(rating ~ temp + contact, data = wine, x = TRUE, y = TRUE)
set.seed(1)
missing_level <- t(vapply(seq_len(B), function(i) sample(nrow(wine), replace = TRUE), integer(nrow(wine))))
stopifnot(inherits(try(rms::validate(wine_fit, B = B), silent = TRUE), "try-error"))
writeLines(toJSON(list(seed = 1, rows = missing_level - 1L), matrix = "rowmajor"),
           file.path(out_dir, "lrm_wine_seed1_rows.json"))
validate_case("lrm_wine", "set.seed(2); validate(lrm(rating ~ temp + contact, data = wine, x = TRUE, y = TRUE), B = 20)",
              wine_fit, seed = 2)
# group = y: each sample drawn within the ratings (what rms advises when a sample misses one)
validate_case("lrm_wine_group", "set.seed(1); validate(lrm(rating ~ temp + contact, data = wine, x = TRUE, y = TRUE), B = 20, group = wine$rating)",
              wine_fit, group = wine$rating)
# three levels and a numeric predictor, 474 rows (the middle cut is the first of two)
data_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")
validate_case("lrm_bankwages", "set.seed(1); validate(lrm(job ~ education + gender + minority, data = bankwages, x = TRUE, y = TRUE), B = 20)",
              lrm(job ~ education + gender + minority, data = read_dataset("bankwages"), x = TRUE, y = TRUE))
wine2 <- wine
wine2$bitter <- factor(as.integer(wine2$rating) > 2)
validate_case("lrm_wine_binary", "validate(lrm(rating > 2 ~ temp + contact, data = wine, x = TRUE, y = TRUE), B = 20)",
              lrm(bitter ~ temp + contact, data = wine2, x = TRUE, y = TRUE))
validate_case("orm_warpbreaks", "set.seed(1); validate(orm(breaks ~ wool + tension, data = warpbreaks, x = TRUE, y = TRUE), B = 20)",
              orm(breaks ~ wool + tension, data = warpbreaks, x = TRUE, y = TRUE))
# validate.orm's refits stop at orm.fit's default eps = 5e-4 (its ormfit2 passes no eps),
# which leaves the bootstrap estimates ~1e-5 from the maximum: the same with every orm.fit
# converged (eps = 1e-12), for the comparison to 1e-6
loose_orm_fit <- rms::orm.fit
assignInNamespace("orm.fit", function(...) {
  args <- list(...)
  args$eps <- 1e-12
  args$maxit <- 200
  do.call(loose_orm_fit, args)
}, "rms")
validate_case("orm_warpbreaks_converged", "set.seed(1); validate(orm(breaks ~ wool + tension, data = warpbreaks, x = TRUE, y = TRUE, eps = 1e-12), B = 20), every orm.fit with eps = 1e-12",
              orm(breaks ~ wool + tension, data = warpbreaks, x = TRUE, y = TRUE))
assignInNamespace("orm.fit", loose_orm_fit, "rms")
