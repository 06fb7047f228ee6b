r"""Survival-type predictions of a model for a numeric (possibly censored) response.

For a response with numeric level values ``v_0 < ... < v_{K-1}`` and a row with
location ``eta``, scale ``s`` and standardised cut-points
``u_j = (theta_j(w) - eta)/s``, the survival function is

.. math:: S(t) = P(Y > t) = 1 - F(u_{j(t)}), \qquad j(t) = \max\{j : v_j \le t\},

with ``S(t) = 1`` below ``v_0`` and ``S(t) = 0`` from ``v_{K-1}`` on (a step function
that jumps at the level values, as Kaplan-Meier's; the intercept-only fit of a
right-censored response *is* Kaplan-Meier).  Its delta-method standard error is
``f(u_j) sqrt(g' V g)`` with ``g`` the gradient of ``u_j`` (the threshold rows of
``J`` over ``s``, ``-x/s`` for ``beta``, ``-u_j z`` for ``zeta``) and ``V`` the
covariance of the estimates; ``1 - F(u)`` comes from the link's survival function
``log_sf`` so that it keeps its digits far in the upper tail.  Intervals are formed
on the logit scale, as those of
:meth:`~ordstats.OrdinalResults.get_prediction`, so they stay inside ``(0, 1)``.
Only the covariances of the parameters that enter a requested cut-point are
formed, so a many-levels fit never builds its ``k x k`` covariance here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.core.thresholds import jacobian_row
from ordstats.errors import OrdstatsError, PredictionError
from ordstats.families.cumulative.banded import BandedCovariance
from ordstats.families.problem import row_scales
from ordstats.results.prediction_se import (
    NewRows,
    PredictionResults,
    PredictionSEMethods,
    warn_rank_deficient,
)

__all__ = ["SurvivalMethods", "SurvivalResults"]

#: Up to this many parameters the covariance matrix is read whole.
_DENSE_COVARIANCE_MAX = 2000


class SurvivalResults(PredictionResults):
    """``P(Y > t)`` per row and time, with delta-method standard errors.

    Attributes
    ----------
    predicted : pandas.DataFrame
        Survival probabilities, one row per new row and one column per time.
    se : pandas.DataFrame
        Delta-method standard errors, same shape.
    """

    def __init__(
        self, surv: FloatArray, cdf: FloatArray, se: FloatArray, index: pd.Index, times: FloatArray
    ) -> None:
        columns = pd.Index(times, name="time")
        self.which = "survival"
        self._complement = cdf
        self.predicted = pd.DataFrame(surv, index=index, columns=columns)
        self.se = pd.DataFrame(se, index=index, columns=columns)

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per (new row, time): ``surv``, ``se``, ``ci_lower``, ``ci_upper``.

        Intervals are formed on the logit scale (see :meth:`conf_int`).

        Parameters
        ----------
        alpha : float
            One minus the confidence level of the intervals.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``(row, time)``.
        """
        table = super().summary_frame(alpha).rename(columns={"prob": "surv"})
        table.index.names = ["row", "time"]
        return table

    def __repr__(self) -> str:
        rows, cols = self.predicted.shape
        return f"<SurvivalResults: P(Y > t) for {rows} rows x {cols} times>"

    def as_frame(self) -> pd.DataFrame:
        """``P(Y > t)``, ``P(Y <= t)`` and the SEs side by side (stacked over chunks)."""
        cdf = pd.DataFrame(self._complement, self.predicted.index, self.predicted.columns)
        return pd.concat({"surv": self.predicted, "cdf": cdf, "se": self.se}, axis=1)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, times: FloatArray) -> SurvivalResults:
        """The results whose :meth:`as_frame` is ``frame``."""
        return cls(
            frame["surv"].to_numpy(),
            frame["cdf"].to_numpy(),
            frame["se"].to_numpy(),
            frame.index,
            times,
        )


def numeric_level_values(values: list[Any]) -> FloatArray:
    """The response's level values as floats, or raise: survival needs a numeric response.

    Raises
    ------
    OrdstatsError
        Labels that are not numbers.
    """
    try:
        out = np.asarray([float(v) for v in values], dtype=float)
    except (TypeError, ValueError):
        out = np.full(len(values), np.nan)
    if not np.all(np.isfinite(out)):
        raise OrdstatsError(
            "survival() needs a numeric response (P(Y > t) for times t); this model's levels "
            f"are labels ({', '.join(map(repr, values[:3]))}, ...). Use get_prediction("
            "which='cumprob') for P(Y <= level)"
        )
    return out


def _times(times: Any, values: FloatArray) -> FloatArray:
    if times is None:
        return values[:-1]
    try:
        flags = np.asarray(times).dtype.kind == "b"
        out = np.atleast_1d(np.asarray(times, dtype=float))
    except (TypeError, ValueError):
        flags, out = False, np.array([np.nan])
    if flags:  # True is a slip, not the time 1
        out = np.array([np.nan])
    if out.ndim != 1 or out.size == 0 or not np.all(np.isfinite(out)):
        raise OrdstatsError(
            f"times must be one or more finite numbers (the t of P(Y > t)); got {times!r:.100}"
        )
    return out


def _covariance_block(covariance: Any, index: IntArray) -> FloatArray:
    """``V[index][:, index]`` without forming ``V`` for a large many-levels fit."""
    if (
        isinstance(covariance, BandedCovariance)
        and covariance.hessian.shape[0] > _DENSE_COVARIANCE_MAX
    ):
        if covariance.singular:
            return np.full((len(index), len(index)), np.nan)
        factor = covariance.hessian.factor()
        k = covariance.hessian.shape[0]
        columns = np.empty((len(index), len(index)))
        for c, j in enumerate(index):
            unit = np.zeros(k)
            unit[j] = 1.0
            columns[:, c] = factor.solve(unit)[index]
        return 0.5 * (columns + columns.T)
    return np.asarray(covariance.matrix, dtype=float)[np.ix_(index, index)]


class SurvivalMethods(PredictionSEMethods):
    """``P(Y > t)`` for a numeric response (the survival function), with intervals."""

    def survival(
        self, newdata: Any = None, times: Any = None, *, offset: Any = None
    ) -> SurvivalResults:
        """Survival probabilities ``P(Y > t)`` per row with delta-method standard errors.

        For a right-censored response (:class:`~ordstats.Censored`) this is the
        survival function of each covariate pattern; the fit without predictors
        gives Kaplan-Meier's estimate. ``P(Y > t)`` is a step function that jumps
        at the response's level values: ``1`` below the lowest, ``0`` from the
        highest on.

        Parameters
        ----------
        newdata : pandas.DataFrame or array-like, optional
            Rows to predict for (default: the fitted rows, also of data read in
            chunks or from Dask, which are streamed).
        times : float or array-like, optional
            The ``t`` of ``P(Y > t)`` (default: every level value but the highest).
        offset : float or array-like, optional
            Offset for ``newdata`` (as for :meth:`get_prediction`).

        Returns
        -------
        SurvivalResults
            ``predicted`` and ``se`` (rows x times), ``conf_int(alpha)`` and
            ``summary_frame(alpha)``.

        Raises
        ------
        OrdstatsError
            For a response with labels that are not numbers, a family other than
            the cumulative one, or times that are not finite numbers.
        """
        model = self.model
        if not model.family_spec.capabilities.latent_variable:
            raise OrdstatsError(
                f"survival() needs a cumulative link model; this model has family="
                f"{model.family!r}. Use get_prediction(which='cumprob') instead"
            )
        values = numeric_level_values(list(model.design.response.values))
        t = _times(times, values)
        streamed = self._fitted_rows_table(  # type: ignore[attr-defined]
            newdata, offset, lambda rows: self.survival(rows, t).as_frame(), "survival()"
        )
        if streamed is not None:  # the fitted rows of data read in chunks
            return SurvivalResults.from_frame(streamed, t)
        warn_rank_deficient(model.design, newdata)
        rows, index = self._new_rows(newdata, offset)
        cut = np.searchsorted(values, t, side="right") - 1  # -1: below every level
        surv = np.where(cut < 0, 1.0, 0.0)[None, :].repeat(rows.X.shape[0], axis=0)
        cdf = 1.0 - surv
        se = np.zeros_like(surv)
        inside = np.flatnonzero((cut >= 0) & (cut < len(values) - 1))
        for c in np.unique(cut[inside]):
            columns = inside[cut[inside] == c]
            s_c, f_c, se_c = self._survival_at_cut(rows, int(c))
            surv[:, columns], cdf[:, columns] = s_c[:, None], f_c[:, None]
            se[:, columns] = se_c[:, None]
        return SurvivalResults(surv, cdf, se, index, t)

    def _survival_at_cut(
        self, rows: NewRows, cut: int
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``1 - F(u_cut)``, ``F(u_cut)`` and the delta-method SE for every new row."""
        model = self.model
        lay = model.problem.layout
        params = self.params.to_numpy()
        link = self._evaluation.link  # type: ignore[attr-defined]
        if lay.n_lambda:
            raise PredictionError(
                "survival() does not yet carry the uncertainty of a flexible link's "
                "parameter; fit with a standard link"
            )
        m = rows.X.shape[0]
        j_row = jacobian_row(model.threshold_jacobian, cut)
        w1 = np.hstack([np.ones((m, 1)), rows.nominal]) if lay.n_nominal_cols else np.ones((m, 1))
        design = (w1[:, :, None] * j_row[None, None, :]).reshape(m, -1)
        fixed = 0.0 if model.threshold_offset is None else float(model.threshold_offset[cut])
        eta = rows.X @ params[lay.beta] + rows.offset
        scales = row_scales(rows, params[lay.zeta])
        scale = np.ones(m) if scales is None else scales
        u = (design @ params[lay.thresholds] + fixed - eta) / scale
        # the parameters that enter u: the used threshold columns, then every other one
        used = np.flatnonzero(np.any(design != 0, axis=0))
        index = np.concatenate([used, np.arange(lay.n_threshold_block, lay.n_params)])
        grad = np.zeros((m, len(index)))
        grad[:, : len(used)] = design[:, used] / scale[:, None]
        nb = lay.n_beta
        grad[:, len(used) : len(used) + nb] = -rows.X / scale[:, None]
        if lay.n_zeta:
            grad[:, len(used) + nb : len(used) + nb + lay.n_zeta] = -u[:, None] * rows.scale
        block = _covariance_block(self.covariance, index)
        variance = np.einsum("mi,ij,mj->m", grad, block, grad)
        density = np.exp(link.log_pdf(u))
        surv, cdf = np.exp(link.log_sf(u)), np.exp(link.log_cdf(u))
        return surv, cdf, density * np.sqrt(np.maximum(variance, 0.0))
