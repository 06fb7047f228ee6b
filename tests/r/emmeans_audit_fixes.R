# emmeans tables whose layout an audit found different in ordstats: joint_tests' row order
# under sum coding, a contrast of contrasts by the earlier contrast, regrid() of log scales.
#
# Run from the repository root (R with ordinal, emmeans, jsonlite):
#   Rscript tests/r/emmeans_audit_fixes.R
# Reads ordstats/datasets/housing.csv and wine.csv; writes
# tests/data/reference/emmeans_audit_fixes.json for tests/results/test_emmeans_layout.py.
suppressMessages({library(ordinal); library(emmeans); library(jsonlite)})
source("tests/r/json_output.R")  # write_json()
housing <- read.csv("ordstats/datasets/housing.csv")
housing$Sat <- factor(housing$Sat, levels = c("Low", "Medium", "High"), ordered = TRUE)
housing$Infl <- factor(housing$Infl, levels = c("Low", "Medium", "High"))
housing$Type <- factor(housing$Type, levels = c("Tower", "Apartment", "Atrium", "Terrace"))
housing$Cont <- factor(housing$Cont, levels = c("Low", "High"))
wine <- read.csv("ordstats/datasets/wine.csv")
wine$rating <- factor(wine$rating, levels = 1:5, ordered = TRUE)

summed <- clm(Sat ~ Infl * Type + Cont, weights = Freq, data = housing,
              contrasts = list(Type = "contr.sum", Infl = "contr.sum"))
jt <- as.data.frame(joint_tests(summed))

hw <- clm(Sat ~ Infl * Type, weights = Freq, data = housing)
cc <- as.data.frame(summary(contrast(pairs(emmeans(hw, ~ Type | Infl), adjust = "none"),
                                     "consec", by = "contrast", adjust = "none")))

scaled <- clm(rating ~ temp, scale = ~ contact, data = wine)
rg <- as.data.frame(summary(regrid(emmeans(scaled, ~ contact, mode = "scale"))))

write_json(list(
  joint_tests = list(call = "joint_tests(clm(Sat ~ Infl * Type + Cont, weights = Freq, contrasts = list(Type = 'contr.sum', Infl = 'contr.sum')))",
                     term = as.character(jt[["model term"]]), F.ratio = jt$F.ratio),
  contrast_of_contrasts = list(
    call = "contrast(pairs(emmeans(clm(Sat ~ Infl * Type, weights = Freq), ~ Type | Infl), adjust = 'none'), 'consec', by = 'contrast', adjust = 'none')",
    columns = names(cc), contrast1 = as.character(cc$contrast1),
    contrast = as.character(cc$contrast), estimate = cc$estimate, SE = cc$SE),
  regrid_scale = list(call = "regrid(emmeans(clm(rating ~ temp, scale = ~ contact), ~ contact, mode = 'scale'))",
                      columns = names(rg), emmean = rg$emmean, SE = rg$SE)
), "tests/data/reference/emmeans_audit_fixes.json")
