r"""Replicate refits of a survey fit by chord iterations on batched gradients.

Each replicate weight ``w_r`` gives its own pseudo-likelihood, maximised from the
full-sample estimates ``params``.  Replicates are close to the full sample: with
``c_r`` the replicate's total weight over the full sample's, its Hessian is close
to ``c_r H`` (``H`` the full-sample Hessian at ``params``), so the **chord
iteration**

.. math::

    x_{k+1} = x_k - (c_r H)^{-1} g_r(x_k), \qquad x_0 = \text{params},

converges linearly with the rate ``rho = ||I - (c_r H)^{-1} H_r||``, of the order
of one over the square root of the number of PSUs (1/150 to 1/300 at 2,000 PSUs in
``bench/bench_survey.py``).  It needs gradients only: ``H`` is factorised once for
all replicates.  Its first step is the one-step estimate ``params + (c_r H)^{-1} S'w_r``.

**Convergence** is judged as the Newton fit's (``NewtonOptions`` with
``final_hessian=False``): ``max|g_r(x_k)| < grad_tol`` and the step from the
approximate Hessian below ``rel_tol / 10`` (relative to ``max(1, |x|)``), where
the approximation is vouched for by the contraction measured along the way:
every step at most :data:`MAX_CONTRACTION` times the one before.  The exact step
``H_r^{-1} g = (I - M)^{-1} (c_r H)^{-1} g`` with ``||M|| ~ rho <= 1/2`` is then
below ``rel_tol / 5``.  A converged replicate then takes chord steps on while they
contract, to a relative step of :data:`POLISHED` (rounding level): Newton's quadratic
last step leaves its estimates there, and replicate variances compare to ``1e-8``.
A replicate whose steps do not contract that fast, whose gradient is not finite, or
which is not converged after :data:`MAX_CHORD_ITERATIONS` is refitted by Newton's
method by the caller.

**Batched gradients** (:class:`ReplicateGradients`): for a cumulative model
without nominal or scale effects, a block of ``b`` replicates is evaluated in one
pass over the rows, grouped by response level, in blocks of rows x replicates
that stay in the processor's cache; the linear predictors of all ``b`` are one
matrix product ``[X, o, 1] [beta; 1; -theta_k]``.  For the logit link, with
``V = e^{eta - theta_k}``, ``ab = e^{theta_{k-1} - theta_k}`` and
``E = 1 - ab`` (the level's constants),

.. math::

    q = \frac{V + ab}{1 + V}, \qquad
    g_u = \frac{f(u)}{P} = \frac{q}{E}, \qquad
    g_l = -\frac{f(l)}{P} = -\frac{ab}{q E},

(``q`` lies between ``ab`` and 1: a weighted mean of positive terms, so nothing
cancels or overflows), ``g_u = V / (1 + V)`` at the bottom level and ``g_l = -V' /
(1 + V')``, ``V' = e^{theta_{K-2} - eta}``, at the top: one ``exp`` per row and
replicate.  A block where an ``exp`` overflows (``|eta - theta|`` beyond ~700),
and every block of another link, takes the general
:func:`~ordstats.families.cumulative.likelihood.interval_gradients`.  The
gradients equal the one-replicate evaluations to rounding.

**Threads**: the replicates are split into as many groups as the ``threads``
option allows (:func:`ordstats.core.threads.pool_threads`), each group iterated
in its own thread with one BLAS thread (NumPy releases the GIL in the array
operations).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

from ordstats._typing import FloatArray, IntArray
from ordstats.core.linalg import equilibrate
from ordstats.core.links.flexible import FlexibleLink
from ordstats.core.links.standard import Logit
from ordstats.core.threads import pool_threads, single_threaded_call
from ordstats.estimation.draw_densities import rows_by_level
from ordstats.families.cumulative.family import Cumulative
from ordstats.families.cumulative.likelihood import CLMProblem, interval_gradients

__all__ = [
    "MAX_CHORD_ITERATIONS",
    "MAX_CONTRACTION",
    "POLISHED",
    "ChordFactor",
    "ReplicateGradients",
    "chord_refits",
]

#: Rows x replicates of one block of the batched gradient: a few such arrays
#: (256 KB each) stay in the L2 cache.
BLOCK_ELEMENTS = 1 << 15
#: Most replicates evaluated together by one thread.
MAX_BATCH = 64
#: Largest ratio of a chord step to the step before that the iteration accepts.
MAX_CONTRACTION = 0.5
#: Most chord steps before a replicate is handed to Newton's method.
MAX_CHORD_ITERATIONS = 50
#: Relative step (of ``max(1, |x|)``) at which a converged replicate is at rounding
#: level: Newton's quadratic last step ends there, so the chord steps go on until it.
POLISHED = 1e-14


@dataclass(frozen=True)
class _Rows:
    """The rows grouped by response level: ``[x_i, o_i, 1]`` and the replicate weights."""

    X: FloatArray
    weights: FloatArray
    bounds: IntArray
    n_beta: int


class ReplicateGradients:
    """Gradients of a cumulative model's negative log-likelihood under many weightings.

    ``gradients(params, columns)`` returns, for each row ``params[j]``, the
    gradient at ``params[j]`` with the weights ``weights[:, columns[j]]``
    (module docstring).

    Parameters
    ----------
    problem : CLMProblem
        The model's likelihood arrays (every row the model uses).
    weights : ndarray, shape (N, R)
        One column of row weights per replicate.
    rows : ndarray of int, shape (n,)
        The row of ``weights`` of each of the problem's rows.
    """

    def __init__(self, problem: CLMProblem, weights: FloatArray, rows: IntArray) -> None:
        data = problem.data
        self.problem = problem
        self.link = data.link
        self._logit = type(data.link) is Logit
        order, bounds, X = rows_by_level(problem)
        self.rows = _Rows(
            X=X,
            weights=np.take(np.asarray(weights, dtype=float), rows[order], axis=0),
            bounds=bounds,
            n_beta=data.X.shape[1],
        )
        levels = problem.level_designs
        assert levels is not None  # checked by of()
        self.levels = levels

    @staticmethod
    def of(
        family: Any, problem: Any, weights: FloatArray, rows: IntArray
    ) -> ReplicateGradients | None:
        """The batched gradients of a model that has them, else ``None``.

        The cumulative family with a fixed link, no nominal or scale effects,
        no fixed cut-points, exact (uncensored) levels and at most 50 of them
        (:attr:`CLMProblem.level_designs`).  Arguments as the class's.
        """
        if not isinstance(family, Cumulative) or not isinstance(problem, CLMProblem):
            return None
        lay = problem.layout
        if (
            problem.level_designs is None
            or problem.upper_shift is not None
            or lay.n_zeta
            or problem.data.scale_offset is not None
            or lay.n_lambda
            or isinstance(problem.data.link, FlexibleLink)
        ):
            return None
        return ReplicateGradients(problem, weights, rows)

    @property
    def n_replicates(self) -> int:
        """Number of weight columns."""
        return int(self.rows.weights.shape[1])

    def column_totals(self) -> FloatArray:
        """Each replicate's total weight."""
        return np.asarray(self.rows.weights.sum(axis=0), dtype=float)

    def __call__(self, params: FloatArray, columns: IntArray) -> FloatArray:
        """Gradients at ``params`` (shape ``(b, k)``) under the weights ``columns`` (b,)."""
        lay, rows = self.problem.layout, self.rows
        b, K = params.shape[0], self.problem.data.n_levels
        alpha = np.ascontiguousarray(params[:, lay.thresholds].T)
        J1, J2 = self.levels
        upper, lower = J1 @ alpha, J2 @ alpha  # (K, b): each level's cut-points
        upper[-1], lower[0] = np.inf, -np.inf
        sums = _LevelSums(np.zeros((K, b)), np.zeros((K, b)), np.zeros((rows.X.shape[1], b)))
        # [beta; 1]: the linear predictor's coefficients of [x, o] (o with an offset only)
        eta_coef = np.ones((rows.X.shape[1] - 1, b))
        eta_coef[: rows.n_beta] = params[:, lay.beta].T
        block = max(BLOCK_ELEMENTS // b, 1)
        weights = _column_view(rows.weights, columns)
        for k in range(K):
            lo, hi = int(rows.bounds[k]), int(rows.bounds[k + 1])
            if hi > lo:
                level = _Level.at(k, K, eta_coef, upper, lower)
                for start in range(lo, hi, block):
                    stop = min(start + block, hi)
                    self._add_block(level, rows.X[start:stop], weights(start, stop), sums)
        grad = np.empty((b, lay.n_params))
        # minus the log-likelihood's: thresholds J1' S g_u + J2' S g_l, slopes -X' (g_u + g_l)
        grad[:, lay.thresholds] = -(J1.T @ sums.upper + J2.T @ sums.lower).T
        grad[:, lay.beta] = sums.location[: rows.n_beta].T
        bad = np.flatnonzero(~np.all(np.isfinite(upper[:-1]) & np.isfinite(lower[1:]), axis=0))
        grad[bad] = np.nan  # a cut-point not finite: no gradient (the caller refits by Newton)
        return grad

    def _add_block(
        self, level: _Level, X: FloatArray, weights: FloatArray, sums: _LevelSums
    ) -> None:
        """Add one block of rows of one level to the sums (logit, else the general formulas)."""
        if self._logit:
            upper, lower, location = _logit_block(level, X, weights)
            bad = ~(np.isfinite(location).all(axis=0) & np.isfinite(upper) & np.isfinite(lower))
            if not bad.any():
                sums.add(level.k, upper, lower, location)
                return
            good = ~bad
            sums.add(level.k, upper[good], lower[good], location[:, good], good)
            sums.add(level.k, *self._general_block(level, X, weights, bad), bad)
            return
        sums.add(level.k, *self._general_block(level, X, weights, slice(None)))

    def _general_block(
        self, level: _Level, X: FloatArray, weights: FloatArray, columns: Any
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The sums of a block by :func:`interval_gradients` (every link)."""
        eta = X[:, :-1] @ level.eta_coef[:, columns]
        w = weights[:, columns]
        with np.errstate(invalid="ignore", over="ignore"):
            first = interval_gradients(
                self.link, level.upper[columns] - eta, level.lower[columns] - eta
            )
        s_u, s_l = w * first.d_upper, w * first.d_lower
        return s_u.sum(axis=0), s_l.sum(axis=0), X.T @ (s_u + s_l)


@dataclass(frozen=True)
class _LevelSums:
    """Per level ``sum w g_u`` and ``sum w g_l`` (K, b); ``[X, o, 1]' (w (g_u + g_l))``."""

    upper: FloatArray
    lower: FloatArray
    location: FloatArray

    def add(
        self,
        k: int,
        upper: FloatArray,
        lower: FloatArray,
        location: FloatArray,
        columns: Any = slice(None),
    ) -> None:
        self.upper[k, columns] += upper
        self.lower[k, columns] += lower
        self.location[:, columns] += location


@dataclass(frozen=True)
class _Level:
    """One level's constants for a block of replicates (module docstring)."""

    k: int
    top: bool
    bottom: bool
    #: ``[beta; 1; -theta_k]`` (``[-beta; -1; theta_{K-2}]`` at the top): ``[x, o, 1]``
    #: times it is the exponent of ``V`` (the 1 for the offset only with one)
    coef: FloatArray
    eta_coef: FloatArray  # [beta; 1]
    products: FloatArray  # ab = e^{theta_{k-1} - theta_k}
    widths: FloatArray  # E = 1 - ab
    upper: FloatArray  # theta_k (+inf at the top)
    lower: FloatArray  # theta_{k-1} (-inf at the bottom)

    @staticmethod
    def at(k: int, K: int, eta_coef: FloatArray, upper: FloatArray, lower: FloatArray) -> _Level:
        top = k == K - 1
        coef = np.empty((eta_coef.shape[0] + 1, eta_coef.shape[1]))
        if top:
            coef[:-1] = -eta_coef
            coef[-1] = lower[k]
        else:
            coef[:-1] = eta_coef
            coef[-1] = -upper[k]
        with np.errstate(over="ignore", invalid="ignore"):
            difference = lower[k] - upper[k]
            products = np.exp(difference)
            widths = -np.expm1(difference)
        return _Level(k, top, k == 0, coef, eta_coef, products, widths, upper[k], lower[k])


def _logit_block(
    level: _Level, X: FloatArray, weights: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``sum w g_u``, ``sum w g_l`` and ``[x, o, 1]' w (g_u + g_l)`` of a block (logit)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        V = X @ level.coef
        np.exp(V, out=V)
        T = np.add(V, 1.0)
        if level.bottom or level.top:  # g_u = V / (1 + V); g_l = -V' / (1 + V')
            np.divide(V, T, out=V)
            V *= weights
            location = X.T @ V
            total = location[-1].copy()
            if level.top:
                np.negative(location, out=location)
                return np.zeros_like(total), -total, location
            return total, np.zeros_like(total), location
        ab, E = level.products, level.widths
        q = np.add(V, ab, out=V)
        q /= T  # q = (V + ab) / (1 + V)
        np.divide(ab, q, out=T)  # ab / q
        upper = np.einsum("ij,ij->j", weights, q) / E
        lower = -np.einsum("ij,ij->j", weights, T) / E
        q -= T
        q *= weights
        location = X.T @ q
        location /= E
        bad = ~(E > 0)
        if bad.any():  # disordered cut-points: no probability, no gradient
            upper[bad] = np.nan
    return upper, lower, location


def _column_view(weights: FloatArray, columns: IntArray) -> Callable[[int, int], FloatArray]:
    """``weights[start:stop, columns]``: a view when the columns are a contiguous run."""
    columns = np.asarray(columns)
    first = int(columns[0]) if columns.size else 0
    if columns.size and np.array_equal(columns, np.arange(first, first + columns.size)):
        run = slice(first, first + columns.size)
        return lambda start, stop: weights[start:stop, run]
    return lambda start, stop: weights[start:stop][:, columns]


class ChordFactor:
    """The full-sample Hessian factorised once: solves ``(c H) s = g`` for many ``g``.

    Cholesky of the equilibrated Hessian (as the Newton solver's steps).

    Parameters
    ----------
    hessian : ndarray, shape (k, k)

    Raises
    ------
    numpy.linalg.LinAlgError
        If the Hessian is not positive definite.
    """

    def __init__(self, hessian: FloatArray) -> None:
        self.scale = equilibrate(hessian)
        self.factor = linalg.cho_factor(hessian / np.outer(self.scale, self.scale))

    def steps(self, gradients: FloatArray, ratios: FloatArray) -> FloatArray:
        """``(ratios_j H)^{-1} gradients_j`` for each row ``j``."""
        rhs = (gradients / self.scale).T
        return (linalg.cho_solve(self.factor, rhs).T / self.scale) / ratios[:, None]


@dataclass
class _Progress:
    """Count of replicates done, printed by ``show`` (thread-safe)."""

    show: Callable[[int], None] | None
    done: int = 0

    def __post_init__(self) -> None:
        self.lock = threading.Lock()

    def add(self, count: int) -> None:
        if not count or self.show is None:
            return
        with self.lock:
            self.done += count
            self.show(self.done)


def chord_refits(
    gradients: ReplicateGradients,
    factor: ChordFactor,
    params: FloatArray,
    ratios: FloatArray,
    grad_tol: float,
    rel_tol: float,
    show: Callable[[int], None] | None = None,
) -> tuple[FloatArray, np.ndarray]:
    """Every replicate's estimates by the chord iteration (module docstring).

    Parameters
    ----------
    gradients : ReplicateGradients
    factor : ChordFactor
        The full-sample Hessian at ``params``.
    params : ndarray, shape (k,)
        The full-sample estimates (the start).
    ratios : ndarray, shape (R,)
        Each replicate's total weight over the full sample's.
    grad_tol, rel_tol : float
        The Newton fit's tolerances.
    show : callable, optional
        Called with the number of replicates done so far.

    Returns
    -------
    (ndarray, ndarray of bool)
        The estimates (R, k) and which replicates converged (the others are to
        be refitted by Newton's method).
    """
    n_rep = gradients.n_replicates
    threads = max(1, min(pool_threads(), n_rep))
    # batches of equal size, at most MAX_BATCH, a whole number per thread
    n_batches = threads * -(-n_rep // (threads * MAX_BATCH))
    batches = [b for b in np.array_split(np.arange(n_rep), n_batches) if b.size]
    progress = _Progress(show)

    def run(columns: IntArray) -> tuple[FloatArray, np.ndarray]:
        return _chord_batch(gradients, factor, params, ratios, columns, grad_tol, rel_tol, progress)

    if threads == 1:
        results = [run(columns) for columns in batches]
    else:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            results = list(pool.map(lambda c: single_threaded_call(run, c), batches))
    estimates = np.vstack([r[0] for r in results])
    converged = np.concatenate([r[1] for r in results])
    return estimates, converged


def _chord_batch(
    gradients: ReplicateGradients,
    factor: ChordFactor,
    params: FloatArray,
    ratios: FloatArray,
    columns: IntArray,
    grad_tol: float,
    rel_tol: float,
    progress: _Progress,
) -> tuple[FloatArray, np.ndarray]:
    """The chord iteration for the replicates ``columns`` together."""
    x = np.tile(params, (columns.size, 1))
    converged = np.zeros(columns.size, dtype=bool)
    previous = np.full(columns.size, np.inf)  # the last relative step
    contracted = np.zeros(columns.size, dtype=bool)  # a step's contraction was measured
    active = np.arange(columns.size)
    for _ in range(MAX_CHORD_ITERATIONS):
        if not active.size:
            break
        at = x[active]
        g = gradients(at, columns[active])
        with np.errstate(invalid="ignore", over="ignore"):
            steps = factor.steps(g, ratios[columns[active]])
            relative = np.max(np.abs(steps) / np.maximum(1.0, np.abs(at)), axis=1)
        finite = np.all(np.isfinite(steps), axis=1) & np.isfinite(relative)
        contracting = finite & (relative <= MAX_CONTRACTION * previous[active])
        polishing = converged[active]
        met = (
            finite
            & contracted[active]
            & (np.max(np.abs(g), axis=1) < grad_tol)
            & (relative <= 0.1 * rel_tol)
        )
        converged[active] |= met
        # converged: on to rounding level while the steps contract (as Newton's last steps)
        going = np.where(polishing | met, contracting & (relative > POLISHED), contracting)
        progress.add(int(np.sum(converged[active] & ~going)))
        moving = active[going]
        contracted[moving] = np.isfinite(previous[moving])
        x[moving] = at[going] - steps[going]
        previous[moving] = relative[going]
        active = moving
    progress.add(int(np.sum(converged[active])))
    return x, converged
