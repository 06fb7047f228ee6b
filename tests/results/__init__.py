"""Tests of ordstats.results.

Tables, covariances, predictions, goodness of fit, profiles and term tests.
"""
