# Extra ordinal::clmm reference results: links, structured thresholds, adaptive
# and non-adaptive quadrature, weights, offsets, crossed / nested / vector-valued
# random effects, a boundary fit (SD -> 0), clm-vs-clmm LR tables and profile
# intervals for the random-effect SD.
#
# Run from the repository root (ordinal 2022.11.16, numDeriv, jsonlite):
#   Rscript tests/r/clmm_extra.R            # all cases (~10 min on 1 core)
#   Rscript tests/r/clmm_extra.R wine_probit soup_agq10   # selected cases
# Writes tests/data/reference/clmm_extra/<case>.json (schema of the public
# clmm_*.json files) and clmm_extra/_refused.json (calls R refuses).
#
# Every case is fitted twice: the main fit (the `r_call`) uses
# clmm.control(gradTol = 1e-8) -- the inner Newton tolerance for the conditional
# modes; R's default (1e-4) lets the Laplace log-likelihood be off by ~1e-6
# (see notes) -- and `extra.default_control` has the fit with R's defaults.
# `extra.independent` is our own implementation (tests/r/clmm_indep.R) of the same
# objective, optimised to max|grad| ~1e-9: the exact optimum R is approximating.
suppressMessages({library(ordinal); library(jsonlite); library(numDeriv)})
source("tests/r/clmm_indep.R")

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
# numeric 0/1 dummy for an uncorrelated random slope (derived column, not in the CSV):
wine$cyes <- as.numeric(wine$contact == "yes")

out_dir <- "tests/data/reference/clmm_extra"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
pkgs <- c("ordinal", "MASS", "VGAM", "glmnet", "brglm2", "jsonlite", "Matrix", "numDeriv", "ucminf")
package_versions <- c(list(R = R.version.string),
  setNames(lapply(pkgs, function(p) as.character(packageVersion(p))), pkgs))
TIGHT <- "control = clmm.control(gradTol = 1e-8)"

named <- function(x, nm = names(x)) as.list(setNames(as.numeric(x), nm))
rows <- function(M) unname(lapply(seq_len(nrow(M)), function(i) as.numeric(M[i, ])))
write_json <- function(x, path)
  writeLines(toJSON(x, auto_unbox = TRUE, digits = I(15), pretty = TRUE, na = "string", null = "null"), path)

# evaluate a call text, collecting warnings (deduplicated, with counts)
run <- function(call_text) {
  warns <- character()
  t0 <- proc.time()[["elapsed"]]
  fit <- tryCatch(withCallingHandlers(eval(parse(text = call_text), envir = globalenv()),
    warning = function(w) { warns <<- c(warns, conditionMessage(w)); invokeRestart("muffleWarning") }),
    error = function(e) e)
  el <- proc.time()[["elapsed"]] - t0
  norm <- gsub("\n  at iteration [0-9]+", "", warns)
  tab <- table(norm)
  list(fit = fit, warnings = names(tab), warnings_count = as.list(setNames(as.integer(tab), names(tab))),
       elapsed = el)
}

st_par <- function(fit) {
  if (is.null(fit$Zt)) log(fit$ST[[1]][1, 1]) else ordinal:::ST2par(fit$ST)
}
st_names <- function(fit) paste0("ST", seq_along(st_par(fit)))

re_summary <- function(fit) {
  vc <- VarCorr(fit)
  nm <- make.unique(names(fit$ST))
  res <- lapply(seq_along(vc), function(i) {
    V <- vc[[i]]; cn <- colnames(fit$ST[[i]])
    r <- list(group = names(fit$ST)[i],
              term = sprintf("(%s | %s)", paste(cn, collapse = " + "), names(fit$ST)[i]),
              columns = cn, variance = rows(unclass(V)), sd = named(attr(V, "stddev"), cn))
    if (!is.null(attr(V, "correlation"))) r$correlation <- rows(attr(V, "correlation"))
    r
  })
  names(res) <- nm
  res
}

ranef_list <- function(re) lapply(re, function(df) lapply(as.list(df), function(col) named(col, rownames(df))))

summarise_fit <- function(fit) {
  V <- tryCatch(vcov(fit), error = function(e) e)
  list(coef = named(coef(fit)), ST = lapply(fit$ST, rows), st_par = named(st_par(fit), st_names(fit)),
       loglik = fit$logLik, max_abs_grad = max(abs(fit$gradient)),
       convergence_code = fit$optRes$convergence, convergence_messages = fit$optRes$message,
       niter = list(Niter = fit$Niter, neval = fit$neval),
       se = if (inherits(V, "error")) NULL else named(sqrt(diag(V)), colnames(V)))
}

# --- independent optimum of the same objective -----------------------------
independent <- function(fit, fit_default, nAGQ, outer = 1e5) {
  S <- indep_setup(fit, outer = outer)
  fn <- function(p) indep_nll(p, S, nAGQ)
  nfe <- S$nalpha + S$nbeta
  # numDeriv Hessian: Richardson with r = 4 (default) for a single scalar term, r = 2 otherwise (cost)
  marg <- list(eps = 1e-4, d = 0.1, zero.tol = sqrt(.Machine$double.eps / 7e-7), r = if (S$ssr) 4 else 2, v = 2)
  p0 <- c(unname(fit$coefficients), st_par(fit))
  pd <- c(unname(fit_default$coefficients), st_par(fit_default))
  nll_R_tight <- fn(p0); nll_R_default <- fn(pd)
  cons <- if (S$ssr) 0 else ordinal:::STconstraints(fit$ST)
  at_bound <- function(p) c(rep(FALSE, nfe), if (S$ssr) p[length(p)] < -7 else (cons == 1 & p[-seq_len(nfe)] < 1e-3))
  p <- p0
  method <- "Newton polish from R's main fit"
  if (any(at_bound(p))) {
    # variance parameters R left at (or next to) the boundary are set to it (SD 0; log(sigma) = -30
    # for a single scalar term) and the remaining parameters are Newton-polished
    method <- "boundary variance parameters fixed at 0 (single term: log(sigma) = -30), Newton polish of the others from R's main fit"
    bnd <- at_bound(p)
    p[bnd] <- if (S$ssr) -30 else 0
  }
  free <- !at_bound(p)
  for (k in seq_len(if (S$ssr) 10 else 3)) {
    g <- grad(fn, p)
    if (!all(is.finite(g)) || max(abs(g[free])) < 1e-10) break
    H <- hessian(fn, p, method.args = marg)[free, free, drop = FALSE]
    step <- tryCatch(solve(H, g[free]), error = function(e) NULL)
    if (is.null(step)) break
    s <- 1; f0 <- fn(p)
    repeat { pn <- p; pn[free] <- p[free] - s * step; fv <- fn(pn); if (is.finite(fv) && fv <= f0 + 1e-13) break; s <- s / 2; if (s < 1e-4) break }
    if (s < 1e-4) break
    p <- pn
  }
  g <- grad(fn, p); H <- hessian(fn, p, method.args = marg)
  nms <- c(names(fit$coefficients), st_names(fit))
  Vf <- tryCatch(solve(H[free, free, drop = FALSE]), error = function(e) NULL)
  list(method = method, outer_thresholds = outer,
       coef = named(p[seq_len(nfe)], nms[seq_len(nfe)]),
       st_par = named(p[-seq_len(nfe)], nms[-seq_len(nfe)]),
       loglik = -fn(p), gradient = named(g, nms), max_abs_grad = max(abs(g[free])),
       at_boundary = nms[!free],
       se = if (is.null(Vf)) NULL else named(sqrt(diag(Vf)), nms[free]),
       vcov = if (is.null(Vf)) NULL else rows(Vf), vcov_names = nms[free],
       loglik_at_R_main_estimates = -nll_R_tight, loglik_at_R_default_estimates = -nll_R_default,
       max_abs_coef_diff_vs_R_main = max(abs(p - p0)), max_abs_coef_diff_vs_R_default = max(abs(p - pd)))
}

# profile-likelihood CI for the SD of a single scalar term, on our exact objective
profile_sd <- function(fit, nAGQ, level = 0.95) {
  S <- indep_setup(fit)
  nfe <- S$nalpha + S$nbeta
  fe0 <- unname(fit$coefficients); ls0 <- st_par(fit)
  fn_full <- function(p) indep_nll(p, S, nAGQ)
  nll_min <- fn_full(c(fe0, ls0))
  prof <- function(ls) {
    f <- function(fe) indep_nll(c(fe, ls), S, nAGQ)
    op <- nlminb(fe0, f, gradient = function(x) grad(f, x), control = list(rel.tol = 1e-13))
    op$objective
  }
  crit <- qchisq(level, 1)
  dev <- function(ls) 2 * (prof(ls) - nll_min) - crit
  hi <- uniroot(dev, c(ls0, ls0 + 3), extendInt = "upX", tol = 1e-9)$root
  lo_end <- ls0 - 8
  lo <- if (dev(lo_end) < 0) -Inf else uniroot(dev, c(lo_end, ls0), tol = 1e-9)$root
  grid <- ls0 + seq(-1.5, 1.5, by = 0.5)
  list(method = "profile likelihood of sigma: fixed log(sigma), thresholds and beta re-optimised (nlminb, numDeriv gradient) on our exact objective; limits where 2*(logLik_max - logLik_profile) = qchisq(0.95, 1)",
       level = level, sd_ci = c(exp(lo), exp(hi)), log_sd_ci = c(lo, hi),
       grid_log_sd = grid, grid_loglik = -sapply(grid, prof), loglik_max = -nll_min)
}

refused <- list()
case <- function(name, call_text, dataset, notes = character(), anova_clm = NULL, clmm2_profile = NULL,
                 indep = TRUE, profile = FALSE) {
  cat(name, "... ")
  tight_text <- sub("\\)$", paste0(", ", TIGHT, ")"), call_text)
  r <- run(tight_text)
  if (inherits(r$fit, "error")) {
    refused[[name]] <<- list(r_call = tight_text, error = conditionMessage(r$fit), warnings = r$warnings)
    rd <- run(call_text)
    refused[[name]]$default_call <- call_text
    refused[[name]]$default_error <- if (inherits(rd$fit, "error")) conditionMessage(rd$fit) else "fitted"
    cat("refused\n"); return(invisible())
  }
  fit <- r$fit
  rd <- run(call_text)
  fitd <- rd$fit
  V <- tryCatch(vcov(fit), error = function(e) e)
  nAGQ <- fit$nAGQ
  cf <- coef(fit)
  se <- if (inherits(V, "error")) NULL else sqrt(diag(V))[names(cf)]
  out <- list(
    case = paste0("clmm_extra_", name), set = "generated", kind = "fit", dataset = dataset,
    r_call = tight_text, package = "ordinal", package_version = as.character(packageVersion("ordinal")),
    package_versions = package_versions,
    link = fit$link, threshold = fit$threshold,
    parametrisation = paste(
      "ordinal::clmm: P(Y_i <= j | u) = F(theta_j - x_i'beta - offset_i - z_i'b), b = Lambda u, u ~ N(0, I).",
      "Positive ranef = higher categories. Single scalar term (R's 'ssr' code path): vcov/Hessian parameter ST1 = log(sigma).",
      "Several terms or a vector-valued term: parameters ST1.. are, per term in fit$ST order, diag(ST) then",
      "ST[lower.tri(ST)] (column-major) on the SD scale (not log), diag constrained >= 0; the term's covariance is",
      "ST %*% t(ST) (VarCorr). Variance parameters with ST < 1e-3 are at the boundary and R drops them from",
      "gradient/Hessian/vcov (vcov_names shows which remain). loglik = Laplace (nAGQ = 1), adaptive GHQ (nAGQ > 1,",
      "nodes u_mode + sqrt(2/D) x_h, standard rule) or ordinal's non-adaptive GHQ (nAGQ < 0: b = sigma x_h with",
      "physicists' nodes x_h and log-weights log(w_h) + x_h^2/2, i.e. NOT the textbook sqrt(2)*sigma*x_h rule)."),
    n = nrow(fit$model), nobs = nobs(fit),
    loglik = fit$logLik, aic = AIC(fit), bic = BIC(fit), df = fit$edf,
    niter = list(Niter = fit$Niter, neval = fit$neval),
    converged = fit$optRes$convergence == 0,
    convergence_code = fit$optRes$convergence, convergence_messages = fit$optRes$message,
    warnings = r$warnings, warnings_count = r$warnings_count, messages = list(),
    max_abs_grad = max(abs(fit$gradient)),
    cond_H = if (any(is.na(fit$Hessian))) "Inf" else with(eigen(fit$Hessian, only.values = TRUE), abs(max(values) / min(values))),
    coef = named(cf),
    se = if (is.null(se)) NULL else named(se),
    vcov = if (inherits(V, "error")) NULL else rows(V),
    vcov_names = if (inherits(V, "error")) NULL else colnames(V),
    vcov_error = if (inherits(V, "error")) conditionMessage(V) else NULL,
    wald_ci = if (is.null(se)) NULL else lapply(setNames(seq_along(cf), names(cf)),
      function(i) as.numeric(cf[i] + c(-1, 1) * qnorm(0.975) * se[i])),
    profile_ci = NULL, pred_prob = NULL, pred_prob_levels = NULL,
    extra = list(
      nAGQ = nAGQ,
      random_effects = re_summary(fit),
      ST = lapply(fit$ST, rows),
      st_par = named(st_par(fit), st_names(fit)),
      ranef = ranef_list(ranef(fit)),
      condVar = ranef_list(condVar(fit)),
      gradient = named(fit$gradient),
      Hessian = if (!is.null(fit$Hessian)) rows(fit$Hessian) else NULL,
      Hessian_names = colnames(fit$Hessian),
      fitted_values = as.numeric(fitted(fit))[1:20],
      fitted_note = "fitted(fit) = P(observed class | u = conditional modes), first 20 rows",
      dims = lapply(fit$dims, function(x) if (length(x) > 1 || !is.null(names(x))) as.list(x) else x),
      elapsed_seconds = r$elapsed,
      default_control = c(list(r_call = call_text, warnings = rd$warnings, elapsed_seconds = rd$elapsed),
                          if (!inherits(fitd, "error")) summarise_fit(fitd) else list(error = conditionMessage(fitd)))
    ),
    notes = c(
      "Main fit: clmm.control(gradTol = 1e-8) (inner tolerance of the conditional-mode Newton). With R's default gradTol = 1e-4 the Laplace value is evaluated with a slightly stale mode/Hessian and is off by up to ~1e-6 (wine); extra.default_control has R's default fit, extra.independent the exact optimum.",
      "max_abs_grad is R's central-difference gradient (deriv12); clmm's outer nlminb uses finite differences, so R stops at max|grad| ~1e-5 whatever rel.tol is (rel.tol = 1e-12 only changes the message to 'singular convergence (7)').",
      notes)
  )
  if (!inherits(fitd, "error")) {
    out$extra$default_control$max_abs_coef_diff_vs_main <- max(abs(c(fitd$coefficients, st_par(fitd)) - c(fit$coefficients, st_par(fit))))
    out$extra$default_control$loglik_diff_vs_main <- fitd$logLik - fit$logLik
  }
  # vector-valued terms: full conditional covariance blocks per level
  if (!is.null(fit$Zt) && any(fit$dims$qi > 1)) {
    CV <- as.matrix(fit$condVar); off <- 0; blocks <- list()
    for (i in seq_along(fit$ST)) {
      qi <- fit$dims$qi[i]; nl <- fit$dims$nlev.re[i]
      if (qi > 1) {
        lev <- levels(fit$gfList[[names(fit$ST)[i]]])
        blocks[[make.unique(names(fit$ST))[i]]] <- setNames(lapply(seq_len(nl), function(l) {
          idx <- off + l + nl * (0:(qi - 1)); rows(CV[idx, idx, drop = FALSE]) }), lev)
      }
      off <- off + qi * nl
    }
    out$extra$condVar_blocks <- blocks
    out$extra$condVar_blocks_note <- "per level: conditional covariance of the term's columns (order as extra.random_effects[[term]]$columns)"
  }
  if (indep && !inherits(fitd, "error")) {
    out$extra$independent <- tryCatch(independent(fit, fitd, nAGQ), error = function(e) list(error = conditionMessage(e)))
    if (fit$link == "cauchit")
      out$extra$independent_exact_cauchit <- tryCatch(independent(fit, fitd, nAGQ, outer = Inf),
        error = function(e) list(error = conditionMessage(e)))
  }
  if (!is.null(anova_clm)) {
    fm0 <- eval(parse(text = anova_clm), envir = globalenv())
    assign("fmm_tmp", fit, envir = globalenv()); assign("fm_tmp", fm0, envir = globalenv())
    an <- anova(fm_tmp, fmm_tmp)
    out$extra$anova_vs_clm <- list(r_call = paste0("anova(", anova_clm, ", <main clmm fit>)"),
      table = list(row_names = c(anova_clm, tight_text),
                   columns = lapply(as.list(an), function(x) as.numeric(x))),
      clm_loglik = as.numeric(logLik(fm0)))
  }
  if (!is.null(clmm2_profile)) {
    pr <- tryCatch({
      f2 <- eval(parse(text = clmm2_profile), envir = globalenv())
      p2 <- profile(f2)
      ci <- confint(p2)
      list(r_call = clmm2_profile, profile_call = "confint(profile(fit2))", sd_ci = as.numeric(ci),
           clmm2_stDev = as.numeric(f2$stDev), clmm2_loglik = f2$logLik, clmm2_coef = named(coef(f2)),
           profile = list(stDev = p2$stDev$stDev, Lroot = p2$stDev$Lroot),
           note = "ordinal has no profile/confint method for clmm objects (confint(clmm) is Wald only); clmm2's profile.clmm2 profiles the SD with its own (older) Laplace/AGQ code, Lroot = signed root deviance")
    }, error = function(e) list(r_call = clmm2_profile, error = conditionMessage(e)))
    out$extra$profile_sd_clmm2 <- pr
  }
  if (profile) out$extra$profile_sd <- tryCatch(profile_sd(fit, nAGQ), error = function(e) list(error = conditionMessage(e)))
  write_json(out, file.path(out_dir, paste0(name, ".json")))
  cat(sprintf("ll %.10f (default %.10f) maxgrad %.2g, %.1fs\n", fit$logLik,
              if (!inherits(fitd, "error")) fitd$logLik else NA, max(abs(fit$gradient)), r$elapsed))
}

W <- "rating ~ temp + contact + (1|judge)"
cases <- list(
  wine_logit = list(sprintf("clmm(%s, data = wine)", W), "wine",
    anova_clm = "clm(rating ~ temp + contact, data = wine)",
    clmm2_profile = "clmm2(rating ~ temp + contact, random = judge, data = wine, Hess = TRUE)", profile = TRUE),
  wine_probit = list(sprintf("clmm(%s, data = wine, link = \"probit\")", W), "wine",
    anova_clm = "clm(rating ~ temp + contact, data = wine, link = \"probit\")"),
  wine_cloglog = list(sprintf("clmm(%s, data = wine, link = \"cloglog\")", W), "wine"),
  wine_loglog = list(sprintf("clmm(%s, data = wine, link = \"loglog\")", W), "wine"),
  wine_cauchit = list(sprintf("clmm(%s, data = wine, link = \"cauchit\")", W), "wine",
    notes = "cauchit: ordinal uses +-1e5 instead of +-Inf for the outer thresholds (as clm); extra.independent uses +-1e5 (R's objective), extra.independent_exact_cauchit uses +-Inf."),
  wine_equidistant = list(sprintf("clmm(%s, data = wine, threshold = \"equidistant\")", W), "wine"),
  wine_symmetric = list(sprintf("clmm(%s, data = wine, threshold = \"symmetric\")", W), "wine"),
  wine_agq3 = list(sprintf("clmm(%s, data = wine, nAGQ = 3)", W), "wine"),
  wine_agq5 = list(sprintf("clmm(%s, data = wine, nAGQ = 5)", W), "wine"),
  wine_agq10 = list(sprintf("clmm(%s, data = wine, nAGQ = 10)", W), "wine",
    clmm2_profile = "clmm2(rating ~ temp + contact, random = judge, data = wine, Hess = TRUE, nAGQ = 10)", profile = TRUE),
  wine_agq20 = list(sprintf("clmm(%s, data = wine, nAGQ = 20)", W), "wine"),
  wine_ghq10 = list(sprintf("clmm(%s, data = wine, nAGQ = -10)", W), "wine",
    notes = "nAGQ = -10: ordinal's non-adaptive Gauss-Hermite rule, see parametrisation."),
  wine_weights = list(sprintf("clmm(%s, data = wine, weights = 1 + (seq_len(72) %%%% 3))", W), "wine",
    notes = "weights w_i = 1 + (i mod 3), i = 1..72, multiply the log-likelihood terms; nobs = sum(w) = 144."),
  wine_offset = list(sprintf("clmm(%s, data = wine, offset = 0.25 * ((seq_len(72) - 1) %%%% 3))", W), "wine",
    notes = "offset o_i = 0.25 * ((i - 1) mod 3) enters like x'beta: P(Y <= j | u) = F(theta_j - x'beta - o_i - u)."),
  wine_crossed = list("clmm(rating ~ temp + contact + (1|judge) + (1|bottle), data = wine)", "wine",
    anova_clm = "clm(rating ~ temp + contact, data = wine)"),
  wine_corr_slope = list("clmm(rating ~ temp + contact + (1 + contact|judge), data = wine)", "wine",
    notes = "The correlation goes to -1 and the contactyes diagonal of ST to ~0 (boundary): R drops that ST parameter from gradient/Hessian/vcov."),
  wine_uncorr_factor = list("clmm(rating ~ temp + contact + (1|judge) + (0 + contact|judge), data = wine)", "wine",
    notes = "(0 + contact|judge) with factor contact gives TWO columns (contactno, contactyes) with a 2x2 correlated ST, so this model is over-parametrised (the (1|judge) SD goes to 0); see wine_uncorr_dummy for the intended uncorrelated slope."),
  wine_uncorr_dummy = list("clmm(rating ~ temp + contact + (1|judge) + (0 + cyes|judge), data = wine)", "wine",
    notes = "cyes = as.numeric(wine$contact == \"yes\") (derived in the script, not a CSV column): uncorrelated random intercept and contact slope."),
  wine_bottle_only = list("clmm(rating ~ temp + contact + (1|bottle), data = wine)", "wine",
    notes = "Random-effect SD goes to ~0 (boundary); R's Hessian at log(sigma) ~ -10 is not positive definite so vcov() fails (vcov_error)."),
  soup_nested = list("clmm(SURENESS ~ PROD + (1|RESP/DAY), data = soup)", "soup",
    notes = "(1|RESP/DAY) expands to (1|RESP) + (1|RESP:DAY); R orders terms by number of levels (DAY:RESP first)."),
  soup_resp_prodresp = list("clmm(SURENESS ~ PROD + (1|RESP) + (1|RESP:PROD), data = soup)", "soup",
    anova_clm = "clm(SURENESS ~ PROD, data = soup)"),
  soup_agq10 = list("clmm(SURENESS ~ PROD + (1|RESP), data = soup, nAGQ = 10)", "soup"),
  soup_fixed3 = list("clmm(SURENESS ~ PROD + DAY + SOUPTYPE + (1|RESP), data = soup)", "soup"),
  # calls R refuses (recorded in _refused.json):
  refuse_crossed_agq = list("clmm(rating ~ temp + contact + (1|judge) + (1|bottle), data = wine, nAGQ = 10)", "wine"),
  refuse_slope_agq = list("clmm(rating ~ temp + contact + (1 + contact|judge), data = wine, nAGQ = 5)", "wine"),
  refuse_flexible_link = list(sprintf("clmm(%s, data = wine, link = \"Aranda-Ordaz\")", W), "wine")
)

args <- commandArgs(trailingOnly = TRUE)
todo <- if (length(args)) args else names(cases)
# CLMM_FAST=1: skip extra.independent and the profiles (R's numbers only)
fast <- nzchar(Sys.getenv("CLMM_FAST"))
for (nm in todo) {
  a <- cases[[nm]]
  if (fast) { a$indep <- FALSE; a$profile <- FALSE; a$clmm2_profile <- NULL }
  do.call(case, c(list(name = nm, call_text = a[[1]], dataset = a[[2]]), a[-(1:2)]))
}
if (length(refused)) {
  write_json(list(case = "clmm_extra_refused", package_versions = package_versions,
                  note = "clmm calls that R refuses (error), with R's error message; each was tried with and without clmm.control(gradTol = 1e-8)",
                  refused = refused), file.path(out_dir, "_refused.json"))
}
