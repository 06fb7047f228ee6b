"""How rows arrive: data sources read in chunks and Dask DataFrames.

- :mod:`~ordstats.data.sources`: files, globs, Arrow datasets and DataFrames in chunks;
- :mod:`~ordstats.data.distributed`: Dask DataFrames, one task per partition;
- :mod:`~ordstats.data.chunks`: the per-chunk sums a Newton pass adds up.
"""
