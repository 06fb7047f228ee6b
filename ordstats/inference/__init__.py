"""Comparisons of several fits: LR tests, anova, Vuong's test, link comparison."""
