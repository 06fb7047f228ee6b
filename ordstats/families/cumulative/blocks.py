r"""Batched Newton steps for many small cumulative link models with offsets.

Ordinal matrix factorisation (:mod:`ordstats.estimation.factorization`) models
rating ``r_{uv}`` of row ``u`` and column ``v`` as

.. math::

    P(r_{uv} \le j) = F\big(\theta_{t,j} - \eta_{uv}\big),\qquad
    \eta_{uv} = b_u + b_v + p_u^\top q_v ,                              \tag{1}

with thresholds ``theta_t`` shared globally, per row or per column.  With the
columns fixed, row ``u``'s parameters ``x_u = (b_u, p_u)`` (and ``theta_u`` when
the rows own the thresholds) form a cumulative link model with covariates
``z_{uv} = (1, q_v)`` and offset ``o_{uv} = b_v`` (and vice versa).  Each block
``k`` minimises the MAP objective

.. math::

    f_k(x_k, \theta_k) = -\sum_{i \in k} w_i \log P(r_i \mid \theta_{t_i} - o_i - z_i^\top x_k)
        + \tfrac12 \sum_a \lambda_a x_{ka}^2
        + \tfrac{\lambda_\theta}{2}\lVert\theta_k - \bar\theta\rVert^2 ,   \tag{2}

the last term only when the block owns its thresholds (a Gaussian prior that
shrinks them to their common centre ``bar theta``).  The gradient and Hessian
of (2) are accumulated from the per-row derivatives of
:func:`~ordstats.families.cumulative.likelihood.interval_derivatives` (tail
safe) for all blocks at once: the ``z``-parts as batched matrix products
``Z_k' diag(h) Z_k`` over blocks of similar size gathered into padded arrays
(:class:`BlockLayout`), the threshold parts with :func:`numpy.bincount`; all
blocks are solved by one batched Cholesky solve; a block whose step does not
decrease (2) halves it (only that block), so every block objective, hence the
total, decreases monotonically.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.families.cumulative.likelihood import (
    interval_derivatives,
    log_interval_probabilities,
)

__all__ = [
    "BlockData",
    "BlockLayout",
    "BlockStep",
    "block_gradient_hessian",
    "block_layout",
    "block_newton_step",
    "block_objective",
    "linear_predictor",
    "per_block_nll",
]

#: Padded cells (observations) per batch of :class:`BlockLayout`: bounds the
#: temporaries of the batched products (``cells x d`` floats).
_BATCH_CELLS = 1 << 18


@dataclass(frozen=True, eq=False)
class BlockLayout:
    """The observations of each block, gathered into padded batches.

    Blocks of similar size share a batch: a ``(G, m)`` array of observation
    indices, one row per block, padded to the batch's width ``m`` (at most
    ``growth`` times the block's size) by repeating the block's last index,
    with a mask that zeroes the padding.  A batch's sums over observations are
    then one stacked matrix product.

    Attributes
    ----------
    batches : tuple of (blocks, rows, mask)
        ``blocks``: ndarray of int, shape (G,), the block ids; ``rows``: ndarray
        of int, shape (G, m); ``mask``: ndarray, shape (G, m), 1 on observations
        and 0 on padding.
    n_blocks : int
    """

    batches: tuple[tuple[IntArray, IntArray, FloatArray], ...]
    n_blocks: int


def block_layout(block: IntArray, n_blocks: int, growth: float = 1.25) -> BlockLayout:
    """Group observations by block into padded batches (:class:`BlockLayout`).

    Parameters
    ----------
    block : ndarray of int, shape (n,)
        Block of each observation, ``0 .. n_blocks - 1``.
    n_blocks : int
    growth : float
        Ratio of successive batch widths: padding adds less than ``growth - 1``
        of a block's size.

    Returns
    -------
    BlockLayout
    """
    block = np.asarray(block, dtype=np.intp)
    order = np.argsort(block, kind="stable")
    counts = np.bincount(block, minlength=n_blocks)
    starts = np.cumsum(counts) - counts
    nonempty = np.flatnonzero(counts)
    if nonempty.size == 0:
        return BlockLayout((), n_blocks)
    largest = int(counts.max())
    ladder = np.unique(np.ceil(growth ** np.arange(np.log(largest) / np.log(growth) + 2)))
    ladder = ladder.astype(np.intp)
    width = ladder[np.searchsorted(ladder, counts[nonempty])]
    batches = []
    for m in np.unique(width):
        ids = nonempty[width == m]
        per_batch = max(1, _BATCH_CELLS // int(m))
        position = np.arange(m)
        for first in range(0, ids.size, per_batch):
            chunk = ids[first : first + per_batch]
            count = counts[chunk][:, None]
            rows = order[starts[chunk][:, None] + np.minimum(position, count - 1)]
            batches.append((chunk, rows, (position < count).astype(float)))
    return BlockLayout(tuple(batches), n_blocks)


@dataclass(frozen=True, eq=False)
class BlockData:
    """The observations of one side's blocks (all rows, or all columns).

    Attributes
    ----------
    y : ndarray of int, shape (n,)
        Levels ``0 .. K-1``.
    weights : ndarray, shape (n,)
    block : ndarray of int, shape (n,)
        Block (row or column) of each observation, ``0 .. n_blocks - 1``.
    n_blocks : int
    covariates : ndarray, shape (n, d)
        ``z_i`` of equation (2): the other side's fixed factors (and a column of
        ones for a bias).
    offset : ndarray, shape (n,)
        ``o_i``: everything fixed in the linear predictor.
    threshold_index : ndarray of int, shape (n,)
        Row of the threshold table each observation uses.
    n_levels : int
    layout : BlockLayout, optional
        :func:`block_layout` of ``block`` (the blocks never change during a fit:
        pass it to skip the grouping); built when needed if absent.
    """

    y: IntArray
    weights: FloatArray
    block: IntArray
    n_blocks: int
    covariates: FloatArray
    offset: FloatArray
    threshold_index: IntArray
    n_levels: int
    layout: BlockLayout | None = None


@dataclass(frozen=True)
class BlockStep:
    """Result of :func:`block_newton_step`.

    Attributes
    ----------
    coef : ndarray, shape (n_blocks, d)
    thresholds : ndarray, shape (m, K - 1)
        The threshold table (updated only when the blocks own it).
    objective : ndarray, shape (n_blocks,)
        Equation (2) per block at the new parameters.
    nll : ndarray, shape (n_blocks,)
        Its negative log-likelihood part.
    hessian : ndarray, shape (n_blocks, D, D)
        Hessian of (2) at the *old* parameters, ``D = d`` (+ ``K - 1`` when the
        blocks own the thresholds): its inverse approximates the covariance.
    halvings : int
        Largest number of step halvings any block needed.
    """

    coef: FloatArray
    thresholds: FloatArray
    objective: FloatArray
    nll: FloatArray
    hessian: FloatArray
    halvings: int


def linear_predictor(data: BlockData, coef: FloatArray) -> FloatArray:
    """``eta_i = o_i + z_i' x_{k(i)}`` of equation (2)."""
    if coef.shape[1] == 0:
        return data.offset
    return data.offset + np.einsum("ij,ij->i", data.covariates, coef[data.block])


def _bounds(data: BlockData, thresholds: FloatArray, eta: FloatArray) -> tuple[FloatArray, ...]:
    table = np.column_stack(
        [np.full(thresholds.shape[0], -np.inf), thresholds, np.full(thresholds.shape[0], np.inf)]
    )
    with np.errstate(invalid="ignore"):
        upper = table[data.threshold_index, data.y + 1] - eta
        lower = table[data.threshold_index, data.y] - eta
    return upper, lower


def _penalty(
    coef: FloatArray,
    thresholds: FloatArray | None,
    penalty: FloatArray,
    threshold_penalty: float,
    threshold_center: FloatArray | None,
) -> FloatArray:
    out = 0.5 * (coef**2) @ penalty if coef.shape[1] else np.zeros(coef.shape[0])
    if thresholds is not None and threshold_penalty > 0 and threshold_center is not None:
        out = out + 0.5 * threshold_penalty * np.sum((thresholds - threshold_center) ** 2, axis=1)
    return out


def _nll_by_block(data: BlockData, log_p: FloatArray) -> FloatArray:
    """Per-block ``-sum w log P`` (``inf`` for a block with an impossible rating)."""
    terms = np.where(np.isfinite(log_p), -data.weights * log_p, np.inf)
    with np.errstate(invalid="ignore"):
        out = np.bincount(data.block, weights=terms, minlength=data.n_blocks)
    return np.where(np.isnan(out), np.inf, out)


def per_block_nll(
    link: Link, data: BlockData, coef: FloatArray, thresholds: FloatArray
) -> FloatArray:
    """Negative log-likelihood of each block's cells at ``coef`` and ``thresholds``.

    Parameters
    ----------
    link : Link
    data : BlockData
    coef : ndarray, shape (n_blocks, d)
        Each block's coefficients.
    thresholds : ndarray
        The thresholds (per block or shared, as ``data`` lays them out).

    Returns
    -------
    ndarray, shape (n_blocks,)
    """
    upper, lower = _bounds(data, thresholds, linear_predictor(data, coef))
    return _nll_by_block(data, log_interval_probabilities(link, upper, lower))


def _with_penalty(
    nll: FloatArray,
    coef: FloatArray,
    thresholds: FloatArray,
    penalty: FloatArray,
    owns_thresholds: bool,
    threshold_penalty: float,
    threshold_center: FloatArray | None,
) -> FloatArray:
    """Equation (2) from its likelihood part."""
    own = thresholds if owns_thresholds else None
    out = nll + _penalty(coef, own, penalty, threshold_penalty, threshold_center)
    if owns_thresholds:  # a level no block member used may not disorder its thresholds
        out = np.where(np.all(np.diff(thresholds, axis=1) >= 0, axis=1), out, np.inf)
    return out


def block_objective(
    link: Link,
    data: BlockData,
    coef: FloatArray,
    thresholds: FloatArray,
    penalty: FloatArray,
    *,
    owns_thresholds: bool = False,
    threshold_penalty: float = 0.0,
    threshold_center: FloatArray | None = None,
) -> FloatArray:
    """Equation (2) for every block (``inf`` where its thresholds are disordered).

    Parameters
    ----------
    link : Link
    data : BlockData
    coef : ndarray, shape (n_blocks, d)
    thresholds : ndarray, shape (m, K - 1)
    penalty : ndarray, shape (d,)
        Ridge penalties ``lambda_a``.
    owns_thresholds : bool
        Whether block ``k`` owns threshold row ``k`` (then ``m = n_blocks``).
    threshold_penalty : float
    threshold_center : ndarray, shape (K - 1,), optional

    Returns
    -------
    ndarray, shape (n_blocks,)
    """
    nll = per_block_nll(link, data, coef, thresholds)
    return _with_penalty(
        nll, coef, thresholds, penalty, owns_thresholds, threshold_penalty, threshold_center
    )


def block_gradient_hessian(
    link: Link, data: BlockData, coef: FloatArray, thresholds: FloatArray, owns: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Gradient, Hessian and value of the negative log-likelihood part of (2), per block.

    Parameters
    ----------
    link : Link
    data : BlockData
    coef : ndarray, shape (n_blocks, d)
    thresholds : ndarray
    owns : bool
        Whether each block has its own thresholds (their derivatives are then
        appended to the coefficients').

    Returns
    -------
    gradient : ndarray, shape (n_blocks, d + t)
    hessian : ndarray, shape (n_blocks, d + t, d + t)
    nll : ndarray, shape (n_blocks,)
        ``t`` is ``K - 1`` when ``owns``, else 0.
    """
    n_blocks, d = coef.shape
    t = data.n_levels - 1 if owns else 0
    dim = d + t
    upper, lower = _bounds(data, thresholds, linear_predictor(data, coef))
    der = interval_derivatives(link, upper, lower)
    nll = _nll_by_block(data, der.log_prob)
    w = data.weights
    # d(-l)/d eta = (g_u + g_l); d2(-l)/d eta2 = -(h_uu + 2 h_ul + h_ll)
    g_eta = w * (der.d_upper + der.d_lower)
    h_eta = -w * (der.d2_upper + 2.0 * der.d2_cross + der.d2_lower)
    grad = np.zeros((n_blocks, dim))
    hess = np.zeros((n_blocks, dim, dim))
    cross = None
    if t:
        # cut-point indices of the upper (y) and lower (y - 1) bounds; a missing
        # bound has zero derivatives, so its clipped index receives nothing
        block = data.block
        k_u = np.minimum(data.y, t - 1)
        k_l = np.maximum(data.y - 1, 0)
        g_u, g_l = -w * der.d_upper, -w * der.d_lower
        h_uu, h_ul, h_ll = -w * der.d2_upper, -w * der.d2_cross, -w * der.d2_lower
        size = n_blocks * t
        grad[:, d:] = (
            np.bincount(block * t + k_u, weights=g_u, minlength=size)
            + np.bincount(block * t + k_l, weights=g_l, minlength=size)
        ).reshape(n_blocks, t)
        tt = n_blocks * t * t
        base = block * t * t
        hess[:, d:, d:] = (
            np.bincount(base + k_u * t + k_u, weights=h_uu, minlength=tt)
            + np.bincount(base + k_l * t + k_l, weights=h_ll, minlength=tt)
            + np.bincount(base + k_u * t + k_l, weights=h_ul, minlength=tt)
            + np.bincount(base + k_l * t + k_u, weights=h_ul, minlength=tt)
        ).reshape(n_blocks, t, t)
        if d:
            # log P depends on theta - eta: d2/(d eta d theta_k) = -(row k of the
            # cut-point Hessian summed), one column per cut point
            cross = np.zeros((len(k_u), t))
            obs = np.arange(len(k_u))
            cross[obs, k_u] = -(h_uu + h_ul)
            cross[obs, k_l] -= h_ul + h_ll
    if d:
        layout = data.layout if data.layout is not None else block_layout(data.block, n_blocks)
        _accumulate(layout, data.covariates, g_eta, h_eta, cross, grad, hess)
    return grad, hess, nll


def _accumulate(
    layout: BlockLayout,
    z: FloatArray,
    g: FloatArray,
    h: FloatArray,
    cross: FloatArray | None,
    grad: FloatArray,
    hess: FloatArray,
) -> None:
    """Add ``Z_k' g``, ``Z_k' diag(h) Z_k`` (and ``Z_k' C``) of every block in place."""
    d = z.shape[1]
    for ids, rows, mask in layout.batches:
        Z = z[rows]  # (G, m, d)
        Zt = np.swapaxes(Z, 1, 2)
        grad[ids, :d] = np.matmul(Zt, (g[rows] * mask)[:, :, None])[:, :, 0]
        zhz = np.matmul(Zt, Z * (h[rows] * mask)[:, :, None])
        hess[ids, :d, :d] = 0.5 * (zhz + np.swapaxes(zhz, 1, 2))
        if cross is not None:
            zc = np.matmul(Zt, cross[rows] * mask[:, :, None])
            hess[ids, :d, d:] = zc
            hess[ids, d:, :d] = np.swapaxes(zc, 1, 2)


def _subset(data: BlockData, keep: np.ndarray) -> BlockData:
    return BlockData(
        y=data.y[keep],
        weights=data.weights[keep],
        block=data.block[keep],
        n_blocks=data.n_blocks,
        covariates=data.covariates[keep],
        offset=data.offset[keep],
        threshold_index=data.threshold_index[keep],
        n_levels=data.n_levels,
    )


def _solve(hess: FloatArray, grad: FloatArray) -> FloatArray:
    """Batched ``H^{-1} g``; blocks whose ``H`` is not positive definite get a ridge shift."""
    if hess.shape[1] == 0:
        return grad
    scale = np.maximum(np.abs(np.diagonal(hess, axis1=1, axis2=2)).max(axis=1), 1.0)
    eye = np.eye(hess.shape[1])
    try:
        chol = np.linalg.cholesky(hess + 1e-10 * scale[:, None, None] * eye)
    except np.linalg.LinAlgError:
        low = np.linalg.eigvalsh(hess)[:, 0]
        shift = np.where(low < 1e-8 * scale, 1e-6 * scale - low, 0.0)
        chol = np.linalg.cholesky(hess + shift[:, None, None] * eye)
    half = np.linalg.solve(chol, grad[:, :, None])
    return np.linalg.solve(np.swapaxes(chol, 1, 2), half)[:, :, 0]


def block_newton_step(
    link: Link,
    data: BlockData,
    coef: FloatArray,
    thresholds: FloatArray,
    penalty: FloatArray,
    *,
    owns_thresholds: bool = False,
    threshold_penalty: float = 0.0,
    threshold_center: FloatArray | None = None,
    max_halvings: int = 30,
) -> BlockStep:
    r"""One Newton step on equation (2) for every block at once, halved per block.

    The step ``-H_k^{-1} \nabla f_k`` of each block is halved until
    ``f_k`` does not increase, so the total objective decreases monotonically;
    a block that cannot decrease keeps its parameters.

    Parameters
    ----------
    link : Link
    data : BlockData
    coef : ndarray, shape (n_blocks, d)
    thresholds : ndarray, shape (m, K - 1)
    penalty : ndarray, shape (d,)
    owns_thresholds : bool
        Update threshold row ``k`` with block ``k`` (thresholds per row/column);
        with ``d = 0`` and one block this is the global threshold step.
    threshold_penalty : float
        ``lambda_theta`` of equation (2).
    threshold_center : ndarray, shape (K - 1,), optional
        ``bar theta`` (required with a positive ``threshold_penalty``).
    max_halvings : int

    Returns
    -------
    BlockStep
    """
    coef = np.asarray(coef, dtype=float)
    thresholds = np.asarray(thresholds, dtype=float)
    d = coef.shape[1]
    grad, hess, nll_old = block_gradient_hessian(link, data, coef, thresholds, owns_thresholds)
    f_old = _with_penalty(
        nll_old, coef, thresholds, penalty, owns_thresholds, threshold_penalty, threshold_center
    )
    grad[:, :d] += coef * penalty
    idx = np.arange(d)
    hess[:, idx, idx] += penalty
    if owns_thresholds:
        t = data.n_levels - 1
        if threshold_penalty > 0:
            assert threshold_center is not None  # a penalty pulls towards a centre
            grad[:, d:] += threshold_penalty * (thresholds - threshold_center)
            hess[:, d + np.arange(t), d + np.arange(t)] += threshold_penalty
    step = -_solve(hess, grad)
    if owns_thresholds:
        step = _tied_steps(hess, grad, thresholds, d, step)
    alpha = np.ones(coef.shape[0])
    new_coef, new_theta, f_new, nll_new = coef, thresholds, f_old.copy(), nll_old.copy()
    pending = np.ones(coef.shape[0], dtype=bool)
    halvings = 0
    sub = data
    for halvings in range(max_halvings + 1):
        trial_coef = coef + alpha[:, None] * step[:, :d]
        trial_theta = thresholds
        if owns_thresholds:  # a pair the step would cross meets instead (see _ordered)
            trial_theta = _ordered(thresholds + alpha[:, None] * step[:, d:])
        if halvings:  # re-evaluate only the observations of blocks still halving
            sub = _subset(sub, pending[sub.block])
        nll_trial = per_block_nll(link, sub, trial_coef, trial_theta)
        f_trial = _with_penalty(
            nll_trial,
            trial_coef,
            trial_theta,
            penalty,
            owns_thresholds,
            threshold_penalty,
            threshold_center,
        )
        ok = pending & (f_trial <= f_old)
        new_coef = np.where(ok[:, None], trial_coef, new_coef)
        if owns_thresholds:
            new_theta = np.where(ok[:, None], trial_theta, new_theta)
        f_new = np.where(ok, f_trial, f_new)
        nll_new = np.where(ok, nll_trial, nll_new)
        pending &= ~ok
        if not pending.any():
            break
        alpha = np.where(pending, alpha * 0.5, alpha)
    return BlockStep(new_coef, new_theta, f_new, nll_new, hess, halvings)


#: Threshold gaps below this (relative to the thresholds' size) count as closed.
_CLOSED_GAP = 1e-10


def _ordered(table: FloatArray) -> FloatArray:
    """Each row of ``table`` projected onto non-decreasing rows (pool adjacent violators).

    A block whose likelihood never uses the level between two cut points gains
    by closing them, so a Newton step can cross them; the projection lets them
    meet (the level then has probability 0 in that block, the MAP on the closed
    ordered set) instead of rejecting the whole block's step.
    """
    bad = np.flatnonzero(np.any(np.diff(table, axis=1) < 0, axis=1))
    if not bad.size:
        return table
    out = table.copy()
    for k in bad:
        values: list[float] = []
        sizes: list[int] = []
        for x in table[k]:
            values.append(float(x))
            sizes.append(1)
            while len(values) > 1 and values[-2] > values[-1]:
                size = sizes[-2] + sizes[-1]
                values[-2] = (values[-2] * sizes[-2] + values[-1] * sizes[-1]) / size
                sizes[-2] = size
                del values[-1], sizes[-1]
        out[k] = np.repeat(values, sizes)
    return out


def _tied_steps(
    hess: FloatArray, grad: FloatArray, thresholds: FloatArray, d: int, step: FloatArray
) -> FloatArray:
    r"""Newton steps with each closed, closing threshold pair tied (blocks owning thresholds).

    A pair ``theta_j <= theta_{j+1}`` is closed when its gap is below
    ``_CLOSED_GAP`` (relative) and closing when the gradient would lower (2) by
    closing it further (``g_{j+1} > g_j``): its cut points move as one
    variable (the projected Newton step of Bertsekas 1982 for order
    constraints: the reduced system ``T' H T s = -T' g``), so the block's other
    parameters still take full Newton steps.  Other blocks keep ``step``.
    """
    theta = thresholds
    g = grad[:, d:]
    gap = np.diff(theta, axis=1)
    closed = (gap <= _CLOSED_GAP * (1.0 + np.abs(theta[:, :-1]))) & (g[:, 1:] > g[:, :-1])
    out = step.copy()
    for k in np.flatnonzero(closed.any(axis=1)):
        group = np.concatenate([[0], np.cumsum(~closed[k])])  # tied cut points share a group
        t = theta.shape[1]
        tie = np.zeros((d + t, d + int(group[-1]) + 1))
        tie[np.arange(d), np.arange(d)] = 1.0
        tie[d + np.arange(t), d + group] = 1.0
        reduced = _solve((tie.T @ hess[k] @ tie)[None], (tie.T @ grad[k])[None])[0]
        out[k] = -tie @ reduced
    return out
