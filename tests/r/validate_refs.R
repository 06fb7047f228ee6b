# rms::validate(fit, B = 20) (bootstrap optimism-corrected indexes) of lrm fits, and
# the bootstrap rows predab.resample drew, for tests/results/test_validate.py.
# predab.resample's only random draws are one sample(n, replace = TRUE) per resample, so the
# rows are drawn again from the same seed; they are checked against the rows validate itself
# used (its debug = TRUE prints them) and against the generator state after validate.
# (jsonlite also exports a validate(): rms:: is named.)
# Run from the repository root: Rscript tests/r/validate_refs.R
suppressMessages({library(rms); library(ordinal); library(jsonlite)})
out_dir <- "tests/data/r/validate"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
B <- 20
validate_case <- function(name, call, fit, seed = 1) {
  n <- length(fit$y)
  set.seed(seed)
  printed <- capture.output(v <- rms::validate(fit, B = B, debug = TRUE))
  after <- .Random.seed
  set.seed(seed)
  rows <- t(vapply(seq_len(B), function(i) sample(n, replace = TRUE), integer(n)))
  stopifnot(identical(after, .Random.seed))
  # the rows validate printed after "Subscripts of training sample:"
  starts <- grep("Subscripts of training sample", printed)
  ends <- grep("Subscripts of test sample", printed)
  used <- t(vapply(seq_along(starts), function(i) {
    lines <- printed[(starts[i] + 1):(ends[i] - 1)]
    as.integer(unlist(lapply(strsplit(sub("^ *\\[[0-9]+\\]", "", lines), " +"),
                             function(s) s[nzchar(s)])))
  }, integer(n)))
  stopifnot(identical(used, rows))
  v <- unclass(v)
  writeLines(toJSON(list(r_call = call, rms_version = as.character(packageVersion("rms")),
                         B = B, seed = seed, rows = rows - 1L, index = rownames(v),
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
wine2 <- wine
wine2$bitter <- factor(as.integer(wine2$rating) > 2)
validate_case("lrm_wine_binary", "validate(lrm(rating > 2 ~ temp + contact, data = wine, x = TRUE, y = TRUE), B = 20)",
              lrm(bitter ~ temp + contact, data = wine2, x = TRUE, y = TRUE))
