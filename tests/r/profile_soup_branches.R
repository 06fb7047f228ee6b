# The profile of SOUPTYPECanned in clm(SURENESS ~ COLD + SOUPTYPE, nominal = ~ PROD,
# scale = ~ PROD, data = soup) jumps at 0: below 0 the constrained maximum lies on a
# branch whose scale effect runs off to -Inf as the value nears 0 (all location effects
# and the PROD-Test thresholds tending to 0 with it); above 0 that branch is gone and the
# maximum is on another branch, lower by about 0.4 in the signed root.  confint.clm
# interpolates a spline through profile steps on both branches, so its upper end moves
# with the grid (nsteps 8, 16, 32).  The profile itself is computed here by refits with
# the value as an offset, each started from both branches and the estimate; the highest
# maximum is the profile.
# Run from the repository root: Rscript tests/r/profile_soup_branches.R
# Writes tests/data/reference/profile_soup_branches.json (tests/results/test_profile.py).
suppressMessages({library(ordinal); library(jsonlite)})
source("tests/r/json_output.R")
data(soup, package = "ordinal")
call <- "clm(SURENESS ~ COLD + SOUPTYPE, nominal = ~ PROD, scale = ~ PROD, data = soup)"
fit <- eval(parse(text = call))
llf <- as.numeric(logLik(fit))
confint_at <- function(nsteps) {
  pr <- profile(fit, which.beta = "SOUPTYPECanned", alpha = 0.05 / 4, nsteps = nsteps)
  as.numeric(confint(pr)["SOUPTYPECanned", ])
}
grid <- profile(fit, which.beta = "SOUPTYPECanned", nsteps = 32)$SOUPTYPECanned$par.vals
start_near <- function(value) grid[which.min(abs(grid[, "SOUPTYPECanned"] - value)), -12]
starts <- list(below = start_near(-0.0031), above = start_near(0.0076), estimate = coef(fit)[-12])
soup$dry <- as.numeric(soup$SOUPTYPE == "Dry-mix")
soup$canned <- as.numeric(soup$SOUPTYPE == "Canned")
refit <- function(value, start) {
  soup$off <- value * soup$canned
  g <- clm(SURENESS ~ COLD + dry + offset(off), nominal = ~ PROD, scale = ~ PROD,
           data = soup, start = start, control = clm.control(maxIter = 500))
  c(llf = as.numeric(logLik(g)), code = as.numeric(g$convergence$code[1]))
}
values <- c(-0.05, -0.02, -0.0121156215896, -0.005, -0.001, -1e-4, 1e-4, 0.001, 0.01)
profile_rows <- lapply(values, function(v) {
  fits <- suppressWarnings(lapply(starts, function(s) refit(v, s)))
  best <- fits[[which.max(sapply(fits, `[`, "llf"))]]
  list(value = v, signed_root = sign(v - coef(fit)[["SOUPTYPECanned"]]) *
         sqrt(2 * (llf - best[["llf"]])),
       converged = unname(best[["code"]] == 0),
       branches = lapply(fits, function(f) list(llf = f[["llf"]], code = f[["code"]])))
})
write_json(list(
  case = "profile_soup_branches", kind = "table", r_call = call, param = "SOUPTYPECanned",
  logLik = llf,
  confint = confint_at(8), confint_nsteps16 = confint_at(16), confint_nsteps32 = confint_at(32),
  profile = profile_rows,
  notes = paste("profile: the highest of the refits (offset) from the branch below 0, the",
                "branch above 0 and the estimate; converged: clm's code 0 for that refit")
), "tests/data/reference/profile_soup_branches.json")
