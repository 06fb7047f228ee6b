# survival::lung as a right-censored response (status 2 = death): its rows for
# tests/r/censored_direct_ml.R (age, sex; lower = time, upper = time for a death,
# +inf for a censored time) and Kaplan-Meier's curve, survfit(Surv(time, status) ~ 1):
# time, surv, std.err (of -log S, Greenwood), and its mean restricted to the largest time.  Then, from the repository root,
#   Rscript tests/r/censored_lung.R
#   for l in logit cloglog; do
#     Rscript tests/r/censored_direct_ml.R tests/data/reference/censored/lung_${l}_spec.json
#   done
suppressMessages({library(survival); library(jsonlite)})
out_dir <- "tests/data/reference/censored"
d <- lung[, c("time", "status", "age", "sex")]
death <- d$status == 2
write.csv(data.frame(age = d$age, sex = d$sex, lower = d$time,
                     upper = ifelse(death, d$time, 0), lower_inf = 0,
                     upper_inf = as.integer(!death)),
          file.path(out_dir, "lung.csv"), row.names = FALSE)
write.csv(data.frame(age = c(40, 63, 82), sex = c(1, 2, 1), lower = 0, upper = 0),
          file.path(out_dir, "lung_new.csv"), row.names = FALSE)
for (link in c("logit", "cloglog")) {
  writeLines(toJSON(list(
    data = file.path(out_dir, "lung.csv"), newdata = file.path(out_dir, "lung_new.csv"),
    rhs = "~ age + sex", factors = "sex", link = link,
    times = c(5, 180, 365.5, 800, 1100), hessian = "richardson",
    out = file.path(out_dir, sprintf("lung_%s.json", link))
  ), auto_unbox = TRUE, pretty = TRUE), file.path(out_dir, sprintf("lung_%s_spec.json", link)))
}
km <- survfit(Surv(time, status) ~ 1, data = d)
# the mean restricted to the largest time (1022, censored), as print(km, rmean = 1022)
restricted <- summary(km, rmean = max(d$time))$table
writeLines(toJSON(list(r_call = "survfit(Surv(time, status) ~ 1, data = survival::lung)",
                       time = km$time, surv = km$surv, std_err = km$std.err,
                       rmean_call = "summary(km, rmean = 1022)$table",
                       rmean = unname(restricted["rmean"]),
                       rmean_se = unname(restricted["se(rmean)"])),
                  digits = NA), file.path(out_dir, "lung_kaplan_meier.json"))
