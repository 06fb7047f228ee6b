# emmeans of a rank-deficient clm: a factorial with a cell without rows.
#
# Run from the repository root (R 4.2, emmeans 1.8.4, ordinal 2022.11.16, jsonlite):
#   Rscript tests/r/emmeans_nonest.R
# Writes tests/data/reference/emmeans_nonest.json for tests/results/test_emmeans_nonest.py:
#   data        the rows fitted: ordstats/datasets/wine.csv without temp == "warm" & contact == "yes"
#   fit_call    the exact call; its interaction coefficient is NA (aliased)
#   calls       each R expression and as.data.frame(summary(obj)): estimate (NA where
#               emmeans prints nonEst), SE, p value (15 significant digits)
#   joint_tests joint_tests(fit) and joint_tests(fit, by = "contact"): terms (R's
#               "(confounded)" row included), df1, F ratio, p value
#   clmm        emmeans(fit, ~ temp * contact) of clmm(rating ~ temp * contact + (1 | judge))
#   scale       emmeans(fit, ~ temp * contact, mode = "scale") of
#               clm(rating ~ temp * contact, scale = ~ temp * contact): the scale part's
#               interaction is aliased too
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
source("tests/r/json_output.R")    # write_json()
wine <- read_dataset("wine", "ordstats/datasets")
data <- subset(wine, !(temp == "warm" & contact == "yes"))
fit <- clm(rating ~ temp * contact, data = data)
calls <- c(
  'emmeans(fit, ~ temp * contact)',
  'emmeans(fit, ~ temp)',
  'emmeans(fit, ~ contact)',
  'pairs(emmeans(fit, ~ temp * contact))',
  'emmeans(fit, ~ temp * contact, mode = "mean.class")',
  'emmeans(fit, ~ rating | temp * contact, mode = "prob")'
)
table <- function(text, env = parent.frame()) {
  s <- as.data.frame(summary(eval(parse(text = text), envir = env), infer = c(TRUE, TRUE)))
  estimate <- intersect(c("emmean", "estimate", "mean.class", "prob"), names(s))[1]
  labels <- setdiff(names(s), c(estimate, "SE", "df", "asymp.LCL", "asymp.UCL", "z.ratio", "p.value"))
  list(r_call = text, estimate_column = estimate,
       labels = lapply(s[labels], as.character),
       estimate = s[[estimate]], SE = s$SE, p.value = s$p.value)
}
joint <- function(by) {
  j <- as.data.frame(if (is.null(by)) joint_tests(fit) else joint_tests(fit, by = by))
  list(by = if (is.null(by)) list() else by, model_term = as.character(j[["model term"]]),
       by_values = if (is.null(by)) list() else as.character(j[[by]]),
       df1 = j$df1, F.ratio = j$F.ratio, p.value = j$p.value)
}
write_json(list(
  data = 'subset(wine, !(temp == "warm" & contact == "yes"))',
  fit_call = "clm(rating ~ temp * contact, data = data)",
  coef = as.list(coef(fit)),
  versions = list(R = R.version.string, emmeans = as.character(packageVersion("emmeans")),
                  ordinal = as.character(packageVersion("ordinal"))),
  calls = lapply(calls, table, env = environment()),
  joint_tests = list(joint(NULL), joint("contact")),
  clmm = local({
    fit <- clmm(rating ~ temp * contact + (1 | judge), data = data)
    c(list(fit_call = "clmm(rating ~ temp * contact + (1 | judge), data = data)"),
      table("emmeans(fit, ~ temp * contact)"))
  }),
  scale = local({
    fit <- clm(rating ~ temp * contact, scale = ~ temp * contact, data = data)
    c(list(fit_call = "clm(rating ~ temp * contact, scale = ~ temp * contact, data = data)",
           coef = as.list(coef(fit))),
      table('emmeans(fit, ~ temp * contact, mode = "scale")'))
  })
), "tests/data/reference/emmeans_nonest.json")
