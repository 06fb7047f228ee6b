# svyolr on raked and non-linearly calibrated designs: R's rake() (iterative post-
# stratification over several margins; the linearisation residualises the influence
# functions on the last sweep's margins, ten times round, as svyrecvar's "raking") and
# calibrate(calfun = "raking" / "logit" / "linear" with bounds) (grake's Newton
# iterations; the linearisation as linear calibration's), on linearisation designs and on a
# jackknife design (each replicate raked or calibrated).
#
# Run from the repository root (R 4.2, survey 4.1-1, MASS, jsonlite), after
# tests/r/survey_refs.R (which writes the api csv files):
#   Rscript tests/r/survey_rake_refs.R
# Writes tests/data/survey/rake_refs.json, one entry per case:
#   design     the design call (on read_complete_api's rows; rows: their `row` ids; size:
#              enroll cut at 400 and 800); domain: the subset taken after adjusting
#   rake       list(margins = variable names, population = list of data frames), maxit,
#              epsilon (rake's control); or calibration: calibrate's formula, population
#              (totals named as R's model matrix: stypeH, stypeM are the 0/1 columns of
#              stype), calfun, bounds (null: none), epsilon, trim (null: none),
#              bounds_const (bounds of the weights rather than of their ratios)
#   weights    the adjusted sampling weights; formula, names, coef, var (svyolr, precise
#              optim Hessian; replicate cases: converged_replicates), degf, total_var
#              vcov(svytotal(~api00 + meals)) (linearisation cases);
#   repweights, post_repweights, scale, rscales (replicate cases): before and after
suppressMessages({library(survey); library(jsonlite)})
source("tests/r/survey_common.R")
data(api)
apistrat <- read_complete_api("apistrat"); apiclus1 <- read_complete_api("apiclus1")
# school size, a made-up second margin (apipop's yr.rnd is mostly missing), as in
# survey_poststratify_refs.R; both margins count apipop's schools with an enrolment
size <- function(enroll) cut(enroll, c(0, 400, 800, Inf), labels = c("small", "mid", "large"))
apistrat$size <- size(apistrat$enroll); apiclus1$size <- size(apiclus1$enroll)
known <- apipop[!is.na(apipop$enroll), ]
margin_pop <- list(stype = as.data.frame(table(stype = known$stype)),
                   size = as.data.frame(table(size = size(known$enroll))))
totals <- c(`(Intercept)` = nrow(apipop), stypeH = sum(apipop$stype == "H"),
            stypeM = sum(apipop$stype == "M"), enroll = sum(apipop$enroll, na.rm = TRUE))
clus1 <- "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)"
strat <- "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)"
jk1 <- paste0("as.svrepdesign(", clus1, ", type = 'JK1', compress = FALSE)")
rake_case <- function(design, maxit = 10, epsilon = 1)
  list(design = design, rake = list(margins = c("stype", "size")), maxit = maxit,
       epsilon = epsilon)
cal_case <- function(design, calfun, bounds = NULL, epsilon = 1e-7, trim = NULL,
                     bounds_const = FALSE)
  list(design = design, calfun = calfun, bounds = bounds, epsilon = epsilon, trim = trim,
       bounds_const = bounds_const)
cases <- list(
  clus1_rake = rake_case(clus1), clus1_rake_tight = rake_case(clus1, 50, 1e-12),
  strat_rake = rake_case(strat, 50, 1e-12),
  clus1_rake_domain = c(rake_case(clus1), domain = "yr.rnd == 'No'"),
  clus1_raking_domain = c(cal_case(clus1, "raking"), domain = "yr.rnd == 'No'"),
  clus1_raking = cal_case(clus1, "raking"),
  clus1_raking_tight = cal_case(clus1, "raking", epsilon = 1e-13),
  strat_raking = cal_case(strat, "raking", epsilon = 1e-13),
  clus1_logit = cal_case(clus1, "logit", c(0.5, 1.8), epsilon = 1e-13),
  clus1_raking_bounded = cal_case(clus1, "raking", c(0.5, 1.8), epsilon = 1e-13),
  clus1_linear_bounded = cal_case(clus1, "linear", c(0.6, 1.6), epsilon = 1e-13),
  jk1_rake = rake_case(jk1, 50, 1e-12),
  jk1_raking = cal_case(jk1, "raking", epsilon = 1e-13),
  jk1_logit = cal_case(jk1, "logit", c(0.2, 5), epsilon = 1e-13),
  # R ignores trim= in unbounded linear calibration (regcalibrate); bounds this wide take
  # grake's path, whose ratios are the same, and trim them
  clus1_linear_trim = cal_case(clus1, "linear", c(-1e10, 1e10), 1e-13, trim = c(0.8, 1.2)),
  clus1_raking_trim = cal_case(clus1, "raking", epsilon = 1e-13, trim = c(0.85, 1.1)),
  jk1_linear_trim = cal_case(jk1, "linear", c(-1e10, 1e10), 1e-13, trim = c(0.8, 1.2)),
  # bounds on the weights themselves (apistrat's weights are 15.1, 20.36 and 44.21)
  strat_linear_const = cal_case(strat, "linear", c(12, 50), 1e-13, bounds_const = TRUE),
  strat_logit_const = cal_case(strat, "logit", c(12, 50), 1e-13, bounds_const = TRUE)
)
matrix_of <- function(w) { w <- as.matrix(w); unname(matrix(as.numeric(w), nrow = nrow(w))) }
f <- mealcat ~ avg.ed + mobility
refs <- list()
for (name in names(cases)) {
  case <- cases[[name]]
  des0 <- eval(parse(text = case$design))
  rep <- inherits(des0, "svyrep.design")
  if (!is.null(case$rake)) {
    pops <- unname(margin_pop[case$rake$margins])
    des <- rake(des0, list(~stype, ~size), pops,
                control = list(maxit = case$maxit, epsilon = case$epsilon))
    case$rake$population <- pops
  } else {
    bounds <- if (is.null(case$bounds)) c(-Inf, Inf) else case$bounds
    # a svyrep.design needs compress = FALSE: its default NA fails in survey 4.1-1
    extra <- if (rep) list(compress = FALSE) else list()
    des <- do.call(calibrate, c(list(des0, ~stype + enroll, totals, calfun = case$calfun,
                                     bounds = bounds, epsilon = case$epsilon,
                                     trim = case$trim, bounds.const = case$bounds_const),
                                extra))
    case$calibration <- "~stype + enroll"
    case$population <- as.list(totals)
  }
  if (!is.null(case$domain)) des <- eval(parse(text = paste0("subset(des, ", case$domain, ")")))
  out <- c(case, list(rows = des$variables$row, formula = deparse(f), degf = degf(des),
                      weights = unname(weights(des, "sampling"))))
  if (rep) {
    conv <- converged_replicates(f, des)
    out <- c(out, list(type = des$type, scale = des$scale, rscales = des$rscales,
                       repweights = matrix_of(weights(des0, "analysis")),
                       post_repweights = matrix_of(weights(des, "analysis")),
                       coef = conv$coef, var = conv$var))
  } else {
    fit <- svyolr(f, des, control = precise(5))
    out <- c(out, list(coef = unname(c(fit$coefficients, fit$zeta)), var = unname(vcov(fit)),
                       total_var = unname(vcov(svytotal(~api00 + meals, des)))))
  }
  refs[[name]] <- out
}
writeLines(toJSON(refs, digits = NA, auto_unbox = TRUE, null = "null"),
           file.path(survey_out, "rake_refs.json"))
