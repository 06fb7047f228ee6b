"""Optional first stage of a fit with a scipy optimiser, before the Newton polish.

statsmodels users ask ``fit(method="bfgs")``.  ordstats accepts those names: the
named scipy optimiser moves from the start values towards the optimum using the
objective and its gradient, then :func:`ordstats.core.solver.newton` polishes the
result to the same convergence criteria as a Newton fit, so the estimates are the
same whichever method is named (only the path differs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ordstats._typing import FloatArray
from ordstats.core.solver import Objective
from ordstats.errors import SpecificationError

__all__ = ["FIT_METHODS", "PrefitResult", "canonical_method", "prefit"]

#: Accepted ``fit(method=...)`` names (statsmodels' and scipy's) -> scipy's name
#: (``None``: Newton-Raphson alone).
FIT_METHODS: dict[str, str | None] = {
    "newton": None,
    "bfgs": "BFGS",
    "lbfgs": "L-BFGS-B",
    "l-bfgs-b": "L-BFGS-B",
    "cg": "CG",
    "ncg": "Newton-CG",
    "newton-cg": "Newton-CG",
    "nm": "Nelder-Mead",
    "nelder-mead": "Nelder-Mead",
    "powell": "Powell",
    "trust-constr": "trust-constr",
}
_USES_HESSIAN = {"Newton-CG", "trust-constr"}
_USES_GRADIENT = {"BFGS", "L-BFGS-B", "CG"} | _USES_HESSIAN


@dataclass(frozen=True)
class PrefitResult:
    """How the scipy stage ended (before the Newton polish)."""

    method: str
    x: FloatArray
    n_iter: int
    n_evaluations: int
    success: bool
    message: str


def canonical_method(method: object) -> str:
    """Validate ``fit(method=...)`` and return its lower-case name.

    Raises
    ------
    SpecificationError
        For a name not in :data:`FIT_METHODS`, listing those accepted.
    """
    key = method.lower() if isinstance(method, str) else method
    if key not in FIT_METHODS:
        raise SpecificationError(
            f"method must be one of {', '.join(map(repr, FIT_METHODS))}; got {method!r}. "
            "'newton' (the default) is ordstats' Newton-Raphson; the others run that "
            "scipy optimiser first and end with the Newton polish, so the estimates are "
            "the same"
        )
    return str(key)


def prefit(
    objective: Callable[[FloatArray], Objective],
    start: FloatArray,
    method: str,
    maxiter: int | None = None,
) -> PrefitResult:
    """Minimise ``objective(x).nll`` from ``start`` with the scipy optimiser ``method``.

    Points where the objective is not finite (disordered thresholds) count as
    ``+inf`` with a zero gradient, so line searches step back.

    Parameters
    ----------
    objective : callable
        Returns an evaluation with ``nll``, ``gradient`` and ``hessian``.
    start : ndarray
    method : str
        A key of :data:`FIT_METHODS` other than ``"newton"``.
    maxiter : int, optional
        Iteration limit of the scipy stage (default: scipy's).

    Returns
    -------
    PrefitResult
    """
    name = FIT_METHODS[canonical_method(method)]
    if name is None:
        raise SpecificationError("method='newton' has no scipy stage")
    cache: dict[bytes, Objective] = {}

    def at(x: FloatArray) -> Objective:
        key = np.asarray(x, dtype=float).tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = objective(np.asarray(x, dtype=float))
        return cache[key]

    def fun(x: FloatArray) -> float:
        value = float(at(x).nll)
        return value if np.isfinite(value) else np.inf

    def jac(x: FloatArray) -> FloatArray:
        ev = at(x)
        grad = np.asarray(ev.gradient, dtype=float)
        return grad if np.isfinite(ev.nll) and np.all(np.isfinite(grad)) else np.zeros_like(grad)

    def hess(x: FloatArray) -> FloatArray:
        return np.asarray(at(x).hessian, dtype=float)

    found = optimize.minimize(  # type: ignore[call-overload]  # method is a str
        fun,
        np.asarray(start, dtype=float),
        method=name,
        jac=jac if name in _USES_GRADIENT else None,
        hess=hess if name in _USES_HESSIAN else None,
        options={} if maxiter is None else {"maxiter": int(maxiter)},
    )
    x = np.asarray(found.x, dtype=float)
    if not np.isfinite(fun(x)):
        x = np.asarray(start, dtype=float)
    return PrefitResult(
        method=name,
        x=x,
        n_iter=int(getattr(found, "nit", 0) or 0),
        n_evaluations=int(getattr(found, "nfev", 0) or 0),
        success=bool(found.success),
        message=str(found.message),
    )
