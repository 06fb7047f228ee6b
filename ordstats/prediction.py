"""Predicted probabilities of cumulative link models, computed on arrays."""

from __future__ import annotations

import numpy as np

from ordstats._typing import FloatArray
from ordstats.likelihood import interval_probabilities
from ordstats.links import Link

__all__ = ["category_probabilities", "cumulative_probabilities"]


def _standardised_cuts(
    thresholds: FloatArray, location: FloatArray, scale: FloatArray | None
) -> FloatArray:
    """``(theta_j - eta_i) / s_i`` as an ``(n, K - 1)`` array."""
    cuts = np.atleast_2d(thresholds) - np.asarray(location, dtype=float)[:, None]
    if scale is not None:
        cuts = cuts / np.asarray(scale, dtype=float)[:, None]
    return cuts


def cumulative_probabilities(
    link: Link, thresholds: FloatArray, location: FloatArray, scale: FloatArray | None = None
) -> FloatArray:
    """Return ``P(Y <= j) = F((theta_j - eta) / s)`` for ``j = 1, ..., K - 1``.

    Parameters
    ----------
    link : Link
    thresholds : ndarray, shape (K - 1,) or (n, K - 1)
        Cut-points (per row when they vary, as with nominal effects).
    location : ndarray, shape (n,)
        ``x'beta + offset``.
    scale : ndarray, shape (n,), optional
        ``exp(z'zeta)``.

    Returns
    -------
    ndarray, shape (n, K - 1)
    """
    return link.cdf(_standardised_cuts(thresholds, location, scale))


def category_probabilities(
    link: Link, thresholds: FloatArray, location: FloatArray, scale: FloatArray | None = None
) -> FloatArray:
    """Return ``P(Y = j)`` for ``j = 1, ..., K``, accurate in both tails.

    Each probability is ``F(upper) - F(lower)`` computed by
    :func:`ordstats.likelihood.interval_probabilities`, never by subtracting
    rounded cumulative probabilities.

    Parameters
    ----------
    link, thresholds, location, scale
        As in :func:`cumulative_probabilities`.

    Returns
    -------
    ndarray, shape (n, K)
        Rows sum to one.
    """
    cuts = _standardised_cuts(thresholds, location, scale)
    n = cuts.shape[0]
    upper = np.column_stack([cuts, np.full(n, np.inf)])
    lower = np.column_stack([np.full(n, -np.inf), cuts])
    return interval_probabilities(link, upper, lower)
