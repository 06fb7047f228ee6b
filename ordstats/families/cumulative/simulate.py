r"""Simulated ratings with a planted low-rank structure and per-row scale use.

Draws ratings from equation (1) of :mod:`ordstats.families.cumulative.blocks`:
``p_u, q_v ~ N(0, I)``, biases ``N(0, 0.5^2)``, and per-row thresholds
``theta_u = theta + delta_u`` (a row-specific shift and stretch of the
global thresholds, ``scale_use`` their spread) so people use the scale
differently.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link, fixed_shape_link
from ordstats.errors import SpecificationError, is_real_number

__all__ = ["SimulatedRatings", "simulate_ratings"]


@dataclass(frozen=True)
class SimulatedRatings:
    """Simulated ratings and the truth that generated them.

    Attributes
    ----------
    row, col, y : ndarray of int, shape (n,)
        Observed entries; ``y`` in ``0..K-1``.
    row_factors, col_factors : ndarray
    row_bias, col_bias : ndarray
    thresholds : ndarray, shape (n_rows, K - 1)
    """

    row: IntArray
    col: IntArray
    y: IntArray
    row_factors: FloatArray
    col_factors: FloatArray
    row_bias: FloatArray
    col_bias: FloatArray
    thresholds: FloatArray

    def true_proba(self, row: IntArray, col: IntArray, link: str | Link = "logit") -> FloatArray:
        """``P(r = j)`` under the truth for pairs ``(row, col)``, shape (n, K)."""
        row = _positions(row, "row", self.row_bias.size)
        col = _positions(col, "col", self.col_bias.size)
        if row.shape != col.shape:
            raise SpecificationError(
                f"row and col must pair one to one; got {row.size} rows and {col.size} columns"
            )
        link = _simulation_link(link)
        eta = (
            self.row_bias[row]
            + self.col_bias[col]
            + np.einsum("ij,ij->i", self.row_factors[row], self.col_factors[col])
        )
        cum = link.cdf(self.thresholds[row] - eta[:, None])
        cum = np.column_stack([np.zeros(len(eta)), cum, np.ones(len(eta))])
        return np.diff(cum, axis=1)


def _positions(values: object, name: str, size: int) -> IntArray:
    """Whole-number positions in ``0..size-1``, or a clear error."""
    array = np.atleast_1d(np.asarray(values))
    if (
        array.ndim != 1
        or array.dtype.kind not in "iu"
        or (array.size and (array.min() < 0 or array.max() >= size))
    ):
        raise SpecificationError(
            f"{name} must be whole-number positions from 0 to {size - 1}; got {values!r:.60}"
        )
    return array.astype(np.intp, copy=False)


def _simulation_link(link: str | Link) -> Link:
    """The link, refusing the flexible families (the fits of these data cannot use them)."""
    return fixed_shape_link(
        link,
        "ordinal matrix factorisation does not estimate, so ratings simulated with it "
        "could not be fitted back",
    )


#: Most rated cells :func:`simulate_ratings` draws (about 3 GB of arrays).
MAX_SIMULATED_CELLS = 100_000_000


def _check_simulation(
    n_rows: object,
    n_cols: object,
    rank: object,
    n_levels: object,
    density: object,
    scale_use: object,
    factor_sd: object,
    seed: object,
) -> None:
    """Refuse sizes, shares and spreads :func:`simulate_ratings` cannot use, saying why."""

    def whole(name: str, value: object, least: int) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise SpecificationError(f"{name} must be a whole number >= {least}; got {value!r}")

    whole("n_rows", n_rows, 1)
    whole("n_cols", n_cols, 1)
    whole("rank", rank, 1)
    whole("n_levels", n_levels, 2)
    if seed is not None:
        whole("seed", seed, 0)
    if not is_real_number(density) or not 0.0 < float(density) <= 1.0:
        raise SpecificationError(f"density is a share of the cells, in (0, 1]; got {density!r}")
    rows, cols = int(n_rows), int(n_cols)  # type: ignore[call-overload]  # checked above
    cells = max(float(density) * rows * cols, float(rows + cols))
    if cells > MAX_SIMULATED_CELLS:
        raise SpecificationError(
            f"{n_rows} x {n_cols} at density {density} is about {cells:.3g} rated cells; "
            f"simulate at most {MAX_SIMULATED_CELLS:,} (fewer rows or columns, or a lower "
            "density)"
        )
    for name, value in (("scale_use", scale_use), ("factor_sd", factor_sd)):
        if not is_real_number(value) or not (np.isfinite(float(value)) and float(value) >= 0):
            raise SpecificationError(f"{name} must be a finite number >= 0; got {value!r}")


def simulate_ratings(
    n_rows: int,
    n_cols: int,
    *,
    rank: int = 2,
    n_levels: int = 5,
    density: float = 0.1,
    scale_use: float = 0.0,
    factor_sd: float = 1.0,
    link: str | Link = "logit",
    seed: int | None = 0,
) -> SimulatedRatings:
    """Simulate a sparse ratings matrix from the ordinal factorisation model.

    Parameters
    ----------
    n_rows, n_cols : int
    rank : int
    n_levels : int
    density : float
        Fraction of (row, column) pairs observed (each row gets at least one).
    scale_use : float
        Spread of per-row threshold shifts and log-stretches (0: global thresholds).
    factor_sd : float
        Standard deviation of the factors' entries.
    link : str or Link
    seed : int or None
        None: a fresh random draw each call.

    Returns
    -------
    SimulatedRatings

    Raises
    ------
    SpecificationError
        Sizes below 1 (``n_levels`` below 2), a density outside ``(0, 1]``,
        negative spreads, or a seed that is not a whole number.
    """
    _check_simulation(n_rows, n_cols, rank, n_levels, density, scale_use, factor_sd, seed)
    rng = np.random.default_rng(seed)
    link = _simulation_link(link)
    p = factor_sd * rng.standard_normal((n_rows, rank))
    q = factor_sd * rng.standard_normal((n_cols, rank))
    b_r = 0.5 * rng.standard_normal(n_rows)
    b_c = 0.5 * rng.standard_normal(n_cols)
    base = np.linspace(-2.0, 2.0, n_levels - 1)
    shift = scale_use * rng.standard_normal(n_rows)
    stretch = np.exp(scale_use * 0.5 * rng.standard_normal(n_rows))
    theta = shift[:, None] + stretch[:, None] * base[None, :]
    n_obs = max(round(density * n_rows * n_cols), n_rows)
    flat = rng.choice(n_rows * n_cols, size=n_obs, replace=False)
    row, col = np.divmod(flat, n_cols)
    # every row and column at least once
    row = np.concatenate([row, np.arange(n_rows), rng.integers(0, n_rows, n_cols)])
    col = np.concatenate([col, rng.integers(0, n_cols, n_rows), np.arange(n_cols)])
    pairs = np.unique(row * n_cols + col)
    row, col = np.divmod(pairs, n_cols)
    truth = SimulatedRatings(row, col, np.empty(0, dtype=np.intp), p, q, b_r, b_c, theta)
    prob = truth.true_proba(row, col, link)
    u = rng.random(len(row))
    y = (np.cumsum(prob, axis=1) < u[:, None]).sum(axis=1).clip(0, n_levels - 1)
    return SimulatedRatings(row, col, y.astype(np.intp), p, q, b_r, b_c, theta)
