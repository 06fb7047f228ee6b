## Crossed and nested clmm fits (round 3 of the clmm audit): lme4's VerbAgg on a
## 1500-row subsample (tests/data/verbagg_1500.csv, written here), and soup with a
## grouping factor DAY:PROD whose SD the optimiser's line search first tries at ~e^700.
## R's clmm with a tight inner tolerance.  Run from the repository root as
##   Rscript tests/r/clmm_crossed.R
## writes tests/data/reference/clmm_crossed.json (~2 minutes).
suppressMessages({library(ordinal); library(jsonlite); library(lme4)})
source("tests/r/json_output.R")  # named(), write_json()
data(VerbAgg, package = "lme4")
set.seed(1)
va <- VerbAgg[sort(sample(nrow(VerbAgg), 1500)), c("r2", "resp", "Anger", "Gender", "btype", "situ", "id", "item")]
va$id <- factor(va$id); va$item <- factor(va$item)
va$w <- 1 + (seq_len(nrow(va)) %% 3)
write.csv(va, "tests/data/verbagg_1500.csv", row.names = FALSE)
soup <- ordinal::soup
TIGHT <- clmm.control(gradTol = 1e-8)
FX <- "Anger + Gender + btype + situ"
specs <- list(
  va_logit = list("va", paste("resp ~", FX, "+ (1|id) + (1|item)"), "logit"),
  va_probit = list("va", paste("resp ~", FX, "+ (1|id) + (1|item)"), "probit"),
  va_r2 = list("va", paste("r2 ~", FX, "+ (1|id) + (1|item)"), "logit"),
  va_id_btype = list("va", paste("resp ~", FX, "+ (1|item) + (1|id:btype)"), "logit"),
  soup_day_prod = list("soup", "SURENESS ~ PROD + (1|RESP) + (1|DAY:PROD)", "logit")
)
out <- list(package_version = as.character(packageVersion("ordinal")))
for (nm in names(specs)) {
  s <- specs[[nm]]
  fit <- clmm(as.formula(s[[2]]), data = get(s[[1]]), link = s[[3]], control = TIGHT)
  vc <- VarCorr(fit)
  re <- ranef(fit)
  out[[nm]] <- list(data = s[[1]], formula = s[[2]], link = s[[3]],
    loglik = as.numeric(logLik(fit)), coef = named(coef(fit)),
    se = named(sqrt(diag(vcov(fit)))), max_grad = max(abs(fit$gradient)),
    sd = lapply(vc, function(V) as.numeric(attr(V, "stddev"))),
    ranef = lapply(re, function(df) named(df[[1]], rownames(df))))
}
write_json(out, "tests/data/reference/clmm_crossed.json")
