"""Tests of ordstats.inference: likelihood-ratio tests and model comparison, for every family."""
