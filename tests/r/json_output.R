# JSON output shared by the reference scripts of tests/r/: named numbers, matrix rows, and
# one writer (15 significant digits, NA written as the string "NA", NULL as null).
named <- function(x, nm = names(x)) as.list(setNames(as.numeric(x), nm))
rows <- function(M) unname(lapply(seq_len(nrow(M)), function(i) as.numeric(M[i, ])))
write_json <- function(x, path)
  writeLines(toJSON(x, auto_unbox = TRUE, digits = I(15), pretty = TRUE, na = "string", null = "null"), path)
