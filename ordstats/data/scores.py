r"""Sums of per-row scores over data read in chunks: the meat of sandwich covariances.

The robust (HC0, HC1) and cluster covariances need, besides the Hessian, the
variance of the score, which is a sum over rows (``sum_i w_i s_i s_i'``) or
over clusters of sums over rows (``sum_g S_g S_g'`` with
``S_g = sum_{i in g} w_i s_i``).  One pass over the chunks accumulates
``sum_i w_i s_i s_i'`` and, for clusters, ``S_g`` keyed by the cluster label,
so that a cluster whose rows lie in several chunks (files, partitions) is one
cluster, as in memory.  The covariance itself is formed in
:mod:`ordstats.results.covariance`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.linalg import weighted_gram
from ordstats.data.chunks import ChunkSpec, _clm_data, chunk_arrays
from ordstats.families.cumulative.likelihood import evaluate, prepare

__all__ = ["ScoreSums", "chunk_score_sums"]


@dataclass
class ScoreSums:
    """Score sums of some chunks at one parameter vector.

    Attributes
    ----------
    meat : ndarray, shape (k, k)
        ``sum_i w_i s_i s_i'`` over the rows used.
    n_rows : int
        Rows used.
    clusters : pandas.DataFrame or None
        One row per cluster label: ``S_g = sum_{i in g} w_i s_i`` (None
        without clusters).
    n_missing_labels : int
        Rows used whose cluster label is missing.
    """

    meat: FloatArray
    n_rows: int
    clusters: pd.DataFrame | None = None
    n_missing_labels: int = 0

    def __add__(self, other: ScoreSums | None) -> ScoreSums:
        if other is None:
            return self
        clusters = self.clusters
        if clusters is not None and other.clusters is not None:
            # a cluster whose rows are in both parts is one cluster: add by label
            clusters = pd.concat([clusters, other.clusters]).groupby(level=0, sort=False).sum()
        return ScoreSums(
            self.meat + other.meat,
            self.n_rows + other.n_rows,
            clusters,
            self.n_missing_labels + other.n_missing_labels,
        )

    __radd__ = __add__

    def cluster_meat(self) -> FloatArray:
        """``sum_g S_g S_g'`` over the clusters."""
        assert self.clusters is not None
        sums = self.clusters.to_numpy(dtype=float)
        return np.asarray(sums.T @ sums)

    @property
    def n_groups(self) -> int:
        """Number of clusters (0 without clusters)."""
        return 0 if self.clusters is None else len(self.clusters)


def _labels(frame: pd.DataFrame, column: str, kept: Any) -> pd.Series:
    """Cluster labels of the used rows, as plain objects (1 and 1.0 are one label)."""
    values = frame[column].to_numpy(dtype=object, na_value=None)[kept]
    return pd.Series(values, dtype=object)


def chunk_score_sums(
    frame: pd.DataFrame, spec: ChunkSpec, params: FloatArray, groups: str | None = None
) -> ScoreSums | None:
    """Score sums of one chunk at ``params`` (the pure per-chunk step of a sandwich).

    Parameters
    ----------
    frame : pandas.DataFrame
        One chunk of the raw data; it has the column ``groups`` if given.
    spec : ChunkSpec
    params : ndarray
    groups : str, optional
        The column of cluster labels.

    Returns
    -------
    ScoreSums or None
        None for a chunk without usable rows.
    """
    arrays = chunk_arrays(frame, spec)
    if arrays.y.size == 0:
        return None
    scores = evaluate(prepare(_clm_data(arrays, spec)), params).observation_scores()
    meat = weighted_gram(scores, arrays.weights)
    if groups is None:
        return ScoreSums(meat, int(arrays.y.size))
    labels = _labels(frame, groups, arrays.kept)
    missing = labels.isna().to_numpy()
    weighted = pd.DataFrame(arrays.weights[:, None] * scores)[~missing]
    clusters = weighted.groupby(labels[~missing].to_numpy(), sort=False).sum()
    return ScoreSums(meat, int(arrays.y.size), clusters, int(missing.sum()))
