"""Tests of ordstats.core: link distributions and the Newton solver."""
