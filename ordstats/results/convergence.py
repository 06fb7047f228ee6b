r"""How far a fit is from the maximum: R ``ordinal``'s ``convergence(fit)``.

At the estimates :math:`\hat\theta` the negative log-likelihood has gradient
:math:`g` and Hessian :math:`H`.  One more Newton step :math:`s = H^{-1} g`
estimates each parameter's remaining error (the maximum is near
:math:`\hat\theta - s`, as the quadratic model of the log-likelihood puts
it), and the log-likelihood there, minus the fit's, the error of the
log-likelihood.  From the error :math:`e` of an estimate :math:`v` R counts
its correct decimals :math:`\lfloor -\log_{10}|e| \rfloor` (one fewer where
:math:`-\log_{10}|e|` is within :math:`\log_{10} 2` above that, none where
:math:`|e| \ge 0.05`) and its significant digits, the correct decimals plus
:math:`\lceil \log_{10}|v| \rceil` (at least 0).

As R, the errors are left out (``NaN``) where :math:`H` is not positive
definite or has an eigenvalue of size at most :math:`\sqrt{\epsilon}`
(:data:`EIGEN_TOL`), and a step larger than 0.01 or a gradient that grows at
:math:`\hat\theta - s` warns that the assessment may be unreliable.  The
gradient and Hessian are evaluated afresh at the estimates (a pass over the
rows for a fit read in chunks), so that the report does not rest on the
solver's last, possibly predicted, evaluation; the log-likelihood at
:math:`\hat\theta - s` is one more evaluation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg

from ordstats._typing import FloatArray
from ordstats.errors import ConvergenceWarning, OrdstatsError, user_stacklevel
from ordstats.results.state import FittedState

__all__ = [
    "EIGEN_TOL",
    "ConvergenceMethods",
    "ConvergenceReport",
    "correct_decimals",
    "significant_digits",
]

#: Eigenvalues of the Hessian at most this in size leave the errors undetermined
#: (R's ``tol = sqrt(.Machine$double.eps)``).
EIGEN_TOL = float(np.sqrt(np.finfo(float).eps))
#: A Newton step larger than this warns that the assessment may be unreliable.
LARGE_STEP = 0.01


@dataclass(frozen=True)
class ConvergenceReport:
    """What :meth:`ConvergenceMethods.convergence` finds (R's ``convergence.clm``).

    Attributes
    ----------
    info : pandas.Series
        ``nobs``, ``logLik``, ``niter``, ``max_grad``, ``cond_H`` and
        ``logLik_error`` (the log-likelihood at the estimates minus that at
        the Newton step's point: at most 0 up to rounding).
    table : pandas.DataFrame
        Per parameter: ``Estimate``, ``Std.Err``, ``Gradient`` (of the
        negative log-likelihood, as R's), ``Error`` (the Newton step ``s``),
        ``Cor.Dec`` (correct decimals) and ``Sig.Dig`` (significant digits).
    eigenvalues : ndarray
        The Hessian's eigenvalues, largest first.
    message : str
        How the fit ended.
    """

    info: pd.Series
    table: pd.DataFrame
    eigenvalues: FloatArray
    message: str

    def __str__(self) -> str:
        info = self.info
        header = (
            f"nobs {info['nobs']:g}  logLik {info['logLik']:.6g}  niter {info['niter']}  "
            f"max.grad {info['max_grad']:.2e}  cond.H {info['cond_H']:.1e}  "
            f"logLik.Error {_error_text(float(info['logLik_error']))}"
        )
        shown = self.table.copy()
        for column in ("Estimate", "Std.Err"):
            shown[column] = shown[column].map(lambda v: f"{v:.4g}")
        for column in ("Gradient", "Error"):
            shown[column] = shown[column].map(lambda v: f"{v:.2e}")
        eigen = " ".join(f"{v:.4g}" for v in self.eigenvalues)
        return (
            f"{header}\n\n{shown.to_string()}\n\nEigen values of Hessian:\n{eigen}\n\n"
            f"Convergence message:\n{self.message}"
        )

    def _repr_html_(self) -> str:  # pragma: no cover - notebooks
        return "<pre>" + str(self) + "</pre>"


def _error_text(error: float) -> str:
    """R's format of the log-likelihood error: ``<1e-10`` or two significant digits."""
    if not np.isfinite(error):
        return "NA"
    return "<1e-10" if abs(error) < 1e-10 else f"{error:.2e}"


def correct_decimals(error: FloatArray) -> pd.Series:
    """R ``ordinal``'s correct decimals of estimates with errors ``error`` (``cor.dec``).

    Parameters
    ----------
    error : ndarray
        Each estimate's error.

    Returns
    -------
    pandas.Series
        Whole numbers (``Int64``; missing where the error is 0 or not finite).
    """
    error = np.abs(np.asarray(error, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        digits = -np.log10(error)
    lead = np.floor(digits)
    decimals = np.where(digits < lead - np.log10(0.5), lead - 1, lead)
    decimals = np.where(error >= 0.05, 0.0, decimals)
    return _whole(decimals)


def significant_digits(values: FloatArray, error: FloatArray) -> pd.Series:
    """Significant digits of estimates ``values`` with errors ``error`` (R's ``signif.digits``).

    Their correct decimals (:func:`correct_decimals`) plus
    ``ceil(log10|value|)``, at least 0.

    Parameters
    ----------
    values, error : ndarray
        The estimates and their errors.

    Returns
    -------
    pandas.Series
        Whole numbers (``Int64``; missing where the error is 0 or not finite).
    """
    decimals = correct_decimals(error).to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(divide="ignore"):
        digits = decimals + np.ceil(np.log10(np.abs(values)))
    return _whole(np.maximum(digits, 0.0))


def _whole(values: FloatArray) -> pd.Series:
    finite = np.isfinite(values)
    out = pd.array(np.where(finite, np.round(values), 0).astype(np.int64), dtype="Int64")
    out[~finite] = pd.NA
    return pd.Series(out)


class ConvergenceMethods(FittedState):
    """R ``ordinal``'s ``convergence()`` on a fit."""

    def convergence(self) -> ConvergenceReport:
        """How close the estimates are to the maximum, per parameter (R's ``convergence(fit)``).

        Takes one more Newton step from the estimates: its size estimates each
        estimate's error (``Error``), from which the correct decimals
        (``Cor.Dec``) and significant digits (``Sig.Dig``) follow, and the
        log-likelihood at its end the error of the log-likelihood.  The
        Hessian's eigenvalues show how well determined the parameters are.

        Returns
        -------
        ConvergenceReport
            ``info``, ``table``, ``eigenvalues`` and ``message``; printing it
            gives R's layout.

        Warns
        -----
        ConvergenceWarning
            If the step is larger than 0.01, or the gradient at its end is
            larger than at the estimates: the quadratic model does not hold
            there, so the errors may be unreliable.
        """
        if self.data_removed:
            raise OrdstatsError(
                "convergence() evaluates the likelihood at the estimates, and this fit no "
                "longer holds its rows (remove_data() or a pickled slim fit): refit to assess it"
            )
        x = self.params.to_numpy(dtype=float)
        evaluation = self.model.evaluate(x)
        gradient = np.asarray(evaluation.gradient, dtype=float)
        hessian = np.asarray(evaluation.hessian, dtype=float)
        table = pd.DataFrame(
            {
                "Estimate": x,
                "Std.Err": np.nan,
                "Gradient": gradient,
                "Error": np.nan,
                "Cor.Dec": pd.array([pd.NA] * x.size, dtype="Int64"),
                "Sig.Dig": pd.array([pd.NA] * x.size, dtype="Int64"),
            },
            index=self.params.index,
        )
        info = pd.Series(
            {
                "nobs": self.nobs,
                "logLik": -float(evaluation.nll),
                "niter": self.fit_info.n_iter,
                "max_grad": float(np.max(np.abs(gradient), initial=0.0)),
                "cond_H": np.nan,
                "logLik_error": np.nan,
            },
            dtype=object,
        )
        if not np.all(np.isfinite(hessian)):
            warnings.warn(
                "the Hessian at the estimates has values that are not finite: the fit is not "
                "a legitimate maximum, so its errors are not assessed",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
            return ConvergenceReport(info, table, np.full(x.size, np.nan), self.fit_info.message)
        eigenvalues = np.linalg.eigvalsh(hessian)[::-1]
        info["cond_H"] = _condition(eigenvalues)
        newton = _newton_step(hessian, gradient, eigenvalues)
        if newton is None:  # not positive definite, or nearly singular: as R, no errors
            return ConvergenceReport(info, table, eigenvalues, self.fit_info.message)
        factor, step = newton
        after = self.model.evaluate(x - step)
        _warn_if_unreliable(step, gradient, np.asarray(after.gradient, dtype=float))
        info["logLik_error"] = float(after.nll) - float(evaluation.nll)
        table["Std.Err"] = np.sqrt(np.diag(linalg.cho_solve(factor, np.eye(x.size))))
        table["Error"] = step
        table["Cor.Dec"] = correct_decimals(step).to_numpy()
        table["Sig.Dig"] = significant_digits(x, step).to_numpy()
        return ConvergenceReport(info, table, eigenvalues, self.fit_info.message)


def _warn_if_unreliable(step: FloatArray, gradient: FloatArray, after: FloatArray) -> None:
    """R's two warnings: a large step, or a gradient that grows at the step's end."""
    size = float(np.max(np.abs(step), initial=0.0))
    if size > LARGE_STEP:
        warnings.warn(
            f"the Newton step from the estimates is {size:.2g} (above {LARGE_STEP}): the "
            "convergence assessment may be unreliable because of large numerical error",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    if (
        np.max(np.abs(after), initial=0.0) > np.max(np.abs(gradient), initial=0.0)
        and size > EIGEN_TOL
    ):
        warnings.warn(
            "the gradient is larger after a Newton step from the estimates than at them: "
            "the convergence assessment may be unreliable; look at the likelihood near "
            "the estimates (res.profile(...))",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )


def _condition(eigenvalues: FloatArray) -> float:
    """``max / min`` eigenvalue where all are positive (R's ``cond.H``), else ``NaN``."""
    if eigenvalues.size == 0 or eigenvalues[-1] <= 0:
        return float("nan")
    return float(eigenvalues[0] / eigenvalues[-1])


def _newton_step(
    hessian: FloatArray, gradient: FloatArray, eigenvalues: FloatArray
) -> tuple[tuple[FloatArray, bool], FloatArray] | None:
    """The Cholesky factor of ``H`` and ``H^{-1} g``; None where R gives no errors."""
    if np.any(np.abs(eigenvalues) <= EIGEN_TOL):
        return None
    try:
        factor = linalg.cho_factor(hessian)
    except linalg.LinAlgError:
        return None
    return factor, linalg.cho_solve(factor, gradient)
