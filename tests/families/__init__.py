"""Tests of ordstats.families.

The cumulative likelihood (with nominal and scale effects), its banded form, and
the sequential and adjacent-category families.
"""
