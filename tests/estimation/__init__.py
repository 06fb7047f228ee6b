"""Tests of ordstats.estimation and ordstats.data: chunked and Dask fits equal the in-memory fit."""
