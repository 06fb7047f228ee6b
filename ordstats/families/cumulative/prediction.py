"""Predicted probabilities of cumulative link models, computed on arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.families.cumulative.likelihood import interval_probabilities
from ordstats.families.problem import CLMData, ParamLayout

__all__ = [
    "RowPositions",
    "category_probabilities",
    "crossing_positions",
    "crossing_rows",
    "cumulative_probabilities",
    "cut_points_and_scale",
    "level_cut_positions",
    "level_intervals",
    "standardised_cuts",
    "threshold_gradient",
    "threshold_matrix",
]


def standardised_cuts(
    thresholds: FloatArray, location: FloatArray, scale: FloatArray | None
) -> FloatArray:
    """``(theta_j - eta_i) / s_i`` as an ``(n, K - 1)`` array (thresholds of one row or each)."""
    cuts = np.atleast_2d(thresholds) - np.asarray(location, dtype=float)[:, None]
    if scale is not None:
        cuts = cuts / np.asarray(scale, dtype=float)[:, None]
    return cuts


def level_cut_positions(codes: IntArray, n_cuts: int) -> IntArray:
    """The columns of each row's cut-points above and below its level, ``(y + 1, y)``.

    Positions among the ``n_cuts`` cut-points padded with ``-inf`` before and
    ``+inf`` after (a missing level, code -1, points at the first two).
    """
    level = np.clip(codes, 0, n_cuts)
    return np.column_stack([level + 1, level])


def level_intervals(cuts: FloatArray, codes: IntArray) -> FloatArray:
    """Each row's cut-points ``(u_y, u_{y-1})`` around its level ``y`` (``+-inf`` at the ends).

    Parameters
    ----------
    cuts : ndarray, shape (n, K - 1)
        Cut-points of each row (e.g. :func:`standardised_cuts`).
    codes : ndarray of int, shape (n,)
        Each row's level ``0, ..., K - 1`` (-1: missing, giving NaN).

    Returns
    -------
    ndarray, shape (n, 2)
        The upper end, then the lower end of the latent interval of the level.
    """
    n, n_cuts = cuts.shape
    padded = np.column_stack([np.full(n, -np.inf), cuts, np.full(n, np.inf)])
    picked = padded[np.arange(n)[:, None], level_cut_positions(codes, n_cuts)]
    return np.where(codes[:, None] >= 0, picked, np.nan)


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
    return link.cdf(standardised_cuts(thresholds, location, scale))


def category_probabilities(
    link: Link, thresholds: FloatArray, location: FloatArray, scale: FloatArray | None = None
) -> FloatArray:
    """Return ``P(Y = j)`` for ``j = 1, ..., K``, accurate in both tails.

    Each probability is ``F(upper) - F(lower)`` computed by
    :func:`ordstats.families.cumulative.likelihood.interval_probabilities`, never by subtracting
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
    cuts = standardised_cuts(thresholds, location, scale)
    n = cuts.shape[0]
    upper = np.column_stack([cuts, np.full(n, np.inf)])
    lower = np.column_stack([np.full(n, -np.inf), cuts])
    return interval_probabilities(link, upper, lower)


def threshold_matrix(
    threshold_params: FloatArray,
    jacobian: FloatArray,
    nominal: FloatArray | None = None,
    offset: FloatArray | None = None,
) -> FloatArray:
    """Cut-points ``theta_j(w) = [1, w] A J' + c`` per row of the nominal design.

    Parameters
    ----------
    threshold_params : ndarray, shape ((1 + r) * q,)
        Free threshold parameters ``a_0`` followed by the nominal blocks ``a_t``.
    jacobian : ndarray, shape (K - 1, q)
        Threshold Jacobian ``J``.
    nominal : ndarray, shape (n, r), optional
        Nominal design; without it the result has one row.
    offset : ndarray, shape (K - 1,), optional
        Fixed cut-points ``c`` (``threshold=[...]``).

    Returns
    -------
    ndarray, shape (n, K - 1)
    """
    q = jacobian.shape[1]
    blocks = np.asarray(threshold_params, dtype=float).reshape(-1, q)
    rows = (
        np.ones((1, 1))
        if nominal is None
        else np.column_stack([np.ones(nominal.shape[0]), nominal])
    )
    theta = rows @ blocks[: rows.shape[1]] @ jacobian.T
    return theta if offset is None else theta + offset


def cut_points_and_scale(
    params: FloatArray,
    layout: ParamLayout,
    jacobian: FloatArray,
    nominal: FloatArray,
    scale_design: FloatArray,
    offset: FloatArray | None = None,
    scale_offset: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray | None]:
    """A cumulative model's cut-points ``theta(w)`` and scale ``exp(z'zeta)`` at ``params``.

    Parameters
    ----------
    params : ndarray
        The model's parameters (``layout`` says where each block sits).
    layout : ParamLayout
    jacobian : ndarray, shape (K - 1, q)
        Threshold Jacobian ``J``.
    nominal, scale_design : ndarray, shape (n, r) and (n, s)
        Nominal and scale designs of the rows (read only when the model has such effects).
    offset : ndarray, shape (K - 1,), optional
        Fixed cut-points (``threshold=[...]``).
    scale_offset : ndarray, shape (n,), optional
        Known part of each row's log scale (R's ``offset()`` of the scale formula).

    Returns
    -------
    theta : ndarray, shape (n, K - 1), or (1, K - 1) without nominal effects
    scale : ndarray, shape (n,), or None without scale effects
    """
    theta = threshold_matrix(
        params[layout.thresholds],
        jacobian,
        nominal if layout.n_nominal_cols else None,
        offset,
    )
    if not layout.n_zeta and scale_offset is None:
        return theta, None
    log_scale = scale_design[:, : layout.n_zeta] @ params[layout.zeta]
    return theta, np.exp(log_scale if scale_offset is None else log_scale + scale_offset)


def threshold_gradient(jacobian: FloatArray, nominal_row: FloatArray) -> FloatArray:
    """``d theta(w) / d (a_0, a_1, ...)`` for one nominal row, shape ``(K - 1, (1+r) q)``."""
    return np.kron(np.concatenate([[1.0], nominal_row])[None, :], jacobian)


def crossing_rows(thresholds: FloatArray) -> np.ndarray:
    """Rows whose cut-points are not strictly increasing (negative probabilities)."""
    return np.flatnonzero(np.any(np.diff(np.atleast_2d(thresholds), axis=1) <= 0, axis=1))


@dataclass(frozen=True)
class RowPositions:
    """Positions of some rows among ``n_rows`` rows; adds up over chunks read in order.

    Attributes
    ----------
    n_rows : int
    positions : tuple of int
    """

    n_rows: int
    positions: tuple[int, ...]

    def __add__(self, other: RowPositions) -> RowPositions:
        shifted = tuple(p + self.n_rows for p in other.positions)
        return RowPositions(self.n_rows + other.n_rows, self.positions + shifted)


def crossing_positions(
    data: CLMData, threshold_params: FloatArray, jacobian: FloatArray
) -> RowPositions:
    """Rows of ``data`` whose cut-points cross (for chunks: the one-chunk step of a pass).

    Parameters
    ----------
    data : CLMData
        Its nominal design gives the cut-points of each row.
    threshold_params : ndarray
        Free threshold parameters and nominal effects.
    jacobian : ndarray
        Threshold Jacobian.

    Returns
    -------
    RowPositions
    """
    theta = threshold_matrix(threshold_params, jacobian, data.nominal)
    return RowPositions(data.n_obs, tuple(int(i) for i in crossing_rows(theta)))
