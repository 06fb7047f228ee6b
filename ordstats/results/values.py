"""The plain values a fit holds: how the optimiser ended and a covariance matrix.

They sit below every results module (:mod:`~ordstats.results.state` declares
them as part of the fitted state), so typing a fit's state needs no import of
the modules that compute it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.prefit import PrefitResult
from ordstats.core.solver import NewtonResult
from ordstats.errors import StandardErrorWarning, user_stacklevel

__all__ = ["SELECTION_KIND", "Covariance", "FitInfo", "after_selection", "warn_after_selection"]

#: ``Covariance.kind`` of an L1 or elastic-net fit: no covariance after selection.
SELECTION_KIND = "none (L1 penalty)"

#: Why such a fit has no standard errors, and what to do instead.
SELECTION_REASON = (
    "an L1 or elastic-net penalty selects the variables, and no covariance of the "
    "estimates holds after selection; for standard errors, bootstrap the whole fit "
    "(selection included), or refit with a ridge penalty (L1_wt=0) or without a penalty"
)


@dataclass(frozen=True)
class FitInfo:
    """How the optimiser ended.

    Attributes
    ----------
    converged : bool
        Both convergence criteria met and no diverging estimates.
    code : int
        Solver code (see :mod:`ordstats.core.solver`).
    message : str
    n_iter, n_halvings : int
        Newton iterations and step halvings.
    max_grad : float
        ``max|gradient|`` at the returned estimates.
    diverging : tuple of str
        Parameters without a finite estimate because of separation.
    crossing : tuple
        Labels of fitted rows whose cut-points are not increasing (nominal
        effects); the fit is then invalid, as R's ``clm`` reports.
    method : str
        ``fit(method=...)``: ``"newton"``, or the scipy optimiser run first.
    prefit : PrefitResult or None
        How that scipy stage ended (before the Newton polish).
    warm_start_rows : int
        Rows of the subsample whose estimates started the iterations (0: the
        default start; see :mod:`ordstats.estimation.warm_start`).
    n_passes : int or None
        Passes over the data that the fit made, for data read in chunks or
        from Dask (one per Newton evaluation; the model's two passes before
        fitting, levels and summary, not counted, nor the evaluation at the
        warm start that the summary pass made); None in memory.
    last_step_predicted : bool
        Whether the check of the last Newton step came from Newton's
        quadratic convergence instead of a pass over the data
        (:mod:`ordstats.estimation.last_step`); the covariance is then the
        Hessian of the last evaluated point's.
    """

    converged: bool
    code: int
    message: str
    n_iter: int
    n_halvings: int
    max_grad: float
    diverging: tuple[str, ...] = ()
    crossing: tuple[Any, ...] = ()
    method: str = "newton"
    prefit: PrefitResult | None = None
    warm_start_rows: int = 0
    n_passes: int | None = None
    last_step_predicted: bool = False

    @classmethod
    def from_solution(
        cls, solution: NewtonResult, diverging: list[str], crossing: tuple[Any, ...] = ()
    ) -> FitInfo:
        """Summarise a :class:`~ordstats.core.solver.NewtonResult`."""
        grad = np.asarray(solution.evaluation.gradient)
        return cls(
            converged=solution.converged and not diverging and not crossing,
            code=solution.code,
            message=solution.message,
            n_iter=solution.n_iter,
            n_halvings=solution.n_halvings,
            max_grad=float(np.max(np.abs(grad))) if grad.size else 0.0,
            diverging=tuple(diverging),
            crossing=crossing,
        )


@dataclass(frozen=True)
class Covariance:
    """A covariance matrix of the estimates and how it was obtained.

    Attributes
    ----------
    matrix : ndarray, shape (k, k)
        NaN when the information matrix is singular.
    cond : float
        Condition number of the Hessian (R's ``cond.H``).
    singular : bool
    kind : str
        ``"nonrobust"``: inverse observed information; ``"robust"``, ``"HC1"``,
        ``"cluster"``: sandwich estimators (see :mod:`ordstats.results.covariance`).
    """

    matrix: FloatArray
    cond: float
    singular: bool
    kind: str = "nonrobust"
    std_errors: FloatArray | None = None

    def variances(self) -> FloatArray:
        """Return the diagonal of :attr:`matrix`."""
        return np.diag(self.matrix)

    def standard_errors(self) -> FloatArray:
        """Square roots of the variances, also where a variance overflows.

        A predictor in units of ``10^-160`` has a standard error near
        ``10^160`` whose square is beyond the largest double; the error itself
        is computed in the equilibrated basis and stays finite.
        """
        if self.std_errors is not None:
            return self.std_errors
        return np.sqrt(self.variances())


def after_selection(kind: str) -> bool:
    """Whether a covariance of this ``kind`` is the NaN one of an L1 or elastic-net fit."""
    return kind == SELECTION_KIND


def warn_after_selection(kind: str, what: str) -> None:
    """Warn that ``what`` come without standard errors when ``kind`` is a selection's.

    Parameters
    ----------
    kind : str
        The ``kind`` of the fit's covariance.
    what : str
        What the caller returns (``"margins"``, ``"predictions"``), plural.
    """
    if after_selection(kind):
        warnings.warn(
            f"{what} are given without standard errors (NaN): {SELECTION_REASON}",
            StandardErrorWarning,
            stacklevel=user_stacklevel(),
        )
