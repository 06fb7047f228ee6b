r"""One side of an ordinal factorisation, split into parts that are stepped independently.

In a sweep of :mod:`ordstats.estimation.factorization` every row (or column)
is a block of equation (2) of :mod:`ordstats.families.cumulative.blocks`, and
blocks do not interact.  A side is therefore cut into parts (sets of whole
blocks with about equal numbers of ratings), and each part is stepped by the
pure functions here, given only its own coefficients, the other side's
coefficient table and the thresholds: in this process, in threads, or on Dask
workers that hold the parts from the start of the fit.  The results do not
depend on the cut, except for the order of floating-point sums.

The global thresholds are shared by all blocks; their Newton step adds the
parts' threshold gradients, Hessians and log-likelihoods
(:func:`part_threshold_terms`) and checks trial thresholds with
:func:`part_nll`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.families.cumulative.blocks import (
    BlockData,
    BlockLayout,
    BlockStep,
    block_gradient_hessian,
    block_layout,
    block_newton_step,
    linear_predictor,
    per_block_nll,
)

__all__ = [
    "SidePart",
    "part_nll",
    "part_step",
    "part_threshold_terms",
    "split_side",
]


@dataclass(frozen=True, eq=False)
class SidePart:
    """The ratings of some whole blocks of one side (fixed for the whole fit).

    Attributes
    ----------
    ids : ndarray of int, shape (b,)
        The blocks' ids on their side (ascending).
    y : ndarray of int, shape (n,)
        Ratings as levels ``0 .. K-1``.
    weights : ndarray, shape (n,)
    block : ndarray of int, shape (n,)
        Each rating's block as a position in ``ids``.
    other : ndarray of int, shape (n,)
        Each rating's block on the other side (a row of the other side's
        coefficient table).
    threshold_index : ndarray of int, shape (n,)
        Row of the threshold table each rating uses: a position in ``ids`` when
        the side owns the thresholds (the table passed is then the part's own
        rows), else a row of the full table.
    n_levels : int
    own_bias, other_bias : bool
        Whether the side's and the other side's coefficients start with a bias.
    layout : BlockLayout
        :func:`~ordstats.families.cumulative.blocks.block_layout` of ``block``.
    """

    ids: IntArray
    y: IntArray
    weights: FloatArray
    block: IntArray
    other: IntArray
    threshold_index: IntArray
    n_levels: int
    own_bias: bool
    other_bias: bool
    layout: BlockLayout

    @property
    def n_ratings(self) -> int:
        """Number of ratings in the part."""
        return len(self.y)


def split_side(
    block: IntArray,
    other: IntArray,
    y: IntArray,
    weights: FloatArray,
    threshold_index: IntArray,
    n_blocks: int,
    n_levels: int,
    *,
    own_bias: bool,
    other_bias: bool,
    owns_thresholds: bool,
    n_parts: int = 1,
) -> list[SidePart]:
    """Cut one side's ratings into ``n_parts`` parts of whole blocks.

    Parameters
    ----------
    block, other : ndarray of int, shape (n,)
        Each rating's block on this side and on the other side.
    y : ndarray of int, shape (n,)
    weights : ndarray, shape (n,)
    threshold_index : ndarray of int, shape (n,)
        Row of the full threshold table each rating uses.
    n_blocks : int
    n_levels : int
    own_bias, other_bias : bool
    owns_thresholds : bool
        The side owns the thresholds (``threshold_index == block``).
    n_parts : int
        Parts wanted (fewer if there are fewer blocks); blocks are assigned in
        order so that parts hold about equal numbers of ratings.

    Returns
    -------
    list of SidePart
    """
    block = np.asarray(block, dtype=np.intp)
    counts = np.bincount(block, minlength=n_blocks)
    n_parts = max(1, min(int(n_parts), n_blocks))
    # part of each block: cut the cumulative rating count into equal shares
    share = np.cumsum(counts) - counts
    part_of_block = np.minimum((share * n_parts) // max(int(counts.sum()), 1), n_parts - 1)
    part_of_rating = part_of_block[block]
    order = np.argsort(part_of_rating, kind="stable")
    bounds = np.searchsorted(part_of_rating[order], np.arange(n_parts + 1))
    parts = []
    for k in range(n_parts):
        ids = np.flatnonzero(part_of_block == k)
        if ids.size == 0:
            continue
        rows = order[bounds[k] : bounds[k + 1]]
        local = np.searchsorted(ids, block[rows])
        tidx = local if owns_thresholds else np.asarray(threshold_index)[rows]
        parts.append(
            SidePart(
                ids=ids,
                y=np.asarray(y)[rows],
                weights=np.asarray(weights, dtype=float)[rows],
                block=local,
                other=np.asarray(other, dtype=np.intp)[rows],
                threshold_index=tidx,
                n_levels=n_levels,
                own_bias=own_bias,
                other_bias=other_bias,
                layout=block_layout(local, ids.size),
            )
        )
    return parts


def part_data(part: SidePart, other_coef: FloatArray) -> BlockData:
    """Equation (2)'s data for the part: covariates ``(1, q_v)`` and offsets ``b_v``.

    Parameters
    ----------
    part : SidePart
    other_coef : ndarray, shape (n_other, d_other)
        The other side's coefficients (bias first when it has one).

    Returns
    -------
    BlockData
    """
    gathered = np.asarray(other_coef, dtype=float)[part.other]
    n = part.n_ratings
    if part.other_bias:
        offset = gathered[:, 0].copy()
        if part.own_bias:  # covariates (1, q_v): the bias column becomes the ones
            gathered[:, 0] = 1.0
            cov = gathered
        else:
            cov = gathered[:, 1:]
    else:
        offset = np.zeros(n)
        cov = np.column_stack([np.ones(n), gathered]) if part.own_bias else gathered
    return BlockData(
        part.y,
        part.weights,
        part.block,
        part.ids.size,
        cov,
        offset,
        part.threshold_index,
        part.n_levels,
        part.layout,
    )


def part_step(
    part: SidePart,
    link: Link,
    own_coef: FloatArray,
    other_coef: FloatArray,
    thresholds: FloatArray,
    penalty: FloatArray,
    owns_thresholds: bool,
    threshold_penalty: float,
    threshold_center: FloatArray | None,
    max_halvings: int = 30,
) -> BlockStep:
    """One Newton step of every block in the part (:func:`block_newton_step`).

    Parameters
    ----------
    part : SidePart
    link : Link
    own_coef : ndarray, shape (b, d)
        The part's blocks' coefficients (rows ``part.ids`` of the side's table).
    other_coef : ndarray
        The other side's full coefficient table.
    thresholds : ndarray
        The part's own threshold rows when ``owns_thresholds``, else the full table.
    penalty : ndarray, shape (d,)
    owns_thresholds : bool
    threshold_penalty : float
    threshold_center : ndarray, optional
    max_halvings : int

    Returns
    -------
    BlockStep
        For the part's blocks, in the order of ``part.ids``.
    """
    return block_newton_step(
        link,
        part_data(part, other_coef),
        own_coef,
        thresholds,
        penalty,
        owns_thresholds=owns_thresholds,
        threshold_penalty=threshold_penalty,
        threshold_center=threshold_center,
        max_halvings=max_halvings,
    )


def part_nll(
    part: SidePart,
    link: Link,
    own_coef: FloatArray,
    other_coef: FloatArray,
    thresholds: FloatArray,
) -> FloatArray:
    """Negative log-likelihood of the part's ratings, per block (shape ``(b,)``)."""
    return per_block_nll(link, part_data(part, other_coef), own_coef, thresholds)


def part_threshold_terms(
    part: SidePart,
    link: Link,
    own_coef: FloatArray,
    other_coef: FloatArray,
    thresholds: FloatArray,
) -> tuple[FloatArray, FloatArray, float]:
    """Gradient, Hessian and value of the part's NLL in the global thresholds.

    Parameters
    ----------
    part : SidePart
    link : Link
    own_coef, other_coef : ndarray
    thresholds : ndarray, shape (1, K - 1)

    Returns
    -------
    gradient : ndarray, shape (K - 1,)
    hessian : ndarray, shape (K - 1, K - 1)
    nll : float
    """
    data = part_data(part, other_coef)
    eta = linear_predictor(data, own_coef)
    n = part.n_ratings
    zeros = np.zeros(n, dtype=np.intp)
    pooled = BlockData(part.y, part.weights, zeros, 1, np.empty((n, 0)), eta, zeros, part.n_levels)
    grad, hess, nll = block_gradient_hessian(link, pooled, np.zeros((1, 0)), thresholds, True)
    return grad[0], hess[0], float(nll[0])
