# JSON helpers shared by the reference scripts that write R's results (parity_results.R,
# parity_more_datasets.R): numbers with NA/Inf as strings, matrices as lists of rows,
# term tables (drop1, nominal_test, ...) as named rows, new data with factors as strings.
num <- function(x) {
  if (is.null(x)) return(NULL)
  d <- dim(x)
  x <- unclass(x)
  if (!is.null(d) && length(d) == 2) return(lapply(seq_len(d[1]), function(i) num(unname(x[i, ]))))
  out <- lapply(x, function(v) if (is.na(v)) "NA" else if (is.infinite(v)) if (v > 0) "Inf" else "-Inf" else v)
  if (!is.null(names(x))) names(out) <- names(x)
  out
}
quiet <- function(expr) suppressWarnings(tryCatch(expr, error = function(e) NULL))
table_of <- function(tab) {
  if (is.null(tab)) return(NULL)
  tab <- as.data.frame(tab)
  lapply(setNames(seq_len(nrow(tab)), rownames(tab)), function(i) num(as.list(tab[i, , drop = TRUE])))
}
# the levels of each factor of newdata as strings (the test rebuilds the frame)
records <- function(nd) lapply(nd, function(v) if (is.factor(v)) as.character(v) else v)
