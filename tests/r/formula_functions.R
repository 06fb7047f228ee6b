# R's functions in model formulas (factor, as.numeric, relevel, cut, ns, bs, poly, ifelse, pmin, mean, ...),
# the nesting operator %in%, `.` (every column but the response) and offset() terms, fitted by ordinal::clm on datasets::infert, for
# tests/test_formula_r_functions.py.
#
# Writes tests/data/r_datasets/infert.{csv,levels.json} (education ordered 0-5yrs <
# 6-11yrs < 12+ yrs) and tests/data/reference/formula_functions.json: per formula (a
# right-hand side for education, or a response given as a call, factor(parity) ~ ...)
# its nobs (rows where a term is NA are dropped), logLik, coefficients (thresholds, then the terms, in R's order and with R's names),
# standard errors and, for the rows `newdata` (ages inside and outside the fitted range),
# predict(type = "prob") -- R keeps the knots of ns() and bs() for new data (makepredictcall), but
# evaluates mean(), sd() and the like on the new rows.
#
# Run from the repository root:  Rscript tests/r/formula_functions.R
suppressMessages({library(ordinal); library(splines); library(jsonlite)})
data_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")
d <- infert[, c("education", "age", "parity", "induced", "case", "spontaneous")]
d$education <- factor(d$education, levels = c("0-5yrs", "6-11yrs", "12+ yrs"), ordered = TRUE)
write_dataset(d, "infert", "datasets::infert",
  "Infertility after spontaneous and induced abortion (case-control study)",
  "education ordered 0-5yrs < 6-11yrs < 12+ yrs; 6 columns", "education", dir = data_dir)
d <- read_dataset("infert")
d$ind <- as.character(d$induced)
newdata <- data.frame(age = c(19, 21, 30, 44, 47), parity = c(1, 2, 3, 4, 6),
                      induced = c(0, 1, 2, 0, 1), case = c(0, 1, 0, 1, 1),
                      spontaneous = c(0, 1, 2, 0, 1))
newdata$ind <- as.character(newdata$induced)
rhs <- c(
  "sqrt(age) + abs(parity - 2) + log1p(spontaneous)",
  "factor(induced) + age",
  "as.factor(induced) + as.numeric(parity)",
  "ordered(induced) + age",
  "relevel(factor(induced), ref = \"2\") + age",
  "factor(ind, levels = c(\"2\", \"1\", \"0\")) + age",
  "interaction(ind, case)",
  "age %in% ind",
  "parity + age %in% factor(induced)",
  "C(factor(ind), sum) + age",
  "cut(age, c(20, 30, 40, 50), include.lowest = TRUE) + parity",
  "cut(age, 3) + parity",
  "cut(age, c(25, 30, 40, 50)) + parity",
  "factor(ind, levels = c(\"1\", \"2\")) + age",
  "pmin(age, 30) + pmax(parity, 2)",
  "ifelse(age > 30, 1, 0) + trunc(age / 10)",
  "round(age, -1) + as.integer(factor(ind))",
  "as.logical(case) + log(age, base = 10)",
  "ns(age, 3) + parity",
  "splines::ns(age, df = 4) + parity",
  "poly(age, 2, raw = TRUE) + scale(parity, scale = FALSE)",
  ". + log(age)",
  ". - ind",
  "(. - ind)^2",
  "age + offset(parity / 10)",
  "offset(log(age))",
  "offset(age / 10 + spontaneous) + parity",
  "bs(age, df = 4) + parity",
  "splines::bs(age, knots = c(25, 35), degree = 2)",
  "I(age - mean(age)) + I(parity / sd(parity))",
  "I(age - median(age)) + I(parity / max(parity))",
  "xor(age > 30, parity > 2) + age",
  "age %/% 5 + parity %% 2",
  "log2(age) + log10(parity) + floor(age / 10) + ceiling(parity / 2)",
  "poly(age, parity, degree = 2)",
  "poly(age, spontaneous, degree = 2, raw = TRUE) + ind"
)
# responses given as calls: clm needs a factor response, so R users write factor(y) ~ x
formulas <- c(paste("education ~", rhs),
              "ordered(parity) ~ age", "factor(parity) ~ age + ind",
              "factor(parity, levels = c(6, 5, 4, 3, 2, 1)) ~ age",
              "cut(age, 3) ~ parity + ind",
              "ordered(education, levels = rev(levels(education))) ~ age")
out <- list()
for (f in formulas) {
  r <- sub("^[^~]*~ ", "", f)
  call <- sprintf("clm(%s, data = d)", f)
  m <- eval(parse(text = call))
  cf <- coef(summary(m))
  # R recomputes cut's breaks on new data; with a response given as a call, R's predict
  # evaluates the call on the new rows (and gives P(observed level) only); for all the
  # probabilities clm's predict stacks the new rows once per level, which changes sd() of them
  # and R's predict.clm cannot take new rows for poly() of several variables (polym:
  # "non-conformable arguments")
  safe <- !grepl("^cut\\(age, 3\\)", r) && grepl("^education ~", f) && !grepl("sd\\(", r) &&
    !grepl("poly\\(age, [ps]", r)
  out[[length(out) + 1]] <- list(
    formula = f, rhs = r, r_call = call, nobs = nobs(m), logLik = as.numeric(logLik(m)), names = rownames(cf),
    coef = unname(cf[, 1]), se = unname(cf[, 2]),
    prob = if (safe) unname(predict(m, newdata = newdata, type = "prob")$fit) else NULL)
}
# an offset term through a term test and a mixed model
with_offset <- clm(education ~ age + ind + offset(parity / 10), data = d)
nt <- nominal_test(with_offset)
mixed <- clmm(education ~ age + offset(parity / 10) + (1 | ind), data = d)
offset_checks <- list(
  nominal_test = list(formula = "education ~ age + ind + offset(parity / 10)",
                      terms = rownames(nt)[-1], LRT = unname(nt$LRT[-1]),
                      p = unname(nt[["Pr(>Chi)"]][-1])),
  clmm = list(formula = "education ~ age + offset(parity / 10) + (1 | ind)",
              logLik = as.numeric(logLik(mixed))))
writeLines(toJSON(list(newdata = newdata, fits = out, offset_checks = offset_checks),
                  digits = NA, auto_unbox = TRUE,
                  null = "null", pretty = TRUE),
           "tests/data/reference/formula_functions.json")
