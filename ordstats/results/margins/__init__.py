"""Predictions, comparisons and slopes of any fit (marginaleffects' verbs).

:mod:`~ordstats.results.margins.protocol` is the contract a results class
implements; :mod:`~ordstats.results.margins.ordinal` implements it for clm-type
fits.
"""
