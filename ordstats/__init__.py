"""ordstats: ordinal regression in Python that agrees with R's ``ordinal`` package.

>>> import ordstats
>>> wine = ordstats.datasets.load("wine")
>>> res = ordstats.OrdinalModel.from_formula("rating ~ temp + contact", data=wine).fit()
>>> print(res.summary())  # doctest: +SKIP
"""

from __future__ import annotations

from ordstats import datasets, families, links, plotting
from ordstats.errors import (
    ConvergenceWarning,
    OrdstatsError,
    OrdstatsWarning,
    SeparationWarning,
)
from ordstats.inference import anova, lr_test, vuong_test
from ordstats.link_comparison import compare_links
from ordstats.model import OrdinalModel
from ordstats.results import OrdinalResults

__all__ = [
    "ConvergenceWarning",
    "OrdinalModel",
    "OrdinalResults",
    "OrdstatsError",
    "OrdstatsWarning",
    "SeparationWarning",
    "anova",
    "compare_links",
    "datasets",
    "families",
    "links",
    "lr_test",
    "plotting",
    "vuong_test",
]

__version__ = "0.1.0"
