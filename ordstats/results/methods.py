"""Inference methods of :class:`~ordstats.results.fitted.OrdinalResults` (issue 4).

Thin wrappers: each reads the fitted state and calls a pure function in
:mod:`ordstats.results.covariance`, :mod:`ordstats.results.wald`, :mod:`ordstats.results.profile`,
:mod:`ordstats.results.goodness` or :mod:`ordstats.results.prediction_se`.  Kept out of
``results.py`` so that module stays small; :class:`OrdinalResults` inherits it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ordstats.errors import ConvergenceWarning, OrdstatsError, SpecificationError

if TYPE_CHECKING:
    from statsmodels.stats.contrast import ContrastResults

    from ordstats.estimation.model import OrdinalModel
    from ordstats.families.cumulative.banded import BandedCovariance
    from ordstats.results.covariance import Covariance
    from ordstats.results.prediction_se import PredictionResults


class InferenceMixin:
    """Robust covariances, Wald tests, profiles, goodness of fit, prediction SEs."""

    model: OrdinalModel
    params: pd.Series
    covariance: Covariance | BandedCovariance
    nonrobust_covariance: Covariance | BandedCovariance
    llf: float

    if TYPE_CHECKING:  # provided by OrdinalResults

        @property
        def llnull(self) -> float:  # noqa: D102
            ...

        @property
        def nobs(self) -> float:  # noqa: D102
            ...

    # -- covariance -----------------------------------------------------------

    @property
    def cov_type(self) -> str:
        """Which covariance the standard errors use (``covariance.kind``)."""
        return self.covariance.kind

    def get_robustcov_results(
        self, cov_type: str = "robust", cov_kwds: Mapping[str, Any] | None = None
    ) -> Any:
        """Return the same fit with a sandwich covariance behind ``bse``, tests and summary.

        Parameters
        ----------
        cov_type : {"robust", "HC0", "HC1", "cluster", "nonrobust", "expected"}
            See :mod:`ordstats.results.covariance`; ``"expected"`` is the inverse
            expected (Fisher) information, VGAM's covariance (see
            ``expected_covariance``).
        cov_kwds : mapping, optional
            ``{"groups": labels, "use_correction": True}`` for ``"cluster"``.

        Returns
        -------
        OrdinalResults
            A new results object; this one is unchanged.
        """
        from ordstats.results.covariance import canonical_cov_type, sandwich_covariance

        kind = canonical_cov_type(cov_type)
        ev = self._evaluation  # type: ignore[attr-defined]
        if kind == "nonrobust":
            covariance = self.nonrobust_covariance
        elif kind == "expected":
            if cov_kwds:
                raise SpecificationError("cov_type='expected' takes no cov_kwds")
            # cond(H) stays the observed Hessian's, as for the sandwich covariances
            covariance = replace(
                self.expected_covariance,  # type: ignore[attr-defined]
                cond=self.nonrobust_covariance.cond,
            )
        else:
            covariance = sandwich_covariance(
                self.nonrobust_covariance,
                ev.observation_scores(),
                self.model.data.weights,
                kind,
                cov_kwds,
                self.model.design.row_index,
            )
        with warnings.catch_warnings():  # a singular Hessian was reported by this fit
            warnings.simplefilter("ignore", ConvergenceWarning)
            info = self.fit_info  # type: ignore[attr-defined]
            return type(self)(  # type: ignore[call-arg]
                self.model, self.params.to_numpy(), ev, info, covariance=covariance
            )

    # -- Wald tests -----------------------------------------------------------

    def wald_test(self, constraints: Any) -> ContrastResults:
        """Joint Wald chi-square test of linear constraints on the parameters.

        ``W = (R p - q)' (R V R')^{-1} (R p - q)`` on as many df as constraints
        (``V`` the covariance in use, robust if fitted so).  A small p-value
        says the data contradict the constraints.

        Parameters
        ----------
        constraints : str, list, dict, ndarray or (R, q)
            E.g. ``"temp[T.warm] = contact[T.yes]"``; several separated by
            commas; thresholds in backticks (``"`1|2` = 0"``).  See
            :mod:`ordstats.results.wald`.

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
        """
        from ordstats.results.wald import wald_test

        return wald_test(
            self.params.to_numpy(), self.covariance.matrix, list(self.params.index), constraints
        )

    def t_test(self, constraints: Any) -> ContrastResults:
        """Test each linear constraint separately by a z test (estimate, SE, z, p, CI).

        Parameters
        ----------
        constraints
            As for :meth:`wald_test`.

        Returns
        -------
        statsmodels.stats.contrast.ContrastResults
            ``summary()`` prints one row per constraint.
        """
        from ordstats.results.wald import t_test

        return t_test(
            self.params.to_numpy(), self.covariance.matrix, list(self.params.index), constraints
        )

    # -- profile likelihood ---------------------------------------------------

    def _profile_scales(self) -> np.ndarray:
        return np.sqrt(np.diag(self.nonrobust_covariance.matrix))

    def _profile_conf_int(self, alpha: float, which: Sequence[str] | None) -> pd.DataFrame:
        from ordstats.results.profile import profile_conf_int

        self._check_profilable()
        return profile_conf_int(
            self.model.problem,
            self.params.to_numpy(),
            list(self.params.index),
            self._profile_scales(),
            alpha,
            which,
            stacklevel=3,
        )

    def _check_profilable(self) -> None:
        if self.nonrobust_covariance.singular:
            raise OrdstatsError(
                "cannot profile a fit with a singular Hessian: the parameters are not "
                "identified (see the fit's warning)"
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
            Parameter name (thresholds included).
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
        from ordstats.results.profile import profile_curve

        self._check_profilable()
        return profile_curve(
            self.model.problem,
            self.params.to_numpy(),
            list(self.params.index),
            self._profile_scales(),
            param,
            alpha,
            n_points,
            stacklevel=2,
        )

    def plot_profile(self, param: str, ax: Any = None, alpha: float = 0.001) -> Any:
        """Plot the signed-root profile of ``param`` against the Wald line (matplotlib)."""
        from ordstats.results.profile import plot_profile

        return plot_profile(self.profile(param, alpha=alpha), ax=ax)

    # -- goodness of fit ------------------------------------------------------

    def nominal_test(self) -> pd.DataFrame:
        """LR test of proportional odds for each location term (R's ``nominal_test``).

        Each term in turn becomes a nominal effect (one effect per cut-point)
        and the refit is compared with this model.  A small ``Pr(>Chi)`` says the
        term's effect differs between cut-points: keep it as ``nominal="~ term"``.
        See :mod:`ordstats.results.term_tests`.

        Returns
        -------
        pandas.DataFrame
            Rows ``<none>`` and one per term; ``Df``, ``logLik``, ``AIC``, ``LRT``,
            ``Pr(>Chi)``.
        """
        from ordstats.results.term_tests import nominal_test

        return nominal_test(self)  # type: ignore[arg-type]

    def scale_test(self) -> pd.DataFrame:
        """LR test of adding each location term as a scale effect (R's ``scale_test``).

        A small ``Pr(>Chi)`` says the spread of the latent variable changes with
        the term: add it as ``scale="~ term"``.  See :mod:`ordstats.results.term_tests`.

        Returns
        -------
        pandas.DataFrame
            As :meth:`nominal_test`.
        """
        from ordstats.results.term_tests import scale_test

        return scale_test(self)  # type: ignore[arg-type]

    def brant_test(self) -> pd.DataFrame:
        """Brant's Wald test of proportional odds, per column, term and overall.

        Fits the binary model of ``Y > j`` for each cut-point and tests that
        their slopes are equal (Stata's ``brant``).  A small ``Pr(>chi2)`` for a
        regressor says its effect differs between cut-points.  See
        :mod:`ordstats.results.goodness`.

        Returns
        -------
        pandas.DataFrame
            Rows ``All`` and each column/term; ``chi2``, ``df``, ``Pr(>chi2)``.
        """
        from ordstats.results.goodness import brant_test

        return brant_test(self)  # type: ignore[arg-type]

    @cached_property
    def pseudo_rsquared(self) -> pd.Series:
        """McFadden, Cox-Snell, Nagelkerke and McKelvey-Zavoina pseudo-R².

        See :mod:`ordstats.results.goodness` for the definitions.
        """
        from ordstats.results.goodness import pseudo_rsquared

        data = self.model.data
        eta = data.X @ self.params.to_numpy()[self.model.problem.layout.beta] + data.offset
        values = pseudo_rsquared(
            self.llf,
            self.llnull,
            self.nobs,
            eta,
            data.weights,
            self.model.link,
            self.model.problem.layout.n_zeta > 0,
        )
        if not self.model.family_spec.capabilities.latent_variable:
            # McKelvey-Zavoina needs the latent variable of a cumulative model
            values["mckelvey_zavoina"] = np.nan
        return values

    @property
    def prsquared(self) -> float:
        """McFadden's pseudo-R², ``1 - llf / llnull`` (statsmodels' name)."""
        return float(self.pseudo_rsquared["mcfadden"])

    @cached_property
    def resid_prob(self) -> pd.Series:
        """Probability-scale residuals ``P(Y < y) - P(Y > y)`` (Li & Shepherd 2012)."""
        from ordstats.results.goodness import probability_residuals, residuals_from_probabilities

        evaluation = self._evaluation  # type: ignore[attr-defined]
        if self.model.family_spec.capabilities.latent_variable:
            values = probability_residuals(evaluation, evaluation.link)  # lambda-hat
        else:
            prob = self.predict().to_numpy()  # type: ignore[attr-defined]
            values = residuals_from_probabilities(prob, self.model.data.y)
        return pd.Series(values, index=self.model.design.row_index, name="resid_prob")

    # -- prediction standard errors -------------------------------------------

    def _new_rows(self, newdata: Any, offset: Any) -> tuple[Any, pd.Index]:
        from ordstats.design import newdata_matrices
        from ordstats.results.prediction_se import NewRows

        model, data = self.model, self.model.data
        lay = model.problem.layout
        if newdata is None:
            empty = np.empty((data.n_obs, 0))
            rows = NewRows(
                data.X,
                data.offset,
                data.nominal if lay.n_nominal_cols else empty,
                data.scale if lay.n_zeta else empty,
            )
            return rows, model.design.row_index
        X, W, Z, index = newdata_matrices(model.design, newdata, model.formula_context)
        offsets = self._new_offset(newdata, offset, len(X))  # type: ignore[attr-defined]
        return NewRows(X, offsets, W, Z), index

    def _family_probability_gradients(self, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities and gradients of new rows under a sequential/adjacent family."""
        data = self.model.data
        n = rows.X.shape[0]
        new = replace(
            data,
            y=np.zeros(n, dtype=np.intp),
            X=rows.X,
            weights=np.ones(n),
            offset=rows.offset,
            nominal=rows.nominal,
        )
        return self.model.family_spec.probability_gradients(self.params.to_numpy(), new)

    def get_prediction(
        self, newdata: Any = None, which: str = "prob", *, offset: Any = None
    ) -> PredictionResults:
        """Predicted probabilities with delta-method standard errors and intervals.

        Parameters
        ----------
        newdata : pandas.DataFrame or array-like, optional
            Rows to predict for (default: the fitted rows).
        which : {"prob", "cumprob"}
            ``P(Y = j)`` for every level, or ``P(Y <= j)`` for the first ``K - 1``.
        offset : array-like, optional
            Offset for ``newdata`` when the model has one that is not a column.

        Returns
        -------
        PredictionResults
            ``predicted``, ``se``, ``conf_int(alpha)`` and ``summary_frame(alpha)``
            (intervals on the logit scale, as R's ``predict.clm``).
        """
        from ordstats.results.prediction_se import (
            PredictionResults,
            complementary_probabilities,
            probability_gradients,
        )

        if which not in ("prob", "cumprob"):
            raise OrdstatsError(f"which must be 'prob' or 'cumprob'; got {which!r}")
        rows, index = self._new_rows(newdata, offset)
        model = self.model
        cumulative = which == "cumprob"
        if model.family_spec.capabilities.latent_variable:
            link = self._evaluation.link  # type: ignore[attr-defined]  # at lambda-hat
            args = (
                link,
                self.params.to_numpy(),
                model.problem.layout,
                model.threshold_jacobian,
                rows,
            )
            categories, gradient = probability_gradients(*args)
            prob, gradient = (
                probability_gradients(*args, cumulative=True)
                if cumulative
                else (categories, gradient)
            )
        else:
            categories, gradient = self._family_probability_gradients(rows)
            prob = categories
            if cumulative:  # P(Y <= j) and its gradient are sums over the levels up to j
                prob = np.cumsum(categories, axis=1)[:, :-1]
                gradient = np.cumsum(gradient, axis=1)[:, :-1]
        complement = complementary_probabilities(categories, cumulative)
        columns = model.levels[:-1] if cumulative else model.levels
        return PredictionResults(
            prob, complement, gradient, self.covariance.matrix, index, columns, which
        )
