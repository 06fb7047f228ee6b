"""The numerical core: links, threshold structures, the Newton solver, linear algebra.

Imports numpy and scipy only (plus :mod:`ordstats.errors` and
:mod:`ordstats._typing`); it knows nothing of formulas, pandas or models.
"""
