# R's drop1 (stats::drop1.default: update() and extractAIC/logLik) on clmm fits,
# and add1, which stops with an error for a clmm.
#
# Run from the repository root (ordinal 2022.11.16, jsonlite):
#   Rscript tests/r/clmm_drop1.R
# Writes tests/data/reference/clmm_drop1.json.
suppressMessages({library(ordinal); library(jsonlite)})

data_dir <- "ordstats/datasets"
read_data <- function(name) {
  d <- read.csv(file.path(data_dir, paste0(name, ".csv")), stringsAsFactors = FALSE)
  meta <- fromJSON(file.path(data_dir, paste0(name, ".levels.json")))
  for (v in names(meta$ordered)) d[[v]] <- factor(d[[v]], levels = meta$ordered[[v]], ordered = TRUE)
  for (v in names(meta$factors)) d[[v]] <- factor(d[[v]], levels = meta$factors[[v]])
  d
}
wine <- read_data("wine")
soup <- read_data("soup")

table_of <- function(tab) {
  list(rows = rownames(tab), Df = tab$Df, AIC = tab$AIC,
       LRT = if (is.null(tab$LRT)) NULL else tab$LRT,
       p = if (is.null(tab[["Pr(>Chi)"]])) NULL else tab[["Pr(>Chi)"]])
}
# the models' gradTol tight, as the other clmm references (R's default leaves ~1e-6 in logLik)
ctrl <- clmm.control(gradTol = 1e-8)
cases <- list(
  wine = list(formula = "rating ~ temp + contact + (1|judge)", data = "wine", nAGQ = 1),
  wine_interaction = list(formula = "rating ~ temp * contact + (1|judge)", data = "wine", nAGQ = 1),
  wine_agq = list(formula = "rating ~ temp + contact + (1|judge)", data = "wine", nAGQ = 7),
  soup = list(formula = "SURENESS ~ PROD + DAY + SOUPTYPE + (1|RESP)", data = "soup", nAGQ = 1)
)
out <- list(R = R.version.string, ordinal = as.character(packageVersion("ordinal")), cases = list())
for (name in names(cases)) {
  case <- cases[[name]]
  d <- get(case$data)
  fit <- clmm(as.formula(case$formula), data = d, nAGQ = case$nAGQ, control = ctrl)
  tab <- drop1(fit, test = "Chisq")
  print(tab)
  out$cases[[name]] <- c(case, list(logLik = as.numeric(logLik(fit)), drop1 = table_of(tab)))
}
fit <- clmm(rating ~ temp + (1|judge), data = wine, control = ctrl)
out$add1_error <- conditionMessage(tryCatch(add1(fit, scope = ~ . + contact), error = function(e) e))
print(out$add1_error)
write_json(out, "tests/data/reference/clmm_drop1.json", digits = NA, auto_unbox = TRUE, pretty = TRUE)
