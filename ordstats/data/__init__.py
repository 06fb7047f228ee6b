"""How rows arrive: data sources read in chunks, Dask and Spark DataFrames.

- :mod:`~ordstats.data.sources`: files, globs, Arrow datasets and DataFrames in chunks;
- :mod:`~ordstats.data.distributed`: Dask DataFrames, one task per partition;
- :mod:`~ordstats.data.spark`: Spark DataFrames, one Spark job per pass;
- :mod:`~ordstats.data.chunks`: the per-chunk sums a Newton pass adds up.
"""
