r"""Elastic-net penalties and an exact proximal Newton solver, on arrays only.

The penalised objective (glmnet's and scikit-learn's scaling) is

.. math::

    F(x) = \frac{1}{n_w} f(x) + \sum_j \left( \lambda^{(1)}_j |x_j|
           + \tfrac12 \lambda^{(2)}_j x_j^2 \right),
    \qquad n_w = \textstyle\sum_i w_i,                                   \tag{1}

with ``f`` a smooth negative log-likelihood and per-parameter weights; for
the elastic net with ``alpha`` and ``l1_ratio`` on a coefficient whose column
has scale ``s_j`` (1 without standardisation)

.. math::

    \lambda^{(1)}_j = \alpha\, \rho\, s_j, \qquad
    \lambda^{(2)}_j = \alpha\, (1 - \rho)\, s_j^2,                        \tag{2}

so the penalty is ``alpha * (rho * |s_j b_j| + (1 - rho)/2 * (s_j b_j)^2)``
(glmnet's ``lambda`` is ``alpha`` here, its ``alpha`` is ``rho = l1_ratio``).
Unpenalised parameters (thresholds, intercepts) have both weights zero.

:func:`proximal_newton` minimises (1): at ``x`` it forms the quadratic model
of ``f / n_w`` from the gradient and Hessian, minimises that model plus the
penalty exactly by cyclic coordinate descent (the unpenalised block solved
jointly at each sweep), and searches along the step on the true objective
(Lee, Sun and Saunders 2014, "Proximal Newton-type methods").  It stops when
the KKT conditions hold to ``tol`` (:func:`kkt_violation`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.errors import SpecificationError, is_real_number

BoolArray = npt.NDArray[np.bool_]

__all__ = [
    "ElasticNet",
    "PenalizedResult",
    "SmoothObjective",
    "check_penalty_arguments",
    "kkt_violation",
    "max_penalty",
    "positive_definite",
    "proximal_newton",
    "soft_threshold",
]


class SmoothObjective(Protocol):
    """One evaluation of a smooth objective: value, gradient and Hessian."""

    nll: float

    @property
    def gradient(self) -> FloatArray:  # pragma: no cover - protocol
        """Gradient at the evaluated point."""
        ...

    @property
    def hessian(self) -> FloatArray:  # pragma: no cover - protocol
        """Hessian at the evaluated point."""
        ...


def check_penalty_arguments(alpha: float, l1_ratio: float) -> tuple[float, float]:
    """Validate ``alpha >= 0`` and ``0 <= l1_ratio <= 1`` (finite numbers).

    Raises
    ------
    SpecificationError
        With what to pass instead.
    """
    try:
        if not (is_real_number(alpha) and is_real_number(l1_ratio)):  # alpha=True: a slip
            raise TypeError
        a, r = float(alpha), float(l1_ratio)
    except (TypeError, ValueError):
        raise SpecificationError(
            f"alpha and L1_wt/l1_ratio must be numbers; got {alpha!r} and {l1_ratio!r}"
        ) from None
    if not np.isfinite(a) or a < 0:
        raise SpecificationError(f"alpha must be a finite number >= 0; got {alpha!r}")
    if not np.isfinite(r) or not 0.0 <= r <= 1.0:
        raise SpecificationError(
            f"L1_wt (l1_ratio) must lie in [0, 1] (0: ridge, 1: lasso); got {l1_ratio!r}"
        )
    return a, r


def soft_threshold(z: FloatArray | float, gamma: FloatArray | float) -> FloatArray:
    r"""``S(z, gamma) = sign(z) max(|z| - gamma, 0)``, the prox of ``gamma |.|``."""
    z = np.asarray(z, dtype=float)
    return np.sign(z) * np.maximum(np.abs(z) - gamma, 0.0)


@dataclass(frozen=True)
class ElasticNet:
    r"""Per-parameter elastic-net weights ``lambda^(1)``, ``lambda^(2)`` of eq. (1).

    Attributes
    ----------
    l1, l2 : ndarray, shape (k,)
        Non-negative weights; zero for unpenalised parameters.
    """

    l1: FloatArray
    l2: FloatArray

    @classmethod
    def from_weights(
        cls, alpha: float, l1_ratio: float, weights: FloatArray, scales: FloatArray | None = None
    ) -> ElasticNet:
        r"""Weights (2) from ``alpha``, ``l1_ratio``, penalty factors and column scales.

        Parameters
        ----------
        alpha, l1_ratio : float
        weights : ndarray, shape (k,)
            Penalty factor of each parameter (0: unpenalised; glmnet's
            ``penalty.factor``).
        scales : ndarray, shape (k,), optional
            ``s_j`` (standardisation); default 1.
        """
        a, r = check_penalty_arguments(alpha, l1_ratio)
        w = np.asarray(weights, dtype=float)
        s = np.ones_like(w) if scales is None else np.asarray(scales, dtype=float)
        return cls(l1=a * r * w * s, l2=a * (1.0 - r) * w * s**2)

    def value(self, x: FloatArray) -> float:
        """The penalty ``sum_j l1_j |x_j| + l2_j x_j^2 / 2``."""
        return float(self.l1 @ np.abs(x) + 0.5 * (self.l2 @ (x * x)))


def kkt_violation(gradient: FloatArray, x: FloatArray, penalty: ElasticNet) -> FloatArray:
    r"""Per-parameter violation of the KKT conditions of (1).

    With ``g`` the gradient of ``f / n_w``: ``|g_j + l2_j x_j + l1_j sign(x_j)|``
    where ``x_j != 0``, ``max(|g_j| - l1_j, 0)`` where ``x_j = 0``.
    """
    smooth = gradient + penalty.l2 * x
    nonzero = x != 0
    return np.where(
        nonzero,
        np.abs(smooth + penalty.l1 * np.sign(x)),
        np.maximum(np.abs(smooth) - penalty.l1, 0.0),
    )


def max_penalty(gradient: FloatArray, weights: FloatArray, l1_ratio: float) -> float:
    r"""Smallest ``alpha`` at which every penalised parameter is zero.

    At the fit with every penalised parameter zero (the null fit) the
    gradient ``g`` of ``f / n_w`` in those parameters gives, by the KKT
    conditions, ``alpha_max = max_j |g_j| / (l1_ratio w_j)`` over parameters
    with weight ``w_j > 0`` (glmnet's rule).  For ``l1_ratio = 0`` (ridge) no
    finite ``alpha`` zeroes a slope; as glmnet, ``l1_ratio = 0.001`` is used.
    """
    rho = max(float(l1_ratio), 1e-3)
    w = np.asarray(weights, dtype=float)
    pen = w > 0
    if not pen.any():
        return 0.0
    return float(np.max(np.abs(gradient[pen]) / (rho * w[pen])))


@dataclass(frozen=True)
class PenalizedResult:
    """Outcome of :func:`proximal_newton`.

    Attributes
    ----------
    x : ndarray
    objective : float
        ``F(x)`` of eq. (1).
    evaluation : SmoothObjective
        ``f`` evaluated at ``x`` (unscaled).
    kkt : float
        ``max`` KKT violation at ``x``.
    n_iter : int
    converged : bool
    hessian : ndarray or None
        The (positive definite) Hessian of ``f / n_w`` last used, for a warm
        start of the next fit on a path.
    """

    x: FloatArray
    objective: float
    evaluation: SmoothObjective
    kkt: float
    n_iter: int
    converged: bool
    hessian: FloatArray | None = None


def _coordinate_descent(
    x: FloatArray,
    g: FloatArray,
    H: FloatArray,
    penalty: ElasticNet,
    free: BoolArray,
    tol: float,
    max_sweeps: int = 10_000,
) -> FloatArray:
    r"""Minimise ``g'd + d'H d/2 + P(x + d)`` over ``z = x + d`` (eq. 1's model).

    The unpenalised block ``u`` (thresholds, strongly correlated) is
    eliminated exactly: for given penalised ``v`` the best
    ``d_u = -H_uu^{-1}(g_u + H_uv d_v)``, which leaves the quadratic
    ``gt'd_v + d_v'S d_v/2`` with the Schur complement
    ``S = H_vv - H_vu H_uu^{-1} H_uv`` and ``gt = g_v - H_vu H_uu^{-1} g_u``.
    Each penalised coordinate then has the closed form
    ``v_j = S(S_jj v_j - c_j, l1_j) / (S_jj + l2_j)`` with ``c = gt + S d_v``;
    coordinates that are zero and stay zero are skipped after a full sweep
    until the active set settles (glmnet's active-set cycling).
    """
    fr = np.flatnonzero(free)
    pen = np.flatnonzero(~free)
    z: FloatArray = x.copy()
    if fr.size:
        chol = linalg.cho_factor(H[np.ix_(fr, fr)])
        Huv = H[np.ix_(fr, pen)]
        K = linalg.cho_solve(chol, Huv)  # H_uu^{-1} H_uv
        Ku = linalg.cho_solve(chol, g[fr])
        S = H[np.ix_(pen, pen)] - Huv.T @ K
        gt = g[pen] - Huv.T @ Ku
    else:
        S = H[np.ix_(pen, pen)]
        gt = g[pen]
    v0 = x[pen]
    v = v0.copy()
    c = gt.copy()
    diag = np.maximum(np.diag(S), 1e-12)
    l1 = penalty.l1[pen]
    l2 = penalty.l2[pen]
    rows = [S[j] for j in range(pen.size)]
    active = list(range(pen.size))
    full_sweep = True
    for _ in range(max_sweeps):
        delta_max = 0.0
        for j in active:
            old = v[j]
            arg = diag[j] * old - c[j]
            mag = abs(arg) - l1[j]
            new = (mag if arg > 0 else -mag) / (diag[j] + l2[j]) if mag > 0 else 0.0
            if new != old:
                step = new - old
                v[j] = new
                c += rows[j] * step
                delta_max = max(delta_max, abs(step) * diag[j] ** 0.5)
        if delta_max < tol:
            if full_sweep:
                break
            full_sweep, active = True, list(range(pen.size))
        elif full_sweep:
            full_sweep = False
            active = [j for j in range(pen.size) if v[j] != 0.0]
    z[pen] = v
    if fr.size:
        z[fr] = x[fr] - Ku - K @ (v - v0)
    return z


def proximal_newton(
    objective: Callable[[FloatArray], SmoothObjective],
    x0: FloatArray,
    penalty: ElasticNet,
    n_weight: float,
    *,
    tol: float = 1e-7,
    max_iter: int = 200,
    hessian: FloatArray | None = None,
    evaluation: SmoothObjective | None = None,
) -> PenalizedResult:
    r"""Minimise eq. (1) by proximal Newton steps with a line search.

    The Hessian of ``f / n_w`` is recomputed only when the KKT violation fell
    by less than a factor 5 in the last step (or the line search failed):
    along a warm-started path the previous penalty's Hessian serves for
    several steps, which saves the ``O(n k^2)`` product at each of them.
    After each accepted step the Hessian kept is corrected by the BFGS secant
    update (:func:`_secant_update`, ``O(k^2)``), so a reused Hessian learns
    the curvature along the path: on a 100-point path this cut the proximal
    Newton iterations from about 4 to 3 per penalty.

    Parameters
    ----------
    objective : callable
        ``objective(x)`` returns ``f`` with its gradient and Hessian at ``x``
        (``nll = inf`` outside the domain, e.g. disordered thresholds).
    x0 : ndarray
        Start (feasible).
    penalty : ElasticNet
    n_weight : float
        ``n_w``, the divisor of ``f``.
    tol : float
        Tolerance on the largest KKT violation (:func:`kkt_violation`) on
        the scale of eq. (1).
    max_iter : int
    hessian : ndarray, optional
        A Hessian of ``f / n_w`` to start with (e.g. the previous fit's on a
        path); default: computed at ``x0``.
    evaluation : SmoothObjective, optional
        ``objective(x0)`` when already known (the previous fit's on a path).

    Returns
    -------
    PenalizedResult
    """
    free = (penalty.l1 == 0) & (penalty.l2 == 0)
    x = np.asarray(x0, dtype=float).copy()
    ev = objective(x) if evaluation is None else evaluation
    value = ev.nll / n_weight + penalty.value(x)
    if not np.isfinite(value):
        raise SpecificationError("the starting values of the penalised fit are not feasible")
    H = hessian
    kkt = previous = np.inf
    for it in range(max_iter + 1):
        g = np.asarray(ev.gradient) / n_weight
        kkt = float(np.max(kkt_violation(g, x, penalty), initial=0.0))
        if kkt <= tol or it == max_iter:
            return PenalizedResult(x, value, ev, kkt, it, kkt <= tol, H)
        fresh = H is None or kkt > _REFRESH * previous
        if fresh:
            H = positive_definite(np.asarray(ev.hessian) / n_weight)
        assert H is not None
        previous = kkt
        z = _coordinate_descent(x, g, H, penalty, free, tol=min(1e-2 * kkt, 1e-3) * 1e-2)
        d = z - x
        decrease = float(g @ d) + penalty.value(z) - penalty.value(x)
        step = _line_search(objective, x, d, value, decrease, penalty, n_weight)
        found, trial, ev_t, val_t = step
        if ev_t is None or not found:
            if fresh:
                return PenalizedResult(x, value, ev, kkt, it, False, H)
            H = None  # the reused Hessian was too far off: refresh and retry
            continue
        g_new = np.asarray(ev_t.gradient) / n_weight
        H = _secant_update(H, trial - x, g_new - g)
        x, ev, value = trial, ev_t, val_t
    return PenalizedResult(x, value, ev, kkt, max_iter, False, H)  # pragma: no cover


def _secant_update(H: FloatArray, s: FloatArray, y: FloatArray) -> FloatArray:
    r"""BFGS correction of a reused Hessian so that ``H_new s = y`` (the secant equation).

    ``H_new = H - H s s'H / (s'H s) + y y' / (y's)``; skipped unless ``y's`` is
    clearly positive (``f`` is convex, so ``y's >= 0``), which keeps ``H_new``
    positive definite (Nocedal and Wright 2006, eq. 6.19).
    """
    Hs = H @ s
    sHs = float(s @ Hs)
    ys = float(y @ s)
    if sHs <= 0 or ys <= 1e-10 * sHs:
        return H
    return H - np.outer(Hs, Hs) / sHs + np.outer(y, y) / ys


#: Recompute the Hessian when the KKT violation fell by less than this factor.
_REFRESH = 0.2


def _line_search(
    objective: Callable[[FloatArray], SmoothObjective],
    x: FloatArray,
    d: FloatArray,
    value: float,
    decrease: float,
    penalty: ElasticNet,
    n_weight: float,
) -> tuple[bool, FloatArray, SmoothObjective | None, float]:
    """Armijo backtracking on the true objective (1) along ``d``."""
    t = 1.0
    for _ in range(40):
        trial = x + t * d
        ev_t = objective(trial)
        val_t = ev_t.nll / n_weight + penalty.value(trial)
        slack = 1e-4 * t * min(decrease, 0.0) + 1e-15 * abs(value)
        if np.isfinite(val_t) and val_t <= value + slack:
            return True, trial, ev_t, val_t
        t *= 0.5
    return False, x, None, value


def positive_definite(H: FloatArray) -> FloatArray:
    """``H`` itself if positive definite, else ``H + (|min eigenvalue| + 1e-8) I``."""
    try:
        linalg.cholesky(H)
        return H
    except linalg.LinAlgError:
        low = float(np.linalg.eigvalsh(H)[0])
        return H + (abs(low) + 1e-8) * np.eye(H.shape[0])
