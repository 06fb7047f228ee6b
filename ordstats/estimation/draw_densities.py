r"""Log-likelihoods at many parameter draws at once (the importance-sampling posterior).

The posterior of :mod:`ordstats.results.posterior` weighs thousands of draws by the
log posterior at each.  Evaluating them one at a time repeats the per-call overhead and
reads the data once per draw; here a block of ``B`` draws is evaluated together, with
the location predictors of all of them one matrix product ``X B'``.  Each function
returns ``None`` for a model it has no vectorised path for; the caller then evaluates
draw by draw.  The numbers equal the one-draw evaluations (``model.evaluator`` and
``MixedObjective.value``) to rounding.

**Cumulative logit models** without nominal or scale effects (the common case, and the
one that dominates at 10^5 rows) use the exact factorisation of the logistic interval
probability (:meth:`ordstats.core.links.standard.Logit.log_interval`)

.. math::

    P_i = F(u_i)\,\{1 - F(l_i)\}\,(1 - e^{l_i - u_i}), \qquad
    u_i = \theta_{y_i} - \eta_i,\; l_i = \theta_{y_i - 1} - \eta_i,

so that with ``E_i = e^{eta_i}``, ``a_k = e^{-theta_k}`` and ``b_k = e^{theta_{k-1}}``
(0 at the open ends)

.. math::

    \log P_i = \log(1 - e^{\theta_{k-1} - \theta_k})
        - \log(1 + a_k b_k + a_k E_i + b_k / E_i), \qquad k = y_i :

one ``exp`` and one ``log`` per row and draw; the first term depends on the level only,
and the second sums positive terms (no cancellation in either tail).  Rows are grouped by
level once, and each block of rows x draws stays in the processor's cache.  Where a
term over- or underflows (``|eta|`` or a threshold beyond ~700) the block is evaluated
again by the link's ``log_interval``.  Other links, nominal and scale effects,
censored rows and fixed threshold offsets take the general path: each row's bounds and
``link.log_interval`` on (rows x draws) arrays.

**Mixed models** with one scalar random term (``(1|g)``, ``(0 + x|g)``): the inner
Newton iteration for the conditional modes runs for every level and draw at once (the
conditional log-density separates over the levels, so each ``u_l`` is a one-dimensional
Newton problem with its own step halving), then the Laplace or adaptive Gauss-Hermite
value of :class:`ordstats.families.mixed.MixedObjective` follows per draw.  The
iteration starts from the modes at the block's mean draw extrapolated linearly
(``MixedDraws._start``).  For the logit link the width term ``log(1 - e^{l - u})``
does not move with the random effect and is summed once per block; with a random
intercept (``z = 1``) the bounds are ``U_0 - b_l`` and ``L_0 - b_l``, so
``e^{-U} = e^{-U_0} e^{b_l}`` and ``e^{L} = e^{L_0} e^{-b_l}``: the rows' exponentials
are taken once per block, and each iteration takes only the ``L x B`` exponentials of
the random effects (while no product can overflow: :data:`EXP_SPLIT_BOUND`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link, log1mexp
from ordstats.core.links.standard import Logit
from ordstats.families.cumulative.likelihood import (
    LOGISTIC_SAFE,
    CLMProblem,
    LogisticHalves,
    interval_derivatives,
)
from ordstats.families.mixed import mode_sensitivities

__all__ = [
    "BLOCK_ELEMENTS",
    "ClmDraws",
    "MixedDraws",
    "log_densities_in_blocks",
    "ordered_draws",
    "rows_by_level",
]

#: Rows x draws of one block of the logit path: a few such arrays stay in the L2 cache.
BLOCK_ELEMENTS = 1 << 16
#: Rows x draws of one block of the general paths (arrays of 8 MB).
GENERAL_BLOCK_ELEMENTS = 1 << 20
#: A logit random intercept's inner Newton multiplies ``e^{-U_0}`` by ``e^{b}`` (see
#: ``MixedDraws``) while the finite bounds ``|U_0|`` stay below this and ``|b|`` below
#: :data:`EXP_SPLIT_EFFECT`: no product can overflow or lose its last digits to underflow.
EXP_SPLIT_BOUND = 600.0
EXP_SPLIT_EFFECT = 100.0


def log_densities_in_blocks(
    draws: FloatArray, block_size: int, evaluate: Callable[[FloatArray], FloatArray]
) -> FloatArray:
    """``evaluate`` over consecutive blocks of ``block_size`` rows of ``draws``.

    The values of all blocks in one array, with every non-finite value ``-inf`` (a draw
    off the support).
    """
    out = np.empty(draws.shape[0])
    for start in range(0, draws.shape[0], block_size):
        out[start : start + block_size] = evaluate(draws[start : start + block_size])
    out[~np.isfinite(out)] = -np.inf
    return out


def ordered_draws(problem: Any, block: FloatArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """The draws of a mixed model's ``block`` whose cut-points increase.

    Returns their cut-points ``theta`` (K - 1, kept draws) from the threshold
    parameters through the problem's threshold Jacobian, their slopes (kept
    draws, ``n_beta``) and the indices of the kept draws; the others are off the
    support (log density ``-inf``).
    """
    alpha = block[:, : problem.n_alpha]
    beta = block[:, problem.n_alpha : problem.n_alpha + problem.n_beta]
    theta = np.asarray(problem.jacobian @ alpha.T, dtype=float)
    keep = np.flatnonzero(np.all(np.diff(theta, axis=0) > 0, axis=0))
    return theta[:, keep], beta[keep], keep


@dataclass(frozen=True, eq=False)
class _LevelRows:
    """The rows grouped by response level for the logit path.

    ``X`` holds ``[x_i, o_i, 1]`` (the offset column only with an offset), so that one
    product with ``[beta; 1; -theta_k]`` gives ``eta_i - theta_k``.
    """

    X: FloatArray
    ones: FloatArray
    weights: FloatArray | None
    bounds: IntArray
    level_weights: FloatArray


@dataclass(frozen=True)
class _Work:
    """Scratch arrays of the logit path: two (rows, draws) blocks and the coefficients."""

    values: FloatArray
    spare: FloatArray
    coef: FloatArray


@dataclass(frozen=True)
class _Level:
    """One level's constants for a block of draws (the logit path)."""

    k: int
    products: FloatArray | None  # a_k b_k, None at the open ends
    width: FloatArray  # log(1 - a_k b_k)
    bounds: FloatArray  # (K + 1, B): -inf, theta, +inf


def rows_by_level(problem: CLMProblem) -> tuple[IntArray, IntArray, FloatArray]:
    """``(order, bounds, [X, o, 1][order])``: the rows grouped by response level.

    The rows of level ``k`` are ``bounds[k]:bounds[k + 1]`` of the contiguous copy
    of ``[x_i, o_i, 1]`` (the offset column only with an offset), so that one
    product with ``[beta; 1; -theta_k]`` gives ``eta_i - theta_k``.
    """
    data = problem.data
    order = np.argsort(data.y, kind="stable")
    counts = np.bincount(data.y, minlength=data.n_levels)
    columns = [data.X[order]]
    if problem.has_offset:
        columns.append(data.offset[order, None])
    columns.append(np.ones((data.n_obs, 1)))
    return order, np.concatenate([[0], np.cumsum(counts)]), np.ascontiguousarray(np.hstack(columns))


class ClmDraws:
    """Log-likelihoods of a cumulative link model at blocks of draws.

    Parameters
    ----------
    problem : CLMProblem
        The model's likelihood arrays (``model.evaluator.problem``), in the parameters
        the user sees (no shifted basis).
    """

    def __init__(self, problem: CLMProblem) -> None:
        self.problem = problem
        data, lay = problem.data, problem.layout
        self._logit_path = (
            type(data.link) is Logit
            and problem.level_designs is not None
            and problem.upper_shift is None
            and not lay.n_zeta
        )

    @staticmethod
    def of(model: Any) -> ClmDraws | None:
        """For a fitted-model object ``model``, or ``None`` without a vectorised path.

        The cumulative family with a fixed link and unshifted predictor columns has
        one; flexible links (a parameter in the link) and the sequential and adjacent
        families are evaluated draw by draw.
        """
        evaluator = getattr(model, "evaluator", None)
        problem = getattr(evaluator, "problem", None)
        if not isinstance(problem, CLMProblem) or getattr(evaluator, "basis", None) is not None:
            return None
        if problem.layout.n_lambda:
            return None
        return ClmDraws(problem)

    def loglik(self, draws: FloatArray) -> FloatArray:
        """``sum_i w_i log P(Y_i = y_i)`` at each row of ``draws`` (``-inf`` off the support)."""
        draws = np.asarray(draws, dtype=float)
        n = max(self.problem.data.n_obs, 1)
        if self._logit_path:
            size = int(np.clip(BLOCK_ELEMENTS // min(n, 512), 16, 4096))
        else:
            size = int(np.clip(GENERAL_BLOCK_ELEMENTS // n, 16, 4096))
        evaluate = self._logit_block if self._logit_path else self._general_block
        return log_densities_in_blocks(draws, size, evaluate)

    # -- the logit path -------------------------------------------------------------------

    @cached_property
    def _levels(self) -> _LevelRows:
        problem, data = self.problem, self.problem.data
        order, bounds, X = rows_by_level(problem)
        rows = min(data.n_obs, BLOCK_ELEMENTS)
        return _LevelRows(
            X=X,
            ones=np.ones(rows),
            weights=None if problem.unit_weights else data.weights[order],
            bounds=bounds,
            level_weights=np.bincount(data.y, data.weights, minlength=data.n_levels).astype(float),
        )

    def _logit_block(self, block: FloatArray) -> FloatArray:
        """The log-likelihood of a block of draws (module docstring, logit path)."""
        lay, rows = self.problem.layout, self._levels
        B = block.shape[0]
        jac = self.problem.data.threshold_jacobian
        theta = np.asarray(jac @ block[:, lay.thresholds].T, dtype=float)  # (K - 1, B)
        K = theta.shape[0] + 1
        edge = np.full((1, B), np.inf)
        bounds = np.vstack([-edge, theta, edge])  # theta_{k-1}, theta_k of level k: rows k, k+1
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            widths = log1mexp(bounds[1:] - bounds[:-1])  # log(1 - a_k b_k); 0 at the ends
            products = np.exp(bounds[:-1] - bounds[1:])  # a_k b_k; 0 at the ends
        eta_coef = np.empty((rows.X.shape[1] - 1, B))  # beta, and 1 for the offset
        eta_coef[: lay.n_beta] = block[:, lay.beta].T
        eta_coef[lay.n_beta :] = 1.0
        total = np.zeros(B)
        chunk = max(min(BLOCK_ELEMENTS // B, rows.X.shape[0]), 1)
        work = _Work(np.empty((chunk, B)), np.empty((chunk, B)), np.empty((rows.X.shape[1], B)))
        for k in range(K):
            lo, hi = int(rows.bounds[k]), int(rows.bounds[k + 1])
            if hi == lo:  # no rows: the level's thresholds are not read (as one draw)
                continue
            top = k == K - 1
            if top:  # V = e^{theta_{K-2} - eta}: log P = -log(1 + V)
                np.negative(eta_coef, out=work.coef[:-1])
                work.coef[-1] = bounds[k]
            else:  # V = e^{eta - theta_k} = a_k E
                work.coef[:-1] = eta_coef
                work.coef[-1] = -bounds[k + 1]
            total += rows.level_weights[k] * widths[k]
            level = _Level(k, None if k in (0, K - 1) else products[k], widths[k], bounds)
            for start in range(lo, hi, chunk):
                stop = min(start + chunk, hi)
                total -= self._logit_rows(level, eta_coef, start, stop, work)
        return total

    def _logit_rows(
        self, level: _Level, eta_coef: FloatArray, start: int, stop: int, work: _Work
    ) -> FloatArray:
        """``sum w_i log(1 + ab + V_i + ab / V_i)`` over rows ``start:stop`` of a level."""
        rows = self._levels
        m = stop - start
        V, T = work.values[:m], work.spare[:m]
        np.matmul(rows.X[start:stop], work.coef, out=V)
        ab = level.products
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            np.exp(V, out=V)
            if ab is not None:
                np.divide(ab, V, out=T)
                V += T
                V += 1.0 + ab
            else:
                V += 1.0
            np.log(V, out=V)
        w = rows.ones[:m] if rows.weights is None else rows.weights[start:stop]
        sums = np.asarray(w @ V, dtype=float)
        bad = ~np.isfinite(sums)
        if bad.any():  # an exp over- or underflowed: these draws by the stable formula
            eta = rows.X[start:stop, :-1] @ eta_coef[:, bad]
            b = level.bounds[:, bad]
            with np.errstate(invalid="ignore"):
                log_p = Logit().log_interval(b[level.k + 1] - eta, b[level.k] - eta)
            sums[bad] = np.sum(w) * level.width[bad] - w @ log_p
        return sums

    # -- the general path -----------------------------------------------------------------

    def _general_block(self, block: FloatArray) -> FloatArray:
        problem, lay, data = self.problem, self.problem.layout, self.problem.data
        alpha = np.ascontiguousarray(block[:, lay.thresholds].T)
        theta_upper, theta_lower = problem.cutpoints(alpha)
        if problem.upper_shift is not None and problem.lower_shift is not None:
            theta_upper = theta_upper + problem.upper_shift[:, None]
            theta_lower = theta_lower + problem.lower_shift[:, None]
        xb = data.X @ block[:, lay.beta].T
        if problem.has_offset:
            xb += data.offset[:, None]
        with np.errstate(invalid="ignore", over="ignore"):
            upper = theta_upper - xb
            lower = theta_lower - xb
            if lay.n_zeta:
                log_scale = data.scale @ block[:, lay.zeta].T
                if data.scale_offset is not None:
                    log_scale += data.scale_offset[:, None]
                scale = np.exp(log_scale)
                upper /= scale
                lower /= scale
            upper = np.where(problem.has_upper[:, None], upper, np.inf)
            lower = np.where(problem.has_lower[:, None], lower, -np.inf)
            log_p = data.link.log_interval(upper, lower)
        return np.asarray(data.weights @ log_p, dtype=float)


class MixedDraws:
    """Laplace / adaptive Gauss-Hermite log-likelihoods of a clmm at blocks of draws.

    One scalar random term only (``(1|g)`` or ``(0 + x|g)``): its conditional density
    separates over the levels.

    Parameters
    ----------
    objective : MixedObjective
        The model's objective (``model.objective``).
    nagq : int
        1: Laplace; more: adaptive Gauss-Hermite nodes.
    """

    #: Limits of the inner Newton iteration and of its step halving (the one-draw
    #: objective's; its tolerance on ``|d h / d u|`` is the objective's ``inner_tol``).
    MAX_ITER = 100
    MAX_HALVINGS = 30

    def __init__(self, objective: Any, nagq: int = 1) -> None:
        self.objective = objective
        self.problem = objective.problem
        self.nagq = int(nagq)
        term = self.problem.terms[0]
        self.codes, self.n_levels = term.codes, term.n_levels
        self.column = np.asarray(term.matrix[:, 0], dtype=float)
        self.inner_tol = float(objective.inner_tol)

    @staticmethod
    def of(model: Any, nagq: int) -> MixedDraws | None:
        """For a mixed model with one scalar random term, else ``None``."""
        objective = getattr(model, "objective", None)
        problem = getattr(objective, "problem", None)
        terms = list(getattr(problem, "terms", ()))
        if len(terms) != 1 or terms[0].q != 1:
            return None
        return MixedDraws(objective, nagq)

    def loglik(self, draws: FloatArray) -> FloatArray:
        """The approximate marginal log-likelihood at each row of ``draws``."""
        draws = np.asarray(draws, dtype=float)
        n = max(self.problem.y.shape[0], 1)
        size = int(np.clip(GENERAL_BLOCK_ELEMENTS // (4 * n), 16, 4096))
        return log_densities_in_blocks(draws, size, self._block)

    def _level_sums(self, values: FloatArray) -> FloatArray:
        """Sums of the rows of ``values`` (n, B) per level: (L, B)."""
        return np.asarray(self.objective.level_sums(values), dtype=float)

    @cached_property
    def _row_factors(self) -> tuple[FloatArray | None, FloatArray | None, FloatArray | None]:
        """``w``, ``w z`` and ``w z^2`` as (n, 1) columns; ``None`` where all are 1."""
        w, z = self.problem.weights, self.column
        out = []
        for values in (w, w * z, w * z * z):
            out.append(None if np.all(values == 1.0) else np.asarray(values, float)[:, None])
        return out[0], out[1], out[2]

    def _weighted_level_sums(self, values: FloatArray, factor: FloatArray | None) -> FloatArray:
        return self._level_sums(values if factor is None else factor * values)

    def _block(self, block: FloatArray) -> FloatArray:
        theta, beta, keep = ordered_draws(self.problem, block)
        out = np.full(block.shape[0], -np.inf)
        if keep.size == 0:
            return out
        rows = self._block_rows(theta, beta, block[keep, -1])
        u, h_rows, D = self._modes(rows, self._start(block[keep], rows))
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.nagq <= 1:
                value = h_rows.sum(axis=0) - 0.5 * np.sum(np.log(D), axis=0)
                value = np.where(np.all(D > 0, axis=0), value, -np.inf)
            else:
                value = self._agq(rows, u, D)
        out[keep] = value
        return out

    def _block_rows(self, theta: FloatArray, beta: FloatArray, log_sigma: FloatArray) -> _BlockRows:
        """The rows' bounds at ``u = 0`` for draws with increasing cut-points ``theta`` (K-1, B)."""
        p = self.problem
        B = theta.shape[1]
        edge = np.full((1, B), np.inf)
        bounds = np.vstack([-edge, theta, edge])  # level k: rows k (lower), k + 1 (upper)
        eta0 = p.X @ beta.T + p.offset[:, None]
        with np.errstate(invalid="ignore", over="ignore"):
            upper = np.take(bounds, p.y + 1, axis=0) - eta0
            lower = np.take(bounds, p.y, axis=0) - eta0
        width = None
        if type(p.link) is Logit:  # sum of w log(1 - e^{l - u}): the same at every u
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                widths = log1mexp(bounds[1:] - bounds[:-1])  # (K, B), 0 at the open ends
            width = self._weighted_level_sums(np.take(widths, p.y, axis=0), self._row_factors[0])
        rows = _BlockRows(upper, lower, np.exp(log_sigma), width)
        if width is None or not self._unit_column:
            return rows
        # every finite bound is within |theta| + |eta_0|
        largest = np.max(np.abs(theta), initial=0.0) + np.max(np.abs(eta0), initial=0.0)
        if not largest < EXP_SPLIT_BOUND:
            return rows
        with np.errstate(over="ignore"):
            return replace(rows, exp_upper=np.exp(-upper), exp_lower=np.exp(lower))

    def _modes(self, rows: _BlockRows, u: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Conditional modes ``u`` (L, B), ``h_l(u_l)`` and ``D_l = -h_l''(u_l)`` per level.

        Each level's ``h_l(u) = sum_i w_i log P_i(u) - u^2/2`` is maximised by Newton
        with step halving on its own, as :meth:`MixedObjective.modes` does for all levels
        of one draw together (the same rule for a curvature that is not positive, where
        ``log P`` is not concave: ``max(|D|, 1)``).  Each iteration evaluates only the
        draws with a level still moving, from the start ``u`` (:meth:`_start`).
        """
        u = u.copy()
        h, grad, D = self._level_terms(rows, u)
        stuck = np.zeros(u.shape, dtype=bool)
        for _ in range(self.MAX_ITER):
            active = (np.abs(grad) >= self.inner_tol) & ~stuck
            moving = np.flatnonzero(active.any(axis=0))
            if moving.size == 0:
                break
            sub = rows.columns(moving)
            u_m, h_m, g_m, D_m = u[:, moving], h[:, moving], grad[:, moving], D[:, moving]
            pending = active[:, moving]
            indefinite = D_m <= 1e-8 * np.maximum(np.abs(D_m), 1.0)
            curvature = np.where(indefinite, np.maximum(np.abs(D_m), 1.0), D_m)
            step = np.where(pending, g_m / curvature, 0.0)
            new = [u_m.copy(), h_m.copy(), g_m.copy(), D_m.copy()]
            for _half in range(self.MAX_HALVINGS):
                trial = u_m + step
                terms = self._level_terms(sub, trial)
                good = pending & (terms[0] >= h_m - 1e-12 * np.abs(h_m))
                for kept, value in zip(new, (trial, *terms), strict=True):
                    kept[good] = value[good]
                pending &= ~good
                if not pending.any():
                    break
                step = np.where(pending, 0.5 * step, step)
            stuck[:, moving] |= pending  # no ascent in 30 halvings: that level stops
            u[:, moving], h[:, moving], grad[:, moving], D[:, moving] = new
        return u, h, D

    def _start(self, params: FloatArray, rows: _BlockRows) -> FloatArray:
        """Start values of the modes at the draws ``params`` (one per row), (L, B).

        The random effects ``b = sigma u`` extrapolated linearly from the draws' mean
        ``c``: ``b(x) = b(c) + (db / dx)(c) (x - c)``, with ``du / dx`` of the implicit
        function theorem (:func:`~ordstats.families.mixed.mode_sensitivities`), so the
        start is off by ``O(|x - c|^2)`` (the modes in ``b`` move little with ``sigma``,
        in ``u = b / sigma`` a lot).  Where the mean's modes are not finite,
        :meth:`_middle_start`.
        """
        centre = params.mean(axis=0)
        with np.errstate(all="ignore"):
            u_c, du = mode_sensitivities(self.objective, centre)
        if not (np.all(np.isfinite(u_c)) and np.all(np.isfinite(du))):
            return self._middle_start(rows)
        sigma_c = float(np.exp(centre[-1]))  # the scalar term's parameter is log sigma
        db = sigma_c * du
        db[:, -1] += sigma_c * u_c
        b = (sigma_c * u_c)[:, None] + db @ (params - centre).T
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            u0 = b / rows.sigma[None, :]
        return np.asarray(np.where(np.isfinite(u0), u0, 0.0), dtype=float)

    def _middle_start(self, rows: _BlockRows) -> FloatArray:
        """Start values: the middle draw's modes ``u_c``, as ``u_c sigma_c / sigma``."""
        mid = rows.sigma.size // 2
        one = rows.columns(np.array([mid]))
        u_c = np.zeros((self.n_levels, 1))
        for _ in range(self.MAX_ITER):  # plain Newton, to 1e-6: only a start
            _, grad, D = self._level_terms(one, u_c)
            if np.all(np.abs(grad) < 1e-6) or not np.all(D > 0):
                break
            u_c = u_c + grad / D
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = rows.sigma[mid] / rows.sigma
        u0 = u_c * np.where(np.isfinite(ratio), ratio, 0.0)[None, :]
        return np.asarray(np.where(np.isfinite(u0), u0, 0.0), dtype=float)

    def _bounds_at(self, rows: _BlockRows, u: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The rows' standardised bounds at the modes ``u`` (L, B): ``theta - eta``."""
        shift = np.take(rows.sigma[None, :] * u, self.codes, axis=0)  # a_i u_l, (n, B)
        if not self._unit_column:
            shift *= self.column[:, None]
        with np.errstate(invalid="ignore"):
            return rows.upper - shift, rows.lower - shift

    @cached_property
    def _unit_column(self) -> bool:
        return bool(np.all(self.column == 1.0))

    def _level_terms(
        self, rows: _BlockRows, u: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``h_l``, ``h_l'`` and ``-h_l''`` at ``u`` (L, B)."""
        w, wz, wz2 = self._row_factors
        if rows.width is not None:  # logit: log P less its width term, which is constant
            e_u, e_l = self._logistic_exponentials(rows, u)
            log_p, d1, d2 = _logistic_core(
                self.problem.link, e_u, e_l, lambda: self._bounds_at(rows, u)
            )
            h = self._weighted_level_sums(log_p, w) + rows.width
        else:
            d = interval_derivatives(self.problem.link, *self._bounds_at(rows, u))
            d1 = -(d.d_upper + d.d_lower)
            d2 = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower
            np.negative(d2, out=d2)
            h = self._weighted_level_sums(d.log_prob, w)
        h -= 0.5 * u * u
        grad = rows.sigma * self._weighted_level_sums(d1, wz) - u
        curvature = rows.sigma**2 * self._weighted_level_sums(d2, wz2) + 1.0
        return h, grad, curvature

    def _logistic_exponentials(
        self, rows: _BlockRows, u: FloatArray
    ) -> tuple[FloatArray, FloatArray]:
        """``e^{-upper}`` and ``e^{lower}`` at ``u`` (n, B).

        For a random intercept (``z = 1``) ``e^{-(U_0 - b_l)} = e^{-U_0} e^{b_l}``: the
        exponentials of the bounds at ``u = 0`` are taken once per block
        (:meth:`_block_rows`) and each iteration only those of the ``L x B`` random
        effects, where neither product can overflow.
        """
        b = rows.sigma[None, :] * u
        if rows.exp_upper is not None and rows.exp_lower is not None:
            if np.max(np.abs(b), initial=0.0) < EXP_SPLIT_EFFECT:
                grow = np.take(np.exp(b), self.codes, axis=0)
                e_l = np.take(np.exp(-b), self.codes, axis=0)
                e_l *= rows.exp_lower
                grow *= rows.exp_upper
                return grow, e_l
        upper, lower = self._bounds_at(rows, u)
        with np.errstate(over="ignore", invalid="ignore"):
            np.negative(upper, out=upper)
            return np.exp(upper, out=upper), np.exp(lower, out=lower)

    def _agq(self, rows: _BlockRows, u: FloatArray, D: FloatArray) -> FloatArray:
        """Eq. (4) of :mod:`ordstats.families.mixed` at each draw."""
        w = self._row_factors[0]
        nodes, node_weights = np.polynomial.hermite.hermgauss(self.nagq)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.sqrt(2.0 / D)
        per_node = np.empty((self.nagq, *u.shape))
        link: Link = self.problem.link
        for k, (x, omega) in enumerate(zip(nodes, node_weights, strict=True)):
            u_k = u + scale * x
            upper, lower = self._bounds_at(rows, u_k)
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                lp = link.log_interval(upper, lower)
            per_node[k] = np.log(omega) + x**2 + self._weighted_level_sums(lp, w) - 0.5 * u_k**2
        with np.errstate(invalid="ignore"):
            total = np.sum(np.log(scale) + logsumexp(per_node, axis=0), axis=0)
        total = total - 0.5 * self.n_levels * np.log(2 * np.pi)
        return np.where(np.all(D > 0, axis=0), total, -np.inf)


@dataclass(frozen=True)
class _BlockRows:
    """A block of draws' rows for the inner Newton: bounds at ``u = 0`` and the SDs.

    ``upper``/``lower``: ``theta_{y_i} - x_i'beta - o_i`` and ``theta_{y_i - 1} - ...``
    (n, B); ``sigma`` (B,); ``width``: for the logit link, each level's
    ``sum_i w_i log(1 - e^{l_i - u_i})`` (L, B), which does not depend on ``u``;
    ``exp_upper``/``exp_lower``: for a logit random intercept whose finite bounds are
    within :data:`EXP_SPLIT_BOUND`, their exponentials ``e^{-upper}``, ``e^{lower}``.
    """

    upper: FloatArray
    lower: FloatArray
    sigma: FloatArray
    width: FloatArray | None
    #: a logit random intercept: ``e^{-upper}`` and ``e^{lower}`` (module docstring)
    exp_upper: FloatArray | None = None
    exp_lower: FloatArray | None = None

    def columns(self, index: IntArray) -> _BlockRows:
        """The draws ``index`` (all of them: this block itself)."""
        if index.size == self.sigma.size:
            return self

        def pick(values: FloatArray | None) -> FloatArray | None:
            return None if values is None else values[:, index]

        return _BlockRows(
            self.upper[:, index],
            self.lower[:, index],
            self.sigma[index],
            pick(self.width),
            pick(self.exp_upper),
            pick(self.exp_lower),
        )


def _logistic_core(
    link: Link,
    e_u: FloatArray,
    e_l: FloatArray,
    bounds: Callable[[], tuple[FloatArray, FloatArray]],
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""``log P - log(1 - e^{l - u})``, ``d log P / d eta`` and ``-d^2 log P / d eta^2``, logit.

    ``P = F(u) S(l) (1 - e^{l - u})`` (``S = 1 - F``; module docstring), and in ``eta``
    only the first two factors move: with ``e_u = e^{-u}`` and ``e_l = e^{l}`` (given;
    overwritten), ``F(u) = 1 / (1 + e_u)``, ``S(u) = e_u F(u)``, ``S(l) = 1 / (1 + e_l)``,
    ``F(l) = e_l S(l)``, ``d log P / d eta = F(u) - S(l)`` and
    ``-d^2 log P / d eta^2 = F(u) S(u) + F(l) S(l)`` (as
    :func:`_logistic_eta_derivatives`, one ``log`` per row and draw).  Entries where
    ``F(u) S(l)`` underflows or an ``exp`` overflowed take
    :func:`_logistic_eta_derivatives` at the bounds ``bounds()`` (``upper``, ``lower``).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        F_u = e_u + 1.0
        np.divide(1.0, F_u, out=F_u)
        S_u = np.multiply(e_u, F_u, out=e_u)
        S_l = e_l + 1.0
        np.divide(1.0, S_l, out=S_l)
        F_l = np.multiply(e_l, S_l, out=e_l)
        d1 = F_u - S_l
        d2 = F_u * S_u
        F_l *= S_l
        d2 += F_l
        core = np.multiply(F_u, S_l, out=F_u)
        bad = ~((core > LOGISTIC_SAFE) & np.isfinite(d2))
        np.log(core, out=core)
    if bad.any():
        upper, lower = (values[bad] for values in bounds())
        log_p, d1[bad], curvature = _logistic_eta_derivatives(link, upper, lower)
        d2[bad] = -curvature
        core[bad] = log_p - log1mexp(upper - lower)
    return core, d1, d2


def _logistic_eta_derivatives(
    link: Link, upper: FloatArray, lower: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    r"""``log P`` and its first two derivatives in ``eta`` for the logistic link.

    With ``u = theta_y - eta``, ``l = theta_{y-1} - eta`` and ``f = F (1 - F)``,
    ``f(u) - f(l) = (F(u) - F(l)) (1 - F(u) - F(l))``, so

    .. math::

        \frac{d \log P}{d\eta} = F(u) + F(l) - 1, \qquad
        \frac{d^2 \log P}{d\eta^2} = -\{F(u) S(u) + F(l) S(l)\}

    (``S = 1 - F``): no division by ``P`` and nothing cancels, from the halves of
    :class:`~ordstats.families.cumulative.likelihood.LogisticHalves`.  Entries where a
    bound overflows its ``exp`` or ``P`` underflows take :func:`interval_derivatives`.
    """
    h = LogisticHalves.at(upper, lower)
    log_p = h.log_prob(link, upper, lower)
    d1 = h.F_u + h.F_l
    d1 -= 1.0
    d2 = h.F_u * h.S_u
    d2 += h.F_l * h.S_l
    np.negative(d2, out=d2)
    bad = ~((h.prob > LOGISTIC_SAFE) & np.isfinite(d1) & np.isfinite(d2))
    if bad.any():
        d = interval_derivatives(link, upper[bad], lower[bad])
        d1[bad] = -(d.d_upper + d.d_lower)
        d2[bad] = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower
    return log_p, d1, d2
