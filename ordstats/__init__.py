"""ordstats: ordinal regression in Python that agrees with R's ``ordinal`` package.

>>> import ordstats
>>> wine = ordstats.datasets.load("wine")
>>> res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", data=wine).fit()
>>> print(res.summary())  # doctest: +SKIP
"""

from __future__ import annotations

from ordstats import datasets, errors, families, learn, links, metrics, plotting
from ordstats._version import __version__ as __version__
from ordstats.config import get_options, set_options
from ordstats.data.survey import ReplicateDesign, SurveyDesign
from ordstats.design.censored import Censored
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    OrdstatsWarning,
    SeparationWarning,
)
from ordstats.estimation.bayes import prior
from ordstats.estimation.factorization import OrdinalFactorization
from ordstats.estimation.mixed import OrdinalMixedModel
from ordstats.estimation.model import OrdinalModel
from ordstats.estimation.options import ModelOptions
from ordstats.families.cumulative.simulate import simulate_ratings
from ordstats.inference.link_comparison import compare_links
from ordstats.inference.lr import anova, lr_test, vuong_test
from ordstats.results.factorization import FactorizationResults
from ordstats.results.fitted import OrdinalResults
from ordstats.results.margins.grid import datagrid
from ordstats.results.mixed import MixedResults
from ordstats.results.persistence import load
from ordstats.results.posterior import Posterior, PosteriorMode
from ordstats.results.regularized import CVResult, PenalizedResults, RegularizationPath
from ordstats.results.survey import SurveyResults

__all__ = [
    "CVResult",
    "Censored",
    "ConvergenceWarning",
    "FactorizationResults",
    "MixedResults",
    "ModelOptions",
    "OrdinalFactorization",
    "OrdinalMixedModel",
    "OrdinalModel",
    "OrdinalResults",
    "OrdstatsError",
    "OrdstatsWarning",
    "PenalizedResults",
    "Posterior",
    "PosteriorMode",
    "RegularizationPath",
    "ReplicateDesign",
    "SeparationWarning",
    "SurveyDesign",
    "SurveyResults",
    "anova",
    "compare_links",
    "datagrid",
    "datasets",
    "errors",
    "families",
    "get_options",
    "learn",
    "links",
    "load",
    "lr_test",
    "metrics",
    "plotting",
    "prior",
    "set_options",
    "simulate_ratings",
    "vuong_test",
]
