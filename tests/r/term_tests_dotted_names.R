# nominal_test() and scale_test() of models whose terms name dotted columns (airquality's
# Solar.R), and a scale_test() row R leaves NA at its default iteration limits (the
# refit reaches its maximum with more step halvings), for tests/test_formula_r_habits.py.
#
# Writes tests/data/r_datasets/airquality.{csv,levels.json} (Ozone cut into an ordered
# factor oz; rows with NA kept: clm drops them by na.omit), womenlf.{csv,levels.json}
# (carData::Womenlf, partic ordered) and tests/data/reference/term_tests_dotted_names.json.
#
# Run from the repository root:  Rscript tests/r/term_tests_dotted_names.R
suppressMessages({library(ordinal); library(jsonlite)})
data_dir <- "tests/data/r_datasets"
source("tests/r/write_dataset.R")
aq <- datasets::airquality
aq$oz <- cut(aq$Ozone, c(0, 20, 40, 80, 200), ordered_result = TRUE)
aq$Month <- factor(aq$Month)
write_dataset(aq, "airquality", "datasets::airquality", "New York air quality, May to September 1973",
  "oz = cut(Ozone, c(0, 20, 40, 80, 200)), ordered; Month a factor", "oz", dir = data_dir)
wl <- carData::Womenlf
wl$partic <- factor(wl$partic, levels = c("not.work", "parttime", "fulltime"), ordered = TRUE)
write_dataset(wl, "womenlf", "carData::Womenlf", "Canadian women's labour-force participation, 1977",
  "partic ordered not.work < parttime < fulltime", "partic", dir = data_dir)
aq <- read_dataset("airquality"); wl <- read_dataset("womenlf")
table_of <- function(t) list(terms = rownames(t)[-1], Df = t$Df[-1], LRT = t$LRT[-1])
fit <- clm(oz ~ Temp + Wind + Solar.R, data = aq)
scaled <- clm(oz ~ Temp + Solar.R, scale = ~ Solar.R, data = aq)
inter <- clm(partic ~ log(hincome) * children, data = wl)
# scale_test's refit for the interaction, at R's default control and with more halvings
relaxed <- function(control) clm(partic ~ log(hincome) * children, scale = ~ log(hincome):children,
                                 data = wl, control = control)
out <- list(
  airquality = list(formula = "oz ~ Temp + Wind + Solar.R", nominal_test = table_of(nominal_test(fit)),
                    scale_test = table_of(scale_test(fit))),
  airquality_scaled = list(formula = "oz ~ Temp + Solar.R", scale = "~ Solar.R",
                           nominal_test = table_of(nominal_test(scaled))),
  womenlf = list(formula = "partic ~ log(hincome) * children", scale_test = table_of(scale_test(inter)),
                 relaxed_default_code = relaxed(clm.control())$convergence$code,
                 relaxed_logLik = as.numeric(logLik(relaxed(clm.control(maxIter = 1000, maxModIter = 20)))),
                 logLik = as.numeric(logLik(inter))))
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, na = "null", pretty = TRUE),
           "tests/data/reference/term_tests_dotted_names.json")
