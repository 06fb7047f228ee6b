"""The last Newton step of a fit read in passes, certified without a pass of its own.

Every Newton evaluation of data read in chunks (files, Dask, Spark) is a full
pass over the rows, and the last one is only a check: near the optimum the
step ``s_k = H_k^{-1} g_k`` from the last evaluated point is already tiny, and
the point ``x_k - s_k`` is accepted once its gradient and step are below the
tolerances.  Newton's quadratic convergence predicts that check.  After a full,
unmodified Newton step ``s`` from a point with an exact Hessian, the gradient at
the new point is the remainder of the quadratic model, ``O(|s|^2)``; the
constant is measured by the previous step, whose remainder is the gradient at
the last evaluated point: ``C = max|g_k| / max|s_{k-1}|^2``.  The check pass
is skipped when

- the predicted gradient ``C max|s_k|^2``, times :data:`SAFETY`, is below ``grad_tol``,
- the step ``s_k`` itself is below ``rel_tol`` relative (the step at the new
  point, of the size of its gradient, is much smaller still), and
- the Hessian, whose relative change per unit step the previous step measured,
  is predicted to change by at most :data:`HESSIAN_RTOL` relative between
  ``x_k`` and the new point.

The new point is then evaluated from the quadratic model of ``x_k``: value
``f_k - g_k's_k / 2``, gradient ``g_k - H_k s_k`` (zero up to rounding) and
Hessian ``H_k``, which serves the covariance.  The estimates are those of the
checked fit: the skipped check would have accepted the same point, and the
next step (the one after it) is below ``rel_tol * 1e-6`` or so.  At ``10^7``
rows started from the warm start's subsample this saves one pass of four after
the summary pass (``bench/README.md``).

Only two consecutive full Newton steps with exact, positive-definite Hessians
qualify: a warm start's quasi-Newton first step, a modified Hessian or a
halved step never does, and the point after a predicted one is evaluated.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.core.linalg import equilibrate
from ordstats.core.solver import NewtonOptions, step_tolerance

__all__ = ["HESSIAN_RTOL", "SAFETY", "LastStepPredictor"]

#: Margin on the predicted gradient (whose constant the previous step measured).
SAFETY = 100.0
#: Largest predicted relative change of the Hessian between the last evaluated
#: point and the estimates: the relative error of the covariance that the
#: shortcut allows (at 10^7 rows it is about 5e-9, predicted 6e-9).
HESSIAN_RTOL = 1e-7


@dataclass(frozen=True)
class _Point:
    """An evaluated point and the full Newton step that led to it (if one did)."""

    x: FloatArray
    evaluation: Any
    step_in: FloatArray | None
    hessian_before: FloatArray | None


class LastStepPredictor:
    """An objective for :func:`~ordstats.core.solver.newton` that skips the check pass.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(x)``: one pass, an evaluation with ``nll``, ``gradient`` and
        a dense ``hessian``.
    options : NewtonOptions
        The fit's tolerances.

    Attributes
    ----------
    predicted : bool
        Whether the last point was evaluated from the quadratic model.
    """

    def __init__(self, evaluate: Callable[[FloatArray], Any], options: NewtonOptions) -> None:
        self._evaluate = evaluate
        self._options = options
        self._last: _Point | None = None
        self.predicted = False

    def __call__(self, x: FloatArray) -> Any:
        """The evaluation at ``x``: one pass, or the quadratic model's where certified."""
        x = np.array(x, dtype=float)
        last = self._last
        if last is not None and not getattr(last.evaluation, "has_hessian", True):
            last = None  # a pass without a Hessian (the warm start's quasi-Newton step)
        step = _exact_newton_step(last.evaluation) if last is not None else None
        full = (
            last is not None
            and step is not None
            and not self.predicted
            and bool(np.all(np.abs(x - (last.x - step)) <= 1e-12 * np.maximum(1.0, np.abs(x))))
        )
        if full and last is not None and step is not None:
            model = self._quadratic_model(last, step)
            if model is not None:
                self.predicted = True
                return model
        evaluation = self._evaluate(x)
        before = None if last is None else np.asarray(last.evaluation.hessian, dtype=float)
        step_in = (last.x - x) if full and last is not None else None
        self._last = _Point(x, evaluation, step_in, before)
        self.predicted = False
        return evaluation

    def _quadratic_model(self, last: _Point, step: FloatArray) -> Any | None:
        """The evaluation at ``last.x - step`` from ``last``'s quadratic model, if certified."""
        if last.step_in is None or last.hessian_before is None:
            return None
        opts = self._options
        gradient = np.asarray(last.evaluation.gradient, dtype=float)
        hessian = np.asarray(last.evaluation.hessian, dtype=float)
        size_in, size = float(np.max(np.abs(last.step_in))), float(np.max(np.abs(step)))
        if size_in <= 0.0 or not np.isfinite(last.evaluation.nll):
            return None
        constant = float(np.max(np.abs(gradient))) / size_in**2
        if SAFETY * constant * size**2 >= opts.grad_tol:
            return None
        x_new = last.x - step
        if np.any(np.abs(step) > step_tolerance(x_new, opts.rel_tol)):
            return None
        scale = float(np.max(np.abs(hessian)))
        change = float(np.max(np.abs(hessian - last.hessian_before))) / scale / size_in
        if not np.isfinite(change) or change * size > HESSIAN_RTOL:
            return None
        remainder = gradient - hessian @ step
        if float(np.max(np.abs(remainder))) >= opts.grad_tol / SAFETY:
            return None
        model = copy.copy(last.evaluation)
        model.nll = float(last.evaluation.nll - 0.5 * gradient @ step)
        model.gradient = remainder
        model.hessian = hessian
        model.predicted = True
        return model


def _exact_newton_step(evaluation: Any) -> FloatArray | None:
    """``H^{-1} g`` by Cholesky, or None where ``H`` is not positive definite (or finite)."""
    hessian = np.asarray(evaluation.hessian, dtype=float)
    gradient = np.asarray(evaluation.gradient, dtype=float)
    if not (np.all(np.isfinite(hessian)) and np.all(np.isfinite(gradient))):
        return None
    scale = equilibrate(hessian)
    try:
        factor = linalg.cho_factor(hessian / np.outer(scale, scale))
    except (linalg.LinAlgError, ValueError):
        return None
    step: FloatArray = linalg.cho_solve(factor, gradient / scale) / scale
    return step
