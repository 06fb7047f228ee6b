# brms posteriors of small wine models: get_prior() and the draws' means and SDs.
#
# Run from the repository root (brms 2.18 with rstan; needs BH's Boost headers):
#   Rscript tests/r/brms_wine.R
# Writes tests/data/reference/bayes/brms_wine.json (about 10 minutes: one Stan compile a model).
suppressMessages({library(brms); library(jsonlite)})
source("tests/r/write_dataset.R")  # read_dataset()
wine <- read_dataset("wine", "ordstats/datasets")
models <- list(
  cum = list(f = bf(rating ~ temp + contact), fam = cumulative("logit"), iter = 2000),
  sratio = list(f = bf(rating ~ temp + contact), fam = sratio("logit"), iter = 2000),
  judge = list(f = bf(rating ~ temp + contact + (1 | judge)), fam = cumulative("logit"),
               iter = 2000),
  thres = list(f = bf(rating | thres(gr = contact) ~ temp), fam = cumulative("logit"),
               iter = 2000),
  cs_prior = list(f = bf(rating ~ temp + cs(contact)), fam = acat("logit"), iter = 4000,
                  prior = c(prior(normal(0, 1), class = Intercept),
                            prior(normal(0, 2), class = b))))
out <- list(settings = "brms 2.18 (rstan), chains = 2, seed = 1, cores = 1",
            package_versions = list(R = R.version.string,
                                    brms = as.character(packageVersion("brms"))))
for (nm in names(models)) {
  s <- models[[nm]]
  pr <- if (is.null(s$prior)) NULL else s$prior
  gp <- get_prior(s$f, data = wine, family = s$fam)
  fit <- brm(s$f, data = wine, family = s$fam, prior = pr, chains = 2, iter = s$iter,
             seed = 1, cores = 1, refresh = 0, silent = 2, backend = "rstan")
  dr <- as.data.frame(as_draws_df(fit))
  dr <- dr[, grep("^(b_|bcs_|sd_)", names(dr)), drop = FALSE]
  out[[nm]] <- list(formula = paste(deparse(s$f$formula), collapse = ""), family = s$fam$family,
                    iter = s$iter, prior = as.data.frame(gp)[, c("prior", "class", "coef", "group")],
                    given_prior = if (is.null(pr)) NULL else as.data.frame(pr)[, c("prior", "class", "coef", "group")],
                    mean = as.list(colMeans(dr)), sd = as.list(apply(dr, 2, sd)))
}
writeLines(toJSON(out, auto_unbox = TRUE, digits = 10, pretty = TRUE),
           "tests/data/reference/bayes/brms_wine.json")
