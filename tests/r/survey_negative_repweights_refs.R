# Replicate weights with negative values: as.svrepdesign(type = "mrbbootstrap") (Preston's
# multistage rescaled bootstrap) gives them, here in the second stage of a stratum whose PSUs
# are all sampled.  svrepdesign and svyolr accept them (polr maximises the weighted log-likelihood
# whatever the signs of the weights).
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite):
#   Rscript tests/r/survey_negative_repweights_refs.R
# Writes tests/data/survey/negative_repweights_refs.json:
#   data        a generated two-stage sample (seeded): 4 strata h of 2 to 4 PSUs (psu, a third
#               of the stratum's PSUs, all of them in S2: fpc1), 2 SSUs each (ssu, of 4 to 6: fpc2), 5 rows per
#               SSU; sampling weights w, covariates x and f, the ordered response y (L1 < ... < L4)
#   design      the R call (seeded, 20 replicates)
#   repweights, scale, rscales, type  of that design (rows of `data`)
#   n_negative  how many replicate weights are negative
#   formula, degf, df_residual, coef (slopes, then cut-points, converged: polr reltol 1e-15)
#   var_newton  svrVar of replicate estimates converged by polr (reltol 1e-15), as svyolr
#               computes it from its default (early-stopping) polr refits
suppressMessages({library(survey); library(MASS); library(jsonlite)})
survey_out <- "tests/data/survey"
set.seed(2)
npsu <- c(2, 3, 4, 3)
d <- do.call(rbind, lapply(seq_along(npsu), function(h) expand.grid(
  row = 1:5, ssu = 1:2, psu = seq_len(npsu[h]), h = paste0("S", h))))
d$psu <- paste0(d$h, "_", d$psu)
d$ssu <- paste0(d$psu, "_", d$ssu)
d$fpc1 <- 3 * npsu[as.integer(factor(d$h))]
d$fpc1[d$h == "S2"] <- npsu[2]  # S2 is sampled whole (certainty PSUs)
d$fpc2 <- 4 + as.integer(factor(d$psu)) %% 3
n <- nrow(d)
d$w <- round(exp(rnorm(n, 2, 0.7)), 3)
d$x <- round(rnorm(n), 4)
d$f <- sample(c("a", "b", "c"), n, TRUE)
latent <- 0.8 * d$x + 0.5 * (d$f == "b") + rnorm(length(unique(d$psu)))[as.integer(factor(d$psu))] * 0.6 + rlogis(n)
d$y <- cut(latent, quantile(latent, c(0, 0.3, 0.55, 0.8, 1)), include.lowest = TRUE,
           labels = paste0("L", 1:4), ordered_result = TRUE)
d$row <- NULL
call <- "as.svrepdesign(svydesign(id = ~psu + ssu, strata = ~h, fpc = ~fpc1 + fpc2, weights = ~w, data = d), type = 'mrbbootstrap', replicates = 20, compress = FALSE)"
set.seed(27)
des <- eval(parse(text = call))
rw <- matrix(as.numeric(as.matrix(weights(des, "analysis"))), n)
stopifnot(any(rw < 0))
f <- y ~ x + f
fit <- suppressWarnings(svyolr(f, des))
tight <- list(reltol = 1e-15, maxit = 1000)
frame <- model.frame(des)
frame$.w <- weights(des, "sampling")
full <- suppressWarnings(polr(f, data = frame, weights = .w, control = tight))
start <- c(full$coefficients, full$zeta)
betas <- apply(rw, 2, function(w) {
  frame$.w <- w
  m <- suppressWarnings(polr(f, data = frame, weights = .w, start = start, control = tight))
  c(m$coefficients, m$zeta)
})
v <- svrVar(t(betas), des$scale, des$rscales, mse = des$mse, coef = start)
d$y <- as.character(d$y)
ref <- list(
  data = d, design = call, repweights = rw, scale = des$scale, rscales = des$rscales,
  type = des$type, n_negative = sum(rw < 0), formula = deparse(f), degf = degf(des),
  df_residual = fit$df.residual, coef = unname(start), var_newton = unname(matrix(v, nrow(v))))
writeLines(toJSON(ref, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "negative_repweights_refs.json"))
