"""Damped Newton-Raphson for smooth minimisation, knowing nothing of statistics.

The loop follows R's ``ordinal:::clm_fit_NR`` (Christensen 2019, sec. 3)::

    evaluate f, g, H at x
    repeat:
        converged if max|g| < grad_tol and max|step| < rel_tol
        factor H by Cholesky; if H is not positive definite, add
            (|min eigenvalue| + 1) to its diagonal (at most max_modifications in a row)
        step = H^{-1} g; try x - step, halving the step while f increases
    stop with a code when the iteration or halving budget runs out

Once ``max|g| < grad_tol``, R stops (code 1) as soon as a full step fails.  Here
a halved step that decreases f is taken and followed by one more Newton step (a
halved point is not a Newton point); two halved steps in a row stop the iterations
(code 1).  Along a flat direction (a parameter drifting to infinity) these steps
still gain likelihood: on R ordinal's ``convergence.wine2`` test model stopping at
the first halving left the logLik 3.3e-8 below R's; the extra steps end 4.7e-9
above it.

R also stops (code 1) after five iterations with ``max|g| < grad_tol``, meant
for a parameter drifting along a flat direction, whose steps do not shrink.
Here an iteration whose step is half the previous one or less does not count
toward the five: with weights of ``1e-8`` the gradient meets
``grad_tol`` at the start and Newton's steps converge quadratically to the same
estimates as with weights of 1, where R stops after four steps, 5e-7 short of
them.  The step criterion is R's, absolute (:func:`step_tolerance`).

When both criteria are met, R stops without taking the Newton step it has just
computed, so its estimates are that step (up to ``rel_tol`` absolutely) short of
the maximum.  Where ``max|g| < grad_tol`` holds only because the weights are
small, that step is the only thing bounding the error: with constant weights of
1e-5, a probit fit stopped with a threshold of 0.052 off by 1.0e-7 (2e-6
relative) from the maximum, and from the same fit with weights of 1.  Here the
step is taken when it is more than ``_POLISH`` of the tolerance (and
decreases the objective); the next step would be of its square's order, so the
estimates are at the maximum to rounding (one more evaluation of the objective,
in fits whose last step is not already negligible).

Two departures on request, neither used by default: the first step may come from
an approximate Hessian (``initial_hessian``, a warm start's), and a caller that
does not need the Hessian at the estimates may let the last convergence check use
the previous iteration's (``NewtonOptions.final_hessian=False``).

One departure by default saves a Hessian near the end: when the last step was a
full Newton step with an unmodified Hessian and of relative size at most
:data:`SMALL_MOVE`, and ``max|g|`` is above ``grad_tol`` but below ``grad_tol /
SMALL_MOVE``, the step is taken with that step's Hessian (a chord step).  Between
points that close the Hessian changes by ``O(SMALL_MOVE)`` relatively, so the
step leaves a gradient of ``O(SMALL_MOVE max|g|)``, below ``grad_tol`` like the
exact step's; if its trial point does not decrease the objective, the exact
Hessian is computed and used.  Every convergence decision still reads the
Hessian at the point judged (a fit on ``10^5`` rows computes three full-data
Hessians instead of four).

Two departures where the objective is linear to rounding along some directions
(every row of a fit far in a logistic tail, as with offsets of +-1000, where
``log F`` is linear and its curvature ``e^{-1000}``), neither reached by a fit
whose Hessian is positive definite and whose Newton steps succeed:

- a full step from a modified Hessian is doubled while the objective decreases
  (R's moves by ``max|g|`` per iteration there, and the count of modified
  Hessians ends the fit long before the maximum); an iteration whose step was
  doubled does not count toward ``max_modifications``, since the objective
  decreased beyond the modified Hessian's model and the fit is not stalled (a
  cauchit fit with those offsets, whose Hessian stays indefinite for dozens of
  iterations, then reaches the best maximum Nelder-Mead finds);
- a Newton step that no halving turns into a decrease (a positive definite
  Hessian of curvature ``1e-9``, a step of ``1e15``) is retried from the
  modified Hessian ``H + (|min eigenvalue| + 1) I`` before the iterations stop
  with code 3.

Codes (as R): 0 converged; 1 gradient small but the step is not (parameters may be
unbounded); 2 iteration limit; 3 step halving failed; 4 too many Hessian
modifications in a row.  Where R's absolute gradient test cannot be met because a
parameter's units are extreme (a slope of ``x * 1e14``), a Newton step that is
relatively small and predicts a decrease below the objective's rounding noise,
and that no halving can turn into a decrease, is convergence (code 0), not a
halving failure: the test of the quadratic model does not depend on the units.
Likewise where ``max|g| < grad_tol`` holds and only the absolute step test is
missed, by a step at the rounding of large parameters (``rel_tol=1e-12`` with
intercepts near 70 in a small cauchit fit): code 0, not 1 ("may be unbounded").

Threads.  The solver decides its own threading (:mod:`ordstats.core.threads`):
:func:`newton` (and every model's fitting method that calls it) runs inside
:func:`~ordstats.core.threads.numeric_threads`, so BLAS runs on **one thread**
for the thin products a Newton iteration is made of (``X @ beta``, ``X' v``,
the per-level sums, the Cholesky of a small Hessian): on a machine whose cores
other programs use, a multi-threaded BLAS waits milliseconds for a core at
every such call (``X @ beta`` at 10^5 x 20 beside two busy loops: 8.0 ms on two
threads, 0.66 ms on one).  Only a product
of at least ``THREADED_WORK`` multiply-adds with an output at least
``THREADED_WIDTH`` wide (the Gram matrix of a design with hundreds of columns)
may use more threads: as many as the ``threads`` option
(:func:`ordstats.set_options`) or an estimator's ``n_jobs`` allows, never more
than the caller's own BLAS setting, and only while no other fit runs in the
process.  The caller's settings are restored when the fit ends, also when it
raises.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.core.linalg import equilibrate
from ordstats.core.threads import numeric_threads
from ordstats.errors import OrdstatsError

__all__ = ["NewtonOptions", "NewtonResult", "Objective", "newton"]

MESSAGES = {
    0: "absolute and relative convergence criteria were met",
    1: "max|gradient| is small but the Newton step is not: some parameters may be unbounded",
    2: "iteration limit reached",
    3: "step halving failed to decrease the objective",
    4: "the Hessian was not positive definite in too many consecutive iterations",
}


class Objective(Protocol):
    """What :func:`newton` needs from one evaluation of the objective."""

    nll: float

    @property
    def gradient(self) -> FloatArray:  # pragma: no cover - protocol
        """Gradient at the evaluated point."""
        ...

    @property
    def hessian(self) -> FloatArray:  # pragma: no cover - protocol
        """Hessian at the evaluated point."""
        ...


ObjectiveT = TypeVar("ObjectiveT", bound=Objective)


@dataclass(frozen=True)
class NewtonOptions:
    """Control settings of :func:`newton`, with R ``clm.control``'s defaults.

    Attributes
    ----------
    max_iter : int
        Maximum number of Newton iterations (R: ``maxIter``).
    grad_tol : float
        Absolute tolerance on ``max|gradient|`` (R: ``gradTol``).
    rel_tol : float
        Tolerance on the Newton step, ``|step_k| < rel_tol`` as R's ``relTol``
        (relative beyond parameters of size 10^6: :func:`step_tolerance`).
    max_halvings : int
        Maximum step halvings per iteration (R: ``maxLineIter``).
    max_modifications : int
        Maximum consecutive iterations with a modified Hessian (R: ``maxModIter``).
    final_hessian : bool
        ``False`` lets the relative criterion be met without the Hessian at the
        final point, for callers that do not need that Hessian: when
        ``max|g| < grad_tol``, the last step was a full step of relative size
        at most :data:`SMALL_MOVE` and its Hessian was not modified, the step
        ``H_prev^{-1} g`` from that Hessian (the one the last step was taken
        with: for a chord step, the Hessian of the step before) must be below
        ``rel_tol / 10`` and below ``_POLISH`` of that, so that the exact
        step would not be taken either: the estimates are the same as with it.
        Between points that close the Hessian changes by ``O(SMALL_MOVE)``
        relatively, so the exact step is below ``rel_tol`` (and not taken) too.
    decrement_tol : float
        ``> 0`` ends the iterations (code 0) as soon as a Newton step from an
        unmodified Hessian predicts a decrease ``g' H^{-1} g / 2`` of at most
        ``decrement_tol`` and is relatively at most :data:`SMALL_MOVE`, before
        the objective is evaluated there: the
        result's ``x`` and ``evaluation`` are the last point evaluated and its
        ``pending_step`` the step not taken (``x - pending_step`` is the next
        Newton point, the one a full iteration would reach).  For the start of
        another fit (:mod:`ordstats.estimation.warm_start`), whose own criteria
        decide; R's criteria are not checked then.  ``0`` (the default): off.
    """

    max_iter: int = 100
    grad_tol: float = 1e-6
    rel_tol: float = 1e-6
    max_halvings: int = 15
    max_modifications: int = 5
    final_hessian: bool = True
    decrement_tol: float = 0.0


#: Largest relative step after which the next point may reuse the step's Hessian:
#: for a chord step, or to judge convergence (``NewtonOptions.final_hessian=False``).
SMALL_MOVE = 1e-3


@dataclass(frozen=True)
class NewtonResult(Generic[ObjectiveT]):
    """Outcome of :func:`newton`.

    Attributes
    ----------
    x : ndarray
        Final point.
    evaluation : Objective
        The objective evaluated at ``x`` (gradient and Hessian available).
    code : int
        Convergence code (see module docstring).
    n_iter : int
        Newton iterations taken.
    n_halvings : int
        Step halvings over all iterations.
    trace : list of tuple
        ``(iteration, objective, max|gradient|)`` per iteration.
    at_rounding : bool
        Converged on the relative criterion and the objective's rounding
        (extreme parameter units), not on ``max|g| < grad_tol``.
    pending_step : ndarray or None
        The Newton step not taken when ``NewtonOptions.decrement_tol`` ended
        the iterations; ``None`` otherwise.
    """

    x: FloatArray
    evaluation: ObjectiveT
    code: int
    n_iter: int
    n_halvings: int
    trace: list[tuple[int, float, float]]
    at_rounding: bool = False
    pending_step: FloatArray | None = None

    @property
    def converged(self) -> bool:
        """Whether both convergence criteria were met."""
        return self.code == 0

    @property
    def message(self) -> str:
        """Text for :attr:`code`."""
        if self.code == 0 and self.at_rounding:
            return (
                "relative convergence criterion met; the Newton step predicts a decrease below "
                "the objective's rounding error, so max|gradient| (large in these parameter "
                "units) cannot decrease further"
            )
        return MESSAGES[self.code]


def _newton_step(hessian: FloatArray, gradient: FloatArray) -> tuple[FloatArray, bool]:
    """Solve ``H step = g`` by Cholesky, inflating the diagonal if ``H`` is not PD.

    The Cholesky factorisation works on the equilibrated ``D^{-1} H D^{-1}``
    (:func:`ordstats.core.linalg.equilibrate`), so that predictors on very
    different scales (``x * 1e7`` beside ``x * 1e-7``) do not make a positive
    definite Hessian look indefinite; the step ``D^{-1} (D^{-1} H D^{-1})^{-1}
    D^{-1} g`` is the same vector.

    Returns the step and whether the Hessian had to be modified.
    """
    if not np.all(np.isfinite(hessian)):
        raise OrdstatsError("the Hessian has non-finite entries; the fit cannot continue")
    scale = equilibrate(hessian)
    try:
        factor = linalg.cho_factor(hessian / np.outer(scale, scale), check_finite=True)
        return linalg.cho_solve(factor, gradient / scale) / scale, False
    except (linalg.LinAlgError, ValueError):
        pass
    # R's clm: add |smallest eigenvalue| + 1 to the diagonal
    step = _regularised_step(hessian, gradient)
    if step is not None:
        return step, True
    identity = np.eye(hessian.shape[0])
    # entries far above 1 (a profile's constrained fit near a boundary): that eigenvalue
    # is rounding, and the sum is still not positive definite; inflate the equilibrated
    # Hessian instead, ten times more each try, down to a scaled gradient step
    scaled = hessian / np.outer(scale, scale)
    shift = abs(float(np.linalg.eigvalsh(scaled)[0])) + 1.0
    for _ in range(_INFLATIONS):
        try:
            factor = linalg.cho_factor(scaled + shift * identity)
            return linalg.cho_solve(factor, gradient / scale) / scale, True
        except (linalg.LinAlgError, ValueError):
            shift *= 10.0
    return gradient / (shift * scale * scale), True


#: Tries of :func:`_newton_step` at inflating an equilibrated Hessian that is not PD.
_INFLATIONS = 8


#: Parameter sizes from which the step criterion becomes relative: R's ``relTol``
#: bounds the step absolutely, which a parameter in extreme units (a slope of
#: ``x * 1e-12``, about ``1e12``) cannot meet in floating point.
RELATIVE_FROM = 1e6


def step_tolerance(x: FloatArray, rel_tol: float) -> FloatArray:
    """The largest Newton step of each parameter that counts as converged.

    R's ``clm`` stops when ``max|step| < relTol`` (absolute, despite its name);
    so does this, up to parameters of size :data:`RELATIVE_FROM`, beyond which
    the bound grows with ``|x|`` (``relTol * 1e-6`` relative).  A criterion
    relative to ``max(1, |x|)`` throughout stopped fits whose gradient is small
    only because their weights are (weights of ``1e-6``), one step short of
    R's estimates: ``3|4`` of wine's ``rating ~ temp + contact`` 4.8e-7 apart.
    """
    return rel_tol * np.maximum(1.0, np.abs(x) / RELATIVE_FROM)


def _small_step(
    solve: Callable[[Any, FloatArray], tuple[FloatArray, bool]],
    previous: Any,
    current: Objective,
    x: FloatArray,
    opts: NewtonOptions,
) -> bool:
    """Whether the previous Hessian's step is below ``rel_tol / 10`` (``final_hessian``).

    And below ``_POLISH`` of that, so that the exact step would not be taken
    either (``_polish``): the estimates are those of a fit with the final Hessian.
    """
    step, modified = solve(previous, current.gradient)
    bound = 0.1 * _POLISH * step_tolerance(x, opts.rel_tol)
    return not modified and bool(np.all(np.abs(step) <= bound))


def _polish(
    objective: Callable[[FloatArray], ObjectiveT],
    x: FloatArray,
    current: ObjectiveT,
    step: FloatArray,
    opts: NewtonOptions,
    max_grad: float,
) -> tuple[FloatArray, ObjectiveT]:
    """The point after the step that met the step criterion, if not negligible (``_POLISH``).

    R stops without taking it; taken, it leaves the estimates its square's order
    from the maximum.  Kept only if it does not increase the objective.
    """
    if not np.any(np.abs(step) > _POLISH * step_tolerance(x, opts.rel_tol)):
        return x, current
    trial = objective(x - step)
    return (x - step, trial) if _accept(trial, current, max_grad) else (x, current)


def _first_step(
    solve: Callable[[Any, FloatArray], tuple[FloatArray, bool]],
    approximate: Any,
    current: Objective,
) -> tuple[FloatArray, bool]:
    """The step from an approximate Hessian, or the exact one where that is not PD."""
    step, modified = solve(approximate, current.gradient)
    return solve(current.hessian, current.gradient) if modified else (step, False)


#: Ratio of consecutive step sizes at or below which Newton steps count as converging.
_SHRINKING = 0.5


#: Fraction of the step tolerance above which the Newton step that meets it is
#: still taken (R stops without it): the estimates are then that step closer to
#: the maximum, to second order.
_POLISH = 1e-2


#: Objective differences below this many units in the last place of ``|f|`` are
#: rounding noise: a sum of 10^6 log-probabilities is only resolved to ~1e-8.
_NOISE_ULPS = 100.0


def _rounding_noise(current: Objective) -> float:
    """Objective differences that are rounding noise at ``current``: 1e-10 or 100 ulps of f."""
    return max(1e-10, _NOISE_ULPS * np.finfo(float).eps * abs(current.nll))


def _optimal_to_rounding(
    step: FloatArray, modified: bool, current: Objective, x: FloatArray, opts: NewtonOptions
) -> bool:
    """Whether an unmodified Newton step predicts a decrease below the objective's rounding.

    The quadratic model's decrease ``g' H^{-1} g / 2`` and the relative step
    are invariant to the units of the parameters, while ``max|g|`` is not: a
    slope of a predictor in units of 1e14 has a gradient entry ~1e14 times the
    unit-scale one, so the absolute gradient test cannot be met at the optimum
    and only the step halving tells that nothing is left to gain.
    """
    return (
        not modified
        and 0.5 * float(current.gradient @ step) <= _rounding_noise(current)
        and bool(np.all(np.abs(step) <= opts.rel_tol * np.maximum(1.0, np.abs(x))))
    )


def _decrement_below(
    tol: float, step: FloatArray, approximate: bool, current: Objective, x: FloatArray
) -> bool:
    """Whether an exact, unmodified Newton step predicts a decrease of at most ``tol``.

    The step must also be small (at most :data:`SMALL_MOVE` relatively): along a
    direction in which the objective flattens out (separated data, a parameter
    drifting to infinity) the predicted decrease vanishes while the steps do not.
    """
    return (
        tol > 0.0
        and not approximate
        and 0.5 * float(current.gradient @ step) <= tol
        and bool(np.all(np.abs(step) <= SMALL_MOVE * np.maximum(1.0, np.abs(x))))
    )


def _accept(trial: Objective, current: Objective, max_grad: float) -> bool:
    """Whether a trial point improves on the current one.

    Within rounding noise of the current objective (``1e-10`` or 100 ulps of
    ``|f|``, whichever is larger), a smaller gradient decides, as in R's
    ``clm_fit_NR`` (which uses a fixed ``1e-10`` that large data sets exceed).
    """
    if not np.isfinite(trial.nll):
        return False
    noise = _rounding_noise(current)
    if trial.nll - current.nll < -noise:
        return True
    if trial.nll - current.nll < noise:
        return float(np.max(np.abs(trial.gradient))) < max_grad
    return False


def _halve(
    objective: Callable[[FloatArray], ObjectiveT],
    x: FloatArray,
    step: FloatArray,
    trial: ObjectiveT,
    current: ObjectiveT,
    max_grad: float,
    opts: NewtonOptions,
) -> tuple[float, ObjectiveT, int]:
    """Halve ``step`` until ``x - factor * step`` is accepted or the halvings run out.

    ``trial`` is the objective at ``x - step``.  Returns the factor, the
    objective at the last point tried and the number of halvings.
    """
    factor, halvings = 1.0, 0
    while not _accept(trial, current, max_grad) and halvings < opts.max_halvings:
        factor /= 2.0
        halvings += 1
        trial = objective(x - factor * step)
    return factor, trial, halvings


def _regularised_step(hessian: Any, gradient: FloatArray) -> FloatArray | None:
    """R's modified Newton step ``(H + (|min eigenvalue| + 1) I)^{-1} g`` of a dense ``H``.

    For a positive definite Hessian whose Newton step no halving could turn into
    a decrease: where every row is far in a tail of the link (offsets of
    +-1000), the objective is linear to rounding along some directions, its
    curvature there ``1e-9`` or less, and the Newton step of order ``1e15``
    and meaningless.  ``None`` for a structured (not dense) or non-finite
    Hessian, or where the shifted Hessian is not positive definite either.
    """
    if not isinstance(hessian, np.ndarray) or not np.all(np.isfinite(hessian)):
        return None
    shift = abs(float(np.linalg.eigvalsh(hessian)[0])) + 1.0
    try:
        factor = linalg.cho_factor(hessian + shift * np.eye(hessian.shape[0]))
    except (linalg.LinAlgError, ValueError):
        return None
    return np.asarray(linalg.cho_solve(factor, gradient), dtype=float)


def _extend(
    objective: Callable[[FloatArray], ObjectiveT],
    x: FloatArray,
    step: FloatArray,
    trial: ObjectiveT,
    max_doublings: int,
) -> tuple[float, ObjectiveT]:
    """Double a full step from a modified Hessian while the objective keeps decreasing.

    Where the Hessian is singular because the objective is linear to rounding
    along some directions (every row far in a logistic tail, where ``log F`` is
    linear: offsets of +-1000), the modified Hessian's step moves by
    ``max|g|`` along them per iteration, and the count of modified Hessians
    ends the fit long before the maximum.  Doubling the step while the
    objective decreases by more than its rounding noise crosses such a region
    in a few evaluations; the next Newton step corrects any overshoot in the
    curved directions.

    Returns the factor of ``step`` taken and the objective there.
    """
    factor = 1.0
    for _ in range(max_doublings):
        longer = objective(x - 2.0 * factor * step)
        if not np.isfinite(longer.nll) or longer.nll > trial.nll - _rounding_noise(trial):
            break
        factor, trial = 2.0 * factor, longer
    return factor, trial


@numeric_threads()
def newton(
    objective: Callable[[FloatArray], ObjectiveT],
    start: FloatArray,
    options: NewtonOptions | None = None,
    callback: Callable[[int, float, float], None] | None = None,
    linear_solve: Callable[[Any, FloatArray], tuple[FloatArray, bool]] | None = None,
    initial_hessian: Any | None = None,
) -> NewtonResult[ObjectiveT]:
    """Minimise a smooth function by damped Newton-Raphson.

    Parameters
    ----------
    objective : callable
        ``objective(x)`` returns an object with ``nll`` (the value), ``gradient``
        and ``hessian``; the latter two are only read when needed.
    start : ndarray
        Starting point; the objective must be finite there.
    options : NewtonOptions, optional
    callback : callable, optional
        Called as ``callback(iteration, value, max|gradient|)`` each iteration.
    linear_solve : callable, optional
        ``linear_solve(hessian, gradient) -> (step, modified)`` solves
        ``hessian @ step = gradient``, modifying a Hessian that is not positive
        definite.  The default factors a dense Hessian by Cholesky; structured
        Hessians bring their own (e.g.
        :func:`ordstats.families.cumulative.banded.banded_newton_step`).
    initial_hessian : optional
        An approximation of the Hessian at ``start`` for the first step (a
        quasi-Newton step; e.g. a subsample's Hessian scaled to the full data),
        so that the objective's own Hessian is not computed there.  It is not
        used when the gradient is already small at ``start`` (every
        convergence decision rests on the objective's Hessian) or when it is
        not positive definite; the step halving guards the step as usual.

    Returns
    -------
    NewtonResult

    Raises
    ------
    OrdstatsError
        If the objective is not finite at ``start``.

    Examples
    --------
    >>> import numpy as np
    >>> class Quadratic:
    ...     def __init__(self, x):
    ...         self.nll = float(x @ x)
    ...         self.gradient = 2 * x
    ...         self.hessian = 2 * np.eye(len(x))
    >>> result = newton(Quadratic, np.array([3.0, -4.0]))
    >>> result.converged, np.allclose(result.x, 0.0)
    (True, True)
    """
    opts = options or NewtonOptions()
    solve = linear_solve or _newton_step
    x = np.asarray(start, dtype=float).copy()
    current = objective(x)
    if not np.isfinite(current.nll):
        raise OrdstatsError(
            "the objective is not finite at the starting values; give finite start_params "
            "with increasing thresholds, or leave start_params out for the default start"
        )
    code, n_halvings, abs_iters, modified_run = 2, 0, 0, 0
    last_move = np.inf  # max|x_{k+1} - x_k| of the last step taken
    at_rounding = False
    pending: FloatArray | None = None
    trace: list[tuple[int, float, float]] = []
    iteration = 0
    halved_last = False  # the last step met max|g| < grad_tol only after halving
    previous = None  # the Hessian of the last step, where it may judge convergence
    reusable: Any = None  # the Hessian of the last step, where the next step may reuse it
    for iteration in range(opts.max_iter + 1):
        max_grad = float(np.max(np.abs(current.gradient))) if x.size else 0.0
        trace.append((iteration, current.nll, max_grad))
        if callback is not None:
            callback(iteration, current.nll, max_grad)
        abs_conv = max_grad < opts.grad_tol
        if x.size == 0:
            code = 0
            break
        if abs_conv and previous is not None and _small_step(solve, previous, current, x, opts):
            code = 0
            break
        chord = reusable is not None and max_grad * SMALL_MOVE < opts.grad_tol and not abs_conv
        if chord:
            step, modified = solve(reusable, current.gradient)
            chord = not modified
        if not chord:
            step, modified = (
                _first_step(solve, initial_hessian, current)
                if (iteration == 0 and initial_hessian is not None and not abs_conv)
                else solve(current.hessian, current.gradient)
            )
        if modified and abs_conv:
            code = 1
            break
        modified_run = modified_run + 1 if modified else 0
        if modified_run > opts.max_modifications:
            code = 4
            break
        if abs_conv and np.all(np.abs(step) <= step_tolerance(x, opts.rel_tol)):
            code = 0
            x, current = _polish(objective, x, current, step, opts, max_grad)
            break
        quasi = iteration == 0 and initial_hessian is not None and not abs_conv
        if _decrement_below(opts.decrement_tol, step, modified or chord or quasi, current, x):
            code, pending = 0, step
            break
        if iteration == opts.max_iter:
            break
        factor, trial = 1.0, objective(x - step)
        if chord and not _accept(trial, current, max_grad):  # the exact step after all
            chord = False
            step, modified = solve(current.hessian, current.gradient)
            trial = objective(x - step)
        factor, trial, halvings = _halve(objective, x, step, trial, current, max_grad, opts)
        n_halvings += halvings
        rounding = False
        if not _accept(trial, current, max_grad):
            # with max|g| < grad_tol too, a step that is relatively tiny and predicts a
            # decrease below rounding only misses rel_tol because it is absolute
            rounding = _optimal_to_rounding(step, modified, current, x, opts)
            fallback = None
            if not (rounding or abs_conv or modified):
                fallback = _regularised_step(current.hessian, current.gradient)
            if fallback is not None:  # a Newton step from a nearly flat objective
                step, modified = fallback, True
                modified_run += 1
                factor, trial, halvings = _halve(
                    objective, x, step, objective(x - step), current, max_grad, opts
                )
                n_halvings += halvings
        if modified and not halvings and _accept(trial, current, max_grad):
            factor, trial = _extend(objective, x, step, trial, opts.max_halvings)
            if factor > 1.0:  # a doubled step gained more than its model: not a stall
                modified_run -= 1
        if not _accept(trial, current, max_grad):
            at_rounding = not abs_conv and rounding
            code = 0 if rounding else (1 if abs_conv else 3)
            break
        if abs_conv and halvings and halved_last:
            code = 1
            break
        # a halved step is not a Newton step: polish once more from where it ends
        halved_last = abs_conv and halvings > 0
        full_small_step = bool(
            not modified
            and not halvings
            and not (iteration == 0 and initial_hessian is not None)
            and np.all(np.abs(step) <= SMALL_MOVE * np.maximum(1.0, np.abs(x)))
        )
        # the Hessian this step was taken with: the previous one for a chord step
        used = None if not full_small_step else (reusable if chord else current.hessian)
        previous = used if not opts.final_hessian else None
        reusable = None if chord else used
        x, current = x - factor * step, trial
        move = float(np.max(np.abs(factor * step)))
        # R stops after five steps with max|g| < grad_tol (code 1: a parameter
        # drifting along a flat direction); steps that still halve
        # converge instead (a gradient small only because the weights are)
        abs_iters += abs_conv and not move <= _SHRINKING * last_move
        last_move = move
        if abs_conv and abs_iters >= 5:
            code = 1
            break
    return NewtonResult(
        x=x,
        evaluation=current,
        code=code,
        n_iter=iteration,
        n_halvings=n_halvings,
        trace=trace,
        at_rounding=at_rounding,
        pending_step=pending,
    )
