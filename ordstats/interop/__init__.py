"""Bridges from ordstats fits to other Python packages (each optional, imported on use).

:mod:`ordstats.interop.marginaleffects` wraps a fit for pymarginaleffects
(``pip install ordstats[marginaleffects]``).
"""
