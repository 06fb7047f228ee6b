# emmeans of a clm whose factor is nested in another: bottle %in% temp in wine.
#
# Run from the repository root (R 4.2, emmeans 1.8.4, ordinal 2022.11.16, jsonlite):
#   Rscript tests/r/emmeans_nesting.R
# Writes tests/data/reference/emmeans_nesting.json for tests/results/test_emmeans_nonest.py:
#   fit_call  clm(rating ~ temp + bottle, data = wine): each bottle is served at one
#             temperature only, so bottle8 is aliased (NA) and ref_grid detects
#             "bottle %in% temp" (its note is kept as `note`)
#   calls     each R expression and as.data.frame(summary(obj)): labels, estimate (NA where
#             emmeans prints nonEst), SE, p value (15 significant digits); the last ones
#             switch the detection off (nesting = NULL) or name the nesting explicitly
#   joint_tests joint_tests(fit) (terms temp and temp:bottle) and with nesting = NULL
#             (bottle and R's "(confounded)" row): terms, df1, F ratio, p value
#   unbalanced the same for clm(rating ~ temp + bottle + contact) on wine without bottle 8:
#             "bottle %in% (temp*contact)", three bottles warm and four cold, so the
#             by groups of pairs(emmeans(fit, ~ bottle | temp)) have different sizes;
#             its joint_tests(fit) and joint_tests(fit, by = "contact")
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # write_json()
wine <- read_dataset("wine", "ordstats/datasets")
fit <- clm(rating ~ temp + bottle, data = wine)
calls <- c(
  'emmeans(fit, ~ temp)',
  'emmeans(fit, ~ rating | temp, mode = "prob")',
  'pairs(emmeans(fit, ~ temp))',
  'emmeans(fit, ~ temp, weights = "proportional")',
  'emmeans(fit, ~ temp, mode = "mean.class")',
  'emmeans(fit, ~ bottle)',
  'emmeans(fit, ~ bottle | temp)',
  'emmeans(fit, ~ temp, nesting = "bottle %in% temp")',
  'emmeans(fit, ~ temp, nesting = NULL)',
  'emmeans(fit, ~ rating | temp, mode = "prob", nesting = NULL)',
  'pairs(emmeans(fit, ~ temp, nesting = NULL))'
)
table <- function(text, env = parent.frame()) {
  s <- as.data.frame(summary(suppressMessages(eval(parse(text = text), envir = env)),
                             infer = c(TRUE, TRUE)))
  estimate <- intersect(c("emmean", "estimate", "mean.class", "prob"), names(s))[1]
  labels <- setdiff(names(s), c(estimate, "SE", "df", "asymp.LCL", "asymp.UCL", "z.ratio", "p.value"))
  list(r_call = text, estimate_column = estimate,
       labels = lapply(s[labels], as.character),
       estimate = s[[estimate]], SE = s$SE, p.value = s$p.value)
}
joint <- function(fit, by = NULL, ...) {
  j <- as.data.frame(suppressMessages(joint_tests(fit, by = by, ...)))
  list(by = if (is.null(by)) list() else by, model_term = as.character(j[["model term"]]),
       by_values = if (is.null(by)) list() else as.character(j[[by]]),
       df1 = j$df1, F.ratio = j$F.ratio, p.value = j$p.value)
}
note <- tryCatch(ref_grid(fit), message = function(m) conditionMessage(m))
write_json(list(
  data = "wine",
  fit_call = "clm(rating ~ temp + bottle, data = wine)",
  coef = as.list(coef(fit)),
  note = note,
  versions = list(R = R.version.string, emmeans = as.character(packageVersion("emmeans")),
                  ordinal = as.character(packageVersion("ordinal"))),
  calls = lapply(calls, table, env = environment()),
  joint_tests = list(joint(fit), joint(fit, nesting = NULL)),
  unbalanced = local({
    data <- droplevels(subset(wine, bottle != "8"))
    fit <- clm(rating ~ temp + bottle + contact, data = data)
    calls <- c(
      'emmeans(fit, ~ temp)',
      'emmeans(fit, ~ temp, weights = "outer")',
      'emmeans(fit, ~ contact)',
      'emmeans(fit, ~ rating | contact, mode = "prob")',
      'pairs(emmeans(fit, ~ bottle | temp))'
    )
    list(data = 'droplevels(subset(wine, bottle != "8"))',
         fit_call = "clm(rating ~ temp + bottle + contact, data = data)",
         note = tryCatch(ref_grid(fit), message = function(m) conditionMessage(m)),
         calls = lapply(calls, table, env = environment()),
         joint_tests = list(joint(fit), joint(fit, by = "contact")))
  })
), "tests/data/reference/emmeans_nesting.json")
