## Vector-valued random terms, (1 + x|g), against ordinal::clmm (slopes audit): lmerTest's
## carrots (Preference 1-7 by Consumer; numeric slopes sens1/sens2) and a 12-LEA sample of
## mlmRev's Chem97 (A-level score by LEA and school; numeric and factor slopes).  Writes the
## two data sets (tests/data/carrots.csv, tests/data/chem97_12lea.csv) and
## tests/data/reference/clmm_slopes.json.  R's default clmm control: the convergence code
## and max|gradient| are recorded with each fit, since some of these stop early.
## Run from the repository root:  Rscript tests/r/clmm_slopes.R   (~5 minutes)
suppressMessages({library(ordinal); library(jsonlite); library(lmerTest); library(mlmRev)})
source("tests/r/json_output.R")  # named(), write_json()
data(carrots, package = "lmerTest")
ca <- carrots[, c("Consumer", "Product", "Preference", "Homesize", "sens1", "sens2")]
ca <- ca[complete.cases(ca), ]
ca$w <- 1 + (seq_len(nrow(ca)) %% 3)
ca$off <- 0.2 * (seq_len(nrow(ca)) %% 4)
write.csv(ca, "tests/data/carrots.csv", row.names = FALSE)
ca$P <- factor(ca$Preference, ordered = TRUE)
data(Chem97, package = "mlmRev")
set.seed(1)
leas <- sample(levels(Chem97$lea), 12)
ch <- droplevels(Chem97[Chem97$lea %in% leas, c("lea", "school", "score", "gender", "gcsecnt")])
write.csv(ch, "tests/data/chem97_12lea.csv", row.names = FALSE)
ch$S <- factor(ch$score, ordered = TRUE)
specs <- list(
  carrots_corr = list("ca", "P ~ sens1 + sens2 + (1 + sens1|Consumer)", "logit", "flexible", FALSE),
  carrots_probit = list("ca", "P ~ sens2 + Homesize + (1 + sens2|Consumer)", "probit", "flexible", FALSE),
  carrots_indep = list("ca", "P ~ sens1 + sens2 + (1|Consumer) + (0 + sens2|Consumer)", "logit", "flexible", FALSE),
  carrots_cloglog_equi = list("ca", "P ~ sens1 + sens2 + (1 + sens2|Consumer)", "cloglog", "equidistant", FALSE),
  carrots_sym_w_off = list("ca", "P ~ sens1 + sens2 + offset(off) + (1 + sens2|Consumer)", "logit", "symmetric", TRUE),
  carrots_two = list("ca", "P ~ sens1 + sens2 + (1 + sens2|Consumer) + (1|Product)", "logit", "flexible", FALSE),
  chem_num = list("ch", "S ~ gcsecnt + gender + (1 + gcsecnt|lea)", "logit", "flexible", FALSE),
  chem_factor = list("ch", "S ~ gcsecnt + gender + (1 + gender|lea)", "logit", "flexible", FALSE),
  chem_two = list("ch", "S ~ gcsecnt + gender + (1 + gcsecnt|lea) + (1|school)", "logit", "flexible", FALSE)
)
fits <- list()
out <- list(package_version = as.character(packageVersion("ordinal")))
for (nm in names(specs)) {
  s <- specs[[nm]]
  d <- get(s[[1]])
  fit <- if (s[[5]]) clmm(as.formula(s[[2]]), data = d, link = s[[3]], threshold = s[[4]], weights = w)
         else clmm(as.formula(s[[2]]), data = d, link = s[[3]], threshold = s[[4]])
  fits[[nm]] <- fit
  vc <- VarCorr(fit)
  re <- ranef(fit, condVar = TRUE)
  out[[nm]] <- list(data = s[[1]], formula = s[[2]], link = s[[3]], threshold = s[[4]],
    weights = s[[5]], loglik = as.numeric(logLik(fit)), coef = named(coef(fit)),
    se = named(sqrt(diag(vcov(fit)))), convergence = fit$optRes$convergence,
    max_grad = max(abs(fit$gradient)),
    sd = lapply(vc, function(V) named(attr(V, "stddev"))),
    corr = lapply(vc, function(V) { C <- attr(V, "correlation"); if (is.matrix(C)) rows(C) else list(list(1)) }),
    ranef = lapply(re, function(df) lapply(df, function(col) named(col, rownames(df)))),
    condvar = lapply(re, function(df) { cv <- attr(df, "condVar");
      lapply(cv, function(col) named(col, rownames(df))) }),
    fitted_first10 = as.numeric(fit$fitted.values[1:10]))
}
## nested random structures: random intercept within a correlated slope model
small <- clmm(P ~ sens1 + sens2 + (1|Consumer), data = ca)
big <- clmm(P ~ sens1 + sens2 + (1 + sens2|Consumer), data = ca)
av <- anova(small, fits$carrots_indep, big)
out$anova <- list(formulas = c(small = "P ~ sens1 + sens2 + (1|Consumer)",
                               specs$carrots_indep[[2]],
                               "P ~ sens1 + sens2 + (1 + sens2|Consumer)"),
  loglik = as.numeric(av$logLik), no_par = as.numeric(av$no.par),
  lr = as.numeric(av$LR.stat), df = as.numeric(av$df), p = as.numeric(av$`Pr(>Chisq)`))
write_json(out, "tests/data/reference/clmm_slopes.json")
