"""What every group of results methods reads: the fitted state of :class:`OrdinalResults`.

The results methods are grouped by what they do, each group beside the
numerics it calls: covariance choices (:mod:`~ordstats.results.covariance`),
Wald tests (:mod:`~ordstats.results.wald`), profile likelihood
(:mod:`~ordstats.results.profile`), term tests (:mod:`~ordstats.results.term_tests`),
goodness of fit (:mod:`~ordstats.results.goodness`) and prediction standard
errors (:mod:`~ordstats.results.prediction_se`).  :class:`FittedState` declares
the attributes they read; :class:`~ordstats.results.fitted.OrdinalResults`
provides them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from ordstats.families.cumulative.banded import BandedCovariance
    from ordstats.results.protocols import FittedModel
    from ordstats.results.values import Covariance, FitInfo

__all__ = ["FittedState"]


class FittedState:
    """The attributes of a fit that the results methods read (declarations only)."""

    model: FittedModel
    params: pd.Series
    llf: float
    fit_info: FitInfo

    if TYPE_CHECKING:  # provided by OrdinalResults

        @property
        def covariance(self) -> Covariance | BandedCovariance:  # noqa: D102
            ...

        @property
        def nonrobust_covariance(self) -> Covariance | BandedCovariance:  # noqa: D102
            ...

        @property
        def llnull(self) -> float:  # noqa: D102
            ...

        @property
        def k_params(self) -> int:  # noqa: D102
            ...

        @property
        def aic(self) -> float:  # noqa: D102
            ...

        @property
        def nobs(self) -> float:  # noqa: D102
            ...

        @property
        def converged(self) -> bool:  # noqa: D102
            ...

        @property
        def df_resid(self) -> float:  # noqa: D102
            ...

        @property
        def data_removed(self) -> bool:  # noqa: D102
            ...
