r"""Profile likelihood: curves and confidence intervals for single parameters.

For parameter :math:`\psi` with the others :math:`\lambda`, the profile
log-likelihood is :math:`\ell_p(\psi) = \max_\lambda \ell(\psi, \lambda)` and the
signed root deviance

.. math:: r(\psi) = \operatorname{sign}(\psi - \hat\psi)\sqrt{2\{\ell(\hat\theta) - \ell_p(\psi)\}}

is approximately standard normal at the true value (Barndorff-Nielsen & Cox
1994, ch. 3).  The profile interval at level ``1 - alpha`` is
:math:`\{\psi : |r(\psi)| \le z_{1 - \alpha/2}\}`; unlike the Wald interval it
follows the shape of the likelihood and is invariant to reparametrisation.

Each :math:`\ell_p(\psi)` is a Newton fit with :math:`\psi` fixed, started from
the nearest point already profiled and moved along the first-order path
:math:`d\hat\lambda/d\psi = -H_{\lambda\lambda}^{-1} H_{\lambda\psi}`; between two
profiled points it is started from both and the higher maximum is kept, since
the constrained likelihood can have two local maxima (the profile then jumps
where the higher one's branch ends, and an interval end can lie at the jump).  The ends
of the interval are the roots of :math:`r(\psi) = \pm z`, bracketed by
stepping out from :math:`\hat\psi` in units of its standard error and found by
Newton's method safeguarded by bisection, with :math:`dr/d\psi = -U_\psi / r`
(:math:`U_\psi`, the score of :math:`\psi` at the constrained optimum, is
:math:`d\ell_p/d\psi`).  R's ``confint.clm`` interpolates a spline through a grid of
such fits instead, and profiles only the location and scale parameters; here
thresholds are profiled too.
"""

from __future__ import annotations

import bisect
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray
from ordstats.core.links.flexible import FlexibleLink
from ordstats.core.solver import NewtonOptions, newton
from ordstats.core.threads import numeric_threads
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    OrdstatsWarning,
    is_real_number,
    user_stacklevel,
)
from ordstats.families.problem import FamilyEvaluation
from ordstats.families.shifted import ShiftedEvaluation
from ordstats.results import figures
from ordstats.results.arguments import normal_quantile, parameter_index
from ordstats.results.state import FittedState

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: The negative log-likelihood with gradient and Hessian at a parameter vector.
Evaluate = Callable[[FloatArray], FamilyEvaluation]

__all__ = [
    "ParameterProfile",
    "ProfileMethods",
    "plot_profile",
    "profile_conf_int",
    "profile_curve",
]

#: A deviance standing in for "outside the parameter space" (log-likelihood -inf),
#: so that root finding sees a finite, very large value.
_OUTSIDE = 1e12
#: How far below the cut-off ``z`` the signed root at the last feasible value may be
#: for that value to count as the interval's end (the profile falls steeply there).
_EDGE_TOL = 0.05
#: Bracketing: at most this many doublings of the step away from the estimate.
_MAX_EXPANSIONS = 30
#: Bracketing gives up (the interval is open) once a doubling of the distance
#: raises ``|r|`` by less than this: the profile has levelled off.
_FLAT_RISE = 1e-4
#: Continuation: at most this many halvings towards an infeasible start.
_MAX_BISECTIONS = 20
#: Continuation: at most this many steps to reach a value (steps grow by half the
#: distance travelled, so this reaches 2^30 standard errors and more).
_MAX_CONTINUATION = 200
#: A jump of the profile past the cut-off ends the interval when converged fits on
#: both sides of it are at most this many standard errors apart.
_JUMP_WIDTH = 1e-4
#: How near the edge of a bounded parameter's domain (in standard errors, or units of
#: the edge) the profile is evaluated to tell whether it reaches the cut-off before it.
_EDGE_STEP = 1e-8
#: Root finding for the interval ends: tolerance on r and on the bracket width.
_ROOT_TOL = 1e-10
_MAX_ROOT_STEPS = 100


@dataclass(frozen=True)
class _Point:
    """One profiled value: the constrained optimum and its first-order path."""

    value: float
    llf: float
    params: FloatArray
    slope: FloatArray  # d(params) / d(value) at this point
    score: float  # d llf_p / d value: the profiled parameter's score (envelope theorem)
    #: whether the constrained fit converged (else ``llf`` is only a lower bound)
    converged: bool = True


class _FixedObjective:
    """The negative log-likelihood restricted to all parameters but one."""

    __slots__ = ("_ev", "_free", "nll")

    def __init__(self, evaluation: FamilyEvaluation, free: np.ndarray) -> None:
        self._ev = evaluation
        self._free = free
        self.nll = evaluation.nll

    @property
    def gradient(self) -> FloatArray:
        return self._ev.gradient[self._free]

    @property
    def hessian(self) -> FloatArray:
        return self._ev.hessian[np.ix_(self._free, self._free)]


class _ScaledEvaluation:
    """An evaluation in rescaled parameters ``u = p / d`` (``d = 1`` but for rescaled columns).

    ``grad_u = D grad_p`` and ``H_u = D H_p D``.  For a model fitted in a
    centred/rescaled basis (:class:`~ordstats.families.shifted.ShiftedEvaluation`,
    ``q = T^{-1} p``) both come from the internal evaluation through ``M = T^{-1} D``:
    with ``d = 1 / s`` for a column the basis scaled by ``s``, its slope is counted
    per standard deviation of the column, so that a predictor like ``x * 1e200``
    (whose ``H_p`` overflows, and whose slope 1e-200 is below every tolerance) is
    profiled as accurately as ``x``.
    """

    def __init__(self, evaluation: FamilyEvaluation, units: FloatArray, mapping: Any) -> None:
        self._ev = evaluation
        self._units = units
        self._mapping = mapping  # M = T^{-1} D for a shifted evaluation, else None
        self.nll = evaluation.nll

    @cached_property
    def gradient(self) -> FloatArray:
        if self._mapping is not None:
            return self._mapping.T @ self._ev.internal.gradient  # type: ignore[attr-defined]
        return self._units * self._ev.gradient

    @cached_property
    def hessian(self) -> FloatArray:
        if self._mapping is not None:
            inner = self._ev.internal.hessian  # type: ignore[attr-defined]
            return self._mapping.T @ inner @ self._mapping
        return self._units[:, None] * self._ev.hessian * self._units[None, :]


def _in_units(evaluate: Evaluate, units: FloatArray) -> Callable[[FloatArray], Any]:
    """``evaluate`` as a function of ``u = p / units`` (see :class:`_ScaledEvaluation`)."""
    mappings: dict[int, FloatArray] = {}

    def scaled(u: FloatArray) -> _ScaledEvaluation:
        evaluation = evaluate(u * units)
        mapping = None
        if isinstance(evaluation, ShiftedEvaluation):
            key = id(evaluation.basis)
            if key not in mappings:  # columns T^{-1} (d_i e_i)
                basis = evaluation.basis
                mappings[key] = np.column_stack(
                    [basis.to_internal(column) for column in np.diag(units)]
                )
            mapping = mappings[key]
        return _ScaledEvaluation(evaluation, units, mapping)

    return scaled


def _units(evaluate: Evaluate, estimates: FloatArray) -> FloatArray:
    """The unit ``d`` of each parameter: ``1 / s`` for a column rescaled by ``s``, else 1."""
    units = np.ones(estimates.size)
    evaluation = evaluate(estimates)
    if isinstance(evaluation, ShiftedEvaluation):
        basis = evaluation.basis
        units[basis.beta] = 1.0 / basis.scale
    return units


def _path_slope(hessian: FloatArray, index: int, free: np.ndarray) -> FloatArray:
    """``d params / d psi`` along the profile: ``-H_ll^{-1} H_l,psi`` (1 for psi)."""
    slope = np.zeros(hessian.shape[0])
    slope[index] = 1.0
    if free.size:
        try:
            slope[free] = -np.linalg.solve(hessian[np.ix_(free, free)], hessian[free, index])
        except np.linalg.LinAlgError:
            pass
    return slope if np.all(np.isfinite(slope)) else np.eye(hessian.shape[0])[index]


class ParameterProfile:
    """The profile log-likelihood of one parameter, evaluated on demand.

    Parameters
    ----------
    evaluate : callable
        The fitted model's negative log-likelihood with gradient and Hessian
        at a parameter vector (any family, rows in memory or read in chunks:
        ``model.evaluator.evaluate``).
    estimates : ndarray
        Maximum likelihood estimates.
    index : int
        Position of the profiled parameter.
    scale : float
        Typical step (the standard error of the parameter).
    options : NewtonOptions, optional
        Settings of the constrained fits.
    bounds : (float, float), optional
        The parameter's domain (open ends; default the real line), such as
        Aranda-Ordaz's ``lambda > 0``: where the profile stays above the cut-off
        up to an edge, the interval ends at the edge.
    """

    def __init__(
        self,
        evaluate: Evaluate,
        estimates: FloatArray,
        index: int,
        scale: float,
        options: NewtonOptions | None = None,
        bounds: tuple[float, float] = (-np.inf, np.inf),
    ) -> None:
        self.evaluate = evaluate
        self.index = index
        self.free = np.delete(np.arange(estimates.size), index)
        self.options = options or NewtonOptions()
        top = evaluate(estimates)
        self.estimate = float(estimates[index])
        self.llf_max = -top.nll
        self.scale = scale if np.isfinite(scale) and scale > 0 else max(1.0, abs(self.estimate))
        self.n_failed = 0
        #: where the constrained fits could not go further before the profile fell to
        #: the cut-off (an interval end there is open), if anywhere
        self.stopped_at: float | None = None
        #: where the profile falls past the cut-off in a jump (the interval ends there)
        self.jump_at: float | None = None
        self.bounds = bounds
        #: the edges of the domain that an interval end was put at (the profile stays
        #: above the cut-off up to them), by side
        self.at_edge: dict[int, float] = {}
        slope = _path_slope(top.hessian, index, self.free)
        self._mle = _Point(self.estimate, self.llf_max, estimates.copy(), slope, 0.0)
        self._points = [self._mle]

    # -- constrained fits -----------------------------------------------------

    def _fit_from(self, value: float, start: FloatArray) -> _Point | None:
        full = start.copy()
        full[self.index] = value

        def objective(x_free: FloatArray) -> _FixedObjective:
            full[self.free] = x_free
            return _FixedObjective(self.evaluate(full.copy()), self.free)

        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            if not np.isfinite(objective(start[self.free]).nll):
                return None
            try:
                solution = newton(objective, start[self.free], self.options)
            except OrdstatsError:  # the Hessian overflowed on the way: no point from here
                self.n_failed += 1
                return None
        if solution.code not in (0, 1):
            self.n_failed += 1
            if solution.code == 3 and solution.n_iter == 0:
                # not one step from this start decreased the objective: no profile point
                # (the caller tries another start, then a nearer value)
                return None
        params = start.copy()
        params[self.index] = value
        params[self.free] = solution.x
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            ev = self.evaluate(params)
            slope = _path_slope(ev.hessian, self.index, self.free)
        return _Point(
            value,
            -ev.nll,
            params,
            slope,
            float(-ev.gradient[self.index]),
            converged=solution.code in (0, 1),
        )

    def _nearest(self, value: float) -> _Point:
        values = [p.value for p in self._points]
        pos = bisect.bisect_left(values, value)
        near = [p for p in self._points[max(pos - 1, 0) : pos + 1]]
        return min(near, key=lambda p: abs(p.value - value))

    def _insert(self, point: _Point) -> _Point:
        values = [p.value for p in self._points]
        self._points.insert(bisect.bisect_left(values, point.value), point)
        return point

    def _fit_near(self, near: _Point, value: float) -> _Point | None:
        """The constrained fit at ``value`` from ``near`` (moved along its path, then as is)."""
        with np.errstate(over="ignore", invalid="ignore"):  # a diverging fit's steep path
            moved = near.params + (value - near.value) * near.slope
        for start in (moved, near.params):
            if not np.all(np.isfinite(start)):
                continue
            found = self._fit_from(value, start)
            if found is not None:
                return found
        return None

    def _best_fit(self, near: _Point, value: float) -> _Point | None:
        """The higher constrained maximum at ``value`` from ``near`` and the other neighbour.

        The constrained likelihood can have two local maxima, each followed by a
        branch of constrained fits; a fit goes to the branch of its start.  Between
        converged points already profiled on both sides (as in root finding) it
        is started from both, and the profile being the maximum, the higher fit
        is kept.
        """
        values = [p.value for p in self._points]
        pos = bisect.bisect_left(values, value)
        found = self._fit_near(near, value)
        for other in self._points[max(pos - 1, 0) : pos + 1]:
            if other is near or not (near.converged and other.converged):
                continue
            alternative = self._fit_near(other, value)
            if alternative is not None and (found is None or alternative.llf > found.llf):
                found = alternative
        return found

    def _step_towards(self, near: _Point, value: float) -> _Point | None:
        """Fit at ``value``, or nearer ``near`` if no start is feasible there.

        The way from ``near`` is halved until a start is feasible.  Where none
        is, the branch of constrained optima through ``near`` ends before
        ``value``, and the fit at ``value`` is started from the estimate instead.
        """
        target = value
        for _ in range(_MAX_BISECTIONS):
            found = self._best_fit(near, target)
            if found is not None:
                return self._insert(found)
            target = near.value + 0.5 * (target - near.value)
        found = None if near is self._mle else self._fit_near(self._mle, value)
        return None if found is None else self._insert(found)

    def _reach(self, near: _Point) -> float:
        """How far the profile may advance from ``near`` in one constrained fit.

        Half a standard error, or half the distance already travelled from the
        estimate: a longer jump can land the Newton fit on another local optimum
        of the constrained likelihood (a scale effect trading off against the
        profiled location effect), and the profile would follow that branch.
        """
        return 0.5 * max(self.scale, abs(near.value - self.estimate))

    def point(self, value: float) -> _Point | None:
        """Return the constrained optimum at ``value`` (None outside the parameter space).

        Continuation: the profile advances from the nearest point already
        profiled in steps of at most :meth:`_reach`, and in smaller steps when a
        start is not feasible.
        """
        for _ in range(_MAX_CONTINUATION):
            near = self._nearest(value)
            if near.value == value:
                return near
            reach = self._reach(near)
            target = (
                value
                if abs(value - near.value) <= reach
                else (near.value + np.sign(value - near.value) * reach)
            )
            if self._step_towards(near, target) is None:
                return None
        return None

    def llf(self, value: float) -> float:
        """Profile log-likelihood at ``value`` (``-inf`` outside the parameter space)."""
        found = self.point(value)
        return -np.inf if found is None else found.llf

    def signed_root(self, value: float) -> float:
        """``sign(value - estimate) sqrt(2 (llf_max - llf_p(value)))``."""
        deviance = 2.0 * (self.llf_max - self.llf(value))
        deviance = min(max(deviance, 0.0), _OUTSIDE) if np.isfinite(deviance) else _OUTSIDE
        return float(np.sign(value - self.estimate) * np.sqrt(deviance))

    # -- interval ends --------------------------------------------------------

    def _bracket(self, z: float, side: int) -> tuple[float, float] | None:
        """Values ``(inside, outside)`` with ``|r| < z`` and ``|r| >= z`` on one side."""
        inside, distance, previous = self.estimate, z * self.scale, 0.0
        edge = self.edge(side)
        for step in range(_MAX_EXPANSIONS):
            trial = self.estimate + side * distance
            beyond = side * (trial - edge) >= 0
            trial = edge if beyond else trial
            root = side * self.signed_root(trial)
            if root >= z:
                return inside, trial
            if beyond:  # the profile stays above the cut-off up to the domain's edge
                self.at_edge[side] = self.bounds[(side + 1) // 2]
                return None
            if step >= 3 and root - previous < _FLAT_RISE:
                return None
            inside, distance, previous = trial, 2.0 * distance, root
        return None

    def edge(self, side: int) -> float:
        """The value nearest the domain's edge on one side that is profiled (``side * inf``)."""
        bound = self.bounds[(side + 1) // 2]
        if not np.isfinite(bound):
            return side * np.inf
        return bound - side * _EDGE_STEP * max(self.scale, abs(bound))

    def limit(self, z: float, side: int) -> float:
        """Return the value where ``r = side * z``.

        ``side * inf`` if never reached; the domain's edge if the profile stays
        above the cut-off up to it (recorded in :attr:`at_edge`).
        """
        bracket = self._bracket(z, side)
        if bracket is None:
            return self.at_edge.get(side, side * np.inf)
        return self._root(z, side, *bracket)

    def _root(self, z: float, side: int, inside: float, outside: float) -> float:
        """Safeguarded Newton for ``side * r(v) = z`` inside a bracket.

        ``dr/dv = -score / r`` (``r^2 = 2(llf_max - llf_p)`` and ``dllf_p/dv`` is
        the score of the fixed parameter at the constrained optimum), so each
        profiled point gives the Newton step for free; steps that leave the
        bracket are replaced by bisection.
        """
        # start from the bracket end nearer the root (both are profiled already)
        nearer_inside = abs(side * self.signed_root(inside) - z) < abs(
            side * self.signed_root(outside) - z
        )
        value = inside if nearer_inside and inside != self.estimate else outside
        for _ in range(_MAX_ROOT_STEPS):
            point = self.point(value)
            excess = side * self.signed_root(value) - z
            if excess < 0:
                inside = value
            else:
                outside = value
            if abs(excess) < _ROOT_TOL or abs(outside - inside) <= _ROOT_TOL * max(1.0, abs(value)):
                break
            root = excess + z  # |r| on this side
            step = np.nan
            if point is not None and root > 0 and point.score != 0.0:
                step = value + excess * root / point.score  # f' = side r' = -score / |r|
            low, high = sorted((inside, outside))
            value = step if low < step < high else 0.5 * (inside + outside)
        return self._settle(z, side, value, inside)

    def _settle(self, z: float, side: int, value: float, inside: float) -> float:
        """The interval end from where root finding stopped (``side * inf`` if not known)."""
        point = self.point(value)
        if point is not None and point.converged:
            return value
        if point is not None:
            jump = self._jump(z, side)
            if jump is not None:
                self.jump_at = jump
                return jump
            # the constrained fit stopped early: its log-likelihood is only a lower
            # bound, so the profile may stay above the cut-off here (R gives NA)
            self.stopped_at = value
            return side * np.inf
        # the constrained fits fail beyond ``inside``; where the profile falls to
        # the cut-off as it nears that edge (thresholds about to cross), the end
        # is there; where it is still above the cut-off, it is not known
        if side * self.signed_root(inside) >= z - _EDGE_TOL:
            return inside
        self.stopped_at = inside
        return side * np.inf

    def _jump(self, z: float, side: int) -> float | None:
        """Where the profile falls past the cut-off in a jump on one side, if it does.

        The first converged constrained fit with ``side * r >= z`` going out from
        the estimate ends the interval when the converged fit before it, within
        :data:`_JUMP_WIDTH` standard errors, has ``side * r < z``: a branch of
        constrained optima ends between them (its fits stop early as they near
        its end, where a scale effect runs off to infinity) and the profile
        drops to another branch.  Non-converged fits between them give only
        lower bounds of the profile and do not decide the end.
        """
        points = self._points if side > 0 else self._points[::-1]
        previous: _Point | None = None
        for point in points:
            if side * (point.value - self.estimate) < 0 or not point.converged:
                continue
            if side * self.signed_root(point.value) >= z:
                if previous is None or abs(point.value - previous.value) > _JUMP_WIDTH * self.scale:
                    return None
                return point.value
            previous = point
        return None

    def evaluated(self) -> list[_Point]:
        """All points profiled so far, in increasing order of the parameter."""
        return list(self._points)


def _warn_profile(
    profile: ParameterProfile,
    name: str,
    ends: Sequence[float],
    unit: float = 1.0,
) -> None:
    """One warning: an end at the domain's edge, an open end, a jump, or failed fits.

    ``unit`` converts the profile's values to the parameter's (see :func:`_units`).
    """
    if profile.at_edge:
        edges = " and ".join(f"{edge * unit:.6g}" for edge in profile.at_edge.values())
        warnings.warn(
            f"the profile likelihood of {name!r} stays above the cut-off up to the edge of "
            f"its domain, so its interval ends there, at {edges} (the model's limit there "
            "is within the confidence region)",
            OrdstatsWarning,
            stacklevel=user_stacklevel(),
        )
    elif profile.stopped_at is not None:
        warnings.warn(
            f"the profile likelihood of {name!r} could not be followed beyond "
            f"{profile.stopped_at * unit:.6g} (the constrained fits stop early there) before "
            "reaching the cut-off, so its interval is open on that side",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    elif not all(np.isfinite(ends)):
        warnings.warn(
            f"the profile likelihood of {name!r} levels off before reaching the cut-off on "
            "one side, so its interval is unbounded there (separation or a flat likelihood)",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    elif profile.jump_at is not None:
        warnings.warn(
            f"the profile likelihood of {name!r} falls past the cut-off in a jump at "
            f"{profile.jump_at * unit:.6g} (one branch of constrained optima ends there, its fits "
            "stopping early as they near the end), so its interval ends at the jump",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    elif profile.n_failed:
        warnings.warn(
            f"{profile.n_failed} constrained fits in the profile of {name!r} stopped before "
            "converging; the profile may be inaccurate",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _parameter_profile(
    scaled: Callable[[FloatArray], Any],
    estimates: FloatArray,
    units: FloatArray,
    scales: FloatArray,
    index: int,
    name: str,
    bounds: Mapping[str, tuple[float, float]] | None,
) -> ParameterProfile:
    """The profile of one parameter in the units of :func:`_units` (its domain too)."""
    low, high = (bounds or {}).get(name, (-np.inf, np.inf))
    unit = units[index]
    return ParameterProfile(
        scaled,
        estimates / units,
        index,
        float(scales[index] / unit),
        bounds=(low / unit, high / unit),
    )


def profile_conf_int(
    evaluate: Evaluate,
    estimates: FloatArray,
    names: Sequence[str],
    scales: FloatArray,
    alpha: float = 0.05,
    which: Sequence[str] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Profile-likelihood confidence intervals.

    Parameters
    ----------
    evaluate : callable
        Negative log-likelihood with gradient and Hessian at a parameter vector.
    estimates : ndarray
        Maximum likelihood estimates.
    names : sequence of str
        Parameter names, in the order of ``estimates``.
    scales : ndarray
        Standard errors (step sizes for bracketing the interval ends).
    alpha : float
        One minus the confidence level.
    which : sequence of str, optional
        Parameters to profile (default: all).
    bounds : mapping of str to (float, float), optional
        The domains of parameters that are not free on the real line (open ends):
        an interval whose profile stays above the cut-off up to an edge ends
        there, with a warning.

    Returns
    -------
    pandas.DataFrame
        Columns ``"lower"`` and ``"upper"``, one row per profiled parameter.
    """
    with numeric_threads():  # the likelihood along the path: thin products
        z = normal_quantile(alpha)
        chosen = (
            list(names) if which is None else [which] if isinstance(which, str) else list(which)
        )
        units = _units(evaluate, estimates)
        scaled = _in_units(evaluate, units)
        rows = {}
        for given in chosen:
            index = parameter_index(given, names)
            name = names[index]  # ordstats' name of an R name
            profile = _parameter_profile(scaled, estimates, units, scales, index, name, bounds)
            lower, upper = profile.limit(z, -1), profile.limit(z, +1)
            _warn_profile(profile, name, (lower, upper), units[index])
            rows[name] = (lower * units[index], upper * units[index])
        return pd.DataFrame.from_dict(rows, orient="index", columns=["lower", "upper"])


def profile_curve(
    evaluate: Evaluate,
    estimates: FloatArray,
    names: Sequence[str],
    scales: FloatArray,
    param: str,
    alpha: float = 0.001,
    n_points: int = 31,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Profile one parameter on a grid spanning its ``1 - alpha`` interval.

    Parameters
    ----------
    evaluate, estimates, names, scales
        As in :func:`profile_conf_int`.
    param : str
        The parameter to profile.
    alpha : float
        The grid spans ``|r| <= z_{1 - alpha/2}`` (R's ``profile.clm`` default 0.001).
    n_points : int
        Grid values (evenly spaced; the estimate is added).
    bounds
        As in :func:`profile_conf_int`.

    Returns
    -------
    pandas.DataFrame
        Columns ``"value"``, ``"signed_root"`` (``r``), ``"llf"`` (profile
        log-likelihood) and the re-optimised values of every other parameter;
        ``attrs`` holds ``param``, ``estimate``, ``se``, ``llf_max``.
        ``r`` is close to a straight line of slope ``1/se`` when the Wald
        interval is accurate; curvature shows where it is not.
    """
    with numeric_threads():  # the likelihood along the path: thin products
        z = normal_quantile(alpha)
        if not isinstance(n_points, (int, np.integer)) or n_points < 3:
            raise OrdstatsError(f"n_points must be an integer >= 3; got {n_points!r}")
        index = parameter_index(param, names)
        param = names[index]  # ordstats' name of an R name
        units = _units(evaluate, estimates)
        scaled = _in_units(evaluate, units)
        profile = _parameter_profile(scaled, estimates, units, scales, index, param, bounds)
        ends = [profile.limit(z, side) for side in (-1, +1)]
        finite = [p.value for p in profile.evaluated() if np.isfinite(p.llf)]
        # an end at the domain's edge: the grid stops at the nearest value profiled
        lower = profile.edge(-1) if -1 in profile.at_edge else ends[0]
        upper = profile.edge(+1) if +1 in profile.at_edge else ends[1]
        lower = lower if np.isfinite(lower) else min(finite)
        upper = upper if np.isfinite(upper) else max(finite)
        grid = np.union1d(np.linspace(lower, upper, n_points), [profile.estimate])
        records = []
        others = [n for n in names if n != param]
        for value in grid:
            point = profile.point(float(value))
            params = point.params * units if point is not None else np.full(len(names), np.nan)
            llf = point.llf if point is not None else -np.inf
            records.append(
                [value * units[index], profile.signed_root(float(value)), llf]
                + [params[parameter_index(n, names)] for n in others]
            )
        _warn_profile(profile, param, [end * units[index] for end in ends], units[index])
        frame = pd.DataFrame(records, columns=["value", "signed_root", "llf", *others])
        frame.attrs.update(
            param=param,
            estimate=float(estimates[index]),
            se=float(scales[index]),
            llf_max=profile.llf_max,
        )
        return frame


def plot_profile(
    curve: pd.DataFrame, ax: Axes | None = None, levels: float | Sequence[float] = (0.95, 0.99)
) -> Axes:
    """Plot a profile curve: the signed root ``r`` against the parameter.

    The dashed line is the Wald approximation ``(value - estimate) / se``;
    horizontal lines at ``+-z`` mark where the profile intervals at ``levels``
    end (read the interval off where the curve crosses them).

    Parameters
    ----------
    curve : pandas.DataFrame
        From :func:`profile_curve` or ``OrdinalResults.profile``.
    ax : matplotlib Axes, optional
        Drawn on a new figure if omitted.
    levels : float or sequence of float
        Confidence levels to mark, each strictly between 0 and 1.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if (
        not isinstance(curve, pd.DataFrame)
        or "signed_root" not in curve.columns
        or "param" not in curve.attrs
    ):
        raise OrdstatsError("plot_profile needs the DataFrame returned by profile()")
    quantiles = _level_quantiles(levels)
    ax = figures.axes(ax)
    attrs = curve.attrs
    ax.plot(curve["value"], curve["signed_root"], color="C0", label="profile")
    wald = (curve["value"] - attrs["estimate"]) / attrs["se"]
    ax.plot(curve["value"], wald, color="C1", linestyle="--", label="Wald")
    for z in quantiles:
        for sign in (-1, 1):
            ax.axhline(sign * z, color="grey", linewidth=0.8, linestyle=":")
    ax.axvline(attrs["estimate"], color="grey", linewidth=0.8)
    ax.set_xlabel(attrs["param"])
    ax.set_ylabel("signed root deviance r")
    ax.legend()
    return ax


def _level_quantiles(levels: object) -> list[float]:
    """``z_{(1 + level) / 2}`` of each confidence level, or an error on bad ``levels``."""
    given = [levels] if is_real_number(levels) else levels
    if not isinstance(given, (list, tuple, np.ndarray, pd.Series)) or not all(
        is_real_number(level) and 0.0 < float(level) < 1.0 for level in given
    ):
        raise OrdstatsError(
            f"levels must be confidence levels strictly between 0 and 1, e.g. (0.95, 0.99); "
            f"got {levels!r:.60}"
        )
    return [float(stats.norm.ppf(0.5 + float(level) / 2.0)) for level in given]


class ProfileMethods(FittedState):
    """Profile-likelihood curves and intervals."""

    def _profile_scales(self) -> np.ndarray:
        # standard_errors(): a variance of a coefficient of x * 1e200 underflows
        return np.asarray(self.nonrobust_covariance.standard_errors())

    def _profile_bounds(self) -> dict[str, tuple[float, float]]:
        """The domains of parameters not free on the real line: a flexible link's lambda."""
        link = self.model.link
        if isinstance(link, FlexibleLink) and "lambda" in self.params.index:
            return {"lambda": (link.lambda_lower, np.inf)}
        return {}

    def _profile_conf_int(self, alpha: float, which: Sequence[str] | None) -> pd.DataFrame:

        self._check_profilable()
        return profile_conf_int(
            self.model.evaluator.evaluate,
            self.params.to_numpy(),
            list(self.params.index),
            self._profile_scales(),
            alpha,
            which,
            bounds=self._profile_bounds(),
        )

    def _check_profilable(self) -> None:
        if self.nonrobust_covariance.singular:
            raise OrdstatsError(
                "cannot profile a fit with a singular Hessian: the parameters are not "
                "identified (see the fit's warning)"
            )
        if not self.converged and not self.fit_info.diverging:  # separation warns by itself
            warnings.warn(
                "the fit did not converge, so its log-likelihood may not be the maximum and "
                "the profile (measured from it) may be wrong; refit with more iterations "
                "(fit(maxiter=...)) or better start values first",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )

    def profile(self, param: str, alpha: float = 0.001, n_points: int = 31) -> pd.DataFrame:
        """Compute the profile likelihood of one parameter, for plotting or inspection.

        Every other parameter is re-optimised at each value.  The signed root
        ``r = sign(value - estimate) sqrt(2 (llf - llf_profile))`` is close to a
        straight line when the Wald interval is trustworthy; the profile
        interval at level ``1 - a`` is where ``|r| <= z_{1 - a/2}``.

        Parameters
        ----------
        param : str
            Parameter name (thresholds included; R's names too: ``"tempwarm"``).
        alpha : float
            The grid spans the ``1 - alpha`` profile interval.
        n_points : int
            Number of grid values.

        Returns
        -------
        pandas.DataFrame
            ``value``, ``signed_root``, ``llf`` and the other parameters'
            re-optimised values; plot it with :meth:`plot_profile` or
            :func:`ordstats.results.profile.plot_profile`.
        """
        self._check_profilable()
        return profile_curve(
            self.model.evaluator.evaluate,
            self.params.to_numpy(),
            list(self.params.index),
            self._profile_scales(),
            param,
            alpha,
            n_points,
            bounds=self._profile_bounds(),
        )

    def plot_profile(self, param: str, ax: Any = None, alpha: float = 0.001) -> Any:
        """Plot the signed-root profile of ``param`` against the Wald line (matplotlib)."""
        return plot_profile(self.profile(param, alpha=alpha), ax=ax)
