"""The models whose NUTS posteriors are vendored in tests/data/reference/bayes/.

Shared by the generator (``make_reference.py``, run by hand) and the tests, so that
both fit exactly the same model with the same priors.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import ordstats

#: name -> (formula, keyword arguments of from_formula, prior of fit(prior=...))
MODELS: dict[str, tuple[str, dict[str, Any], Any]] = {
    "wine_clm": ("rating ~ temp + contact", {"data": "wine"}, "default"),
    "housing_clm": (
        "Sat ~ Infl + Type + Cont",
        {"data": "housing", "weights": "Freq"},
        "default",
    ),
    "wine_clmm": ("rating ~ temp + contact + (1|judge)", {"data": "wine"}, "default"),
    "housing_mo": (
        "Sat ~ mo(Infl) + Type + Cont",
        {"data": "housing", "weights": "Freq", "ordered": ["Infl"]},
        "default",
    ),
    "sim_cor_clmm": ("y ~ x + (1 + x|g)", {"data": "simulated_correlated"}, "default"),
    "wine_sratio_cs": (
        "rating ~ temp",
        {"data": "wine", "nominal": "~ contact", "family": "sratio"},
        {"b": "normal(0, 5)"},
    ),
    "wine_thres": ("rating | thres(gr = contact) ~ temp", {"data": "wine"}, "default"),
}


def simulated_correlated(groups: int = 40, per_group: int = 15, seed: int = 26) -> pd.DataFrame:
    """A logit clmm with a correlated term: SDs 1.0 (intercept) and 0.5 (x), correlation 0.5.

    ``y* = x + u_g + v_g x + e``, ``e`` logistic, cut at -1.5, 0 and 1.5 (4 levels).
    """
    rng = np.random.default_rng(seed)
    sd = np.array([1.0, 0.5])
    cov = np.outer(sd, sd) * np.array([[1.0, 0.5], [0.5, 1.0]])
    effects = rng.multivariate_normal(np.zeros(2), cov, size=groups)
    g = np.repeat(np.arange(groups), per_group)
    x = rng.standard_normal(g.size)
    latent = x + effects[g, 0] + effects[g, 1] * x + rng.logistic(size=g.size)
    y = np.searchsorted([-1.5, 0.0, 1.5], latent)
    return pd.DataFrame({"y": pd.Categorical(y, ordered=True), "x": x, "g": g.astype(str)})


def load(name: str) -> pd.DataFrame:
    """A data set of ``ordstats.datasets`` or a simulated one of this module."""
    if name == "simulated_correlated":
        return simulated_correlated()
    return ordstats.datasets.load(name)


def posterior_mode(name: str) -> Any:
    """``model.fit(prior=...)`` of the named reference model."""
    formula, kwargs, prior = MODELS[name]
    kwargs = dict(kwargs)
    data = load(kwargs.pop("data"))
    for column in kwargs.pop("ordered", []):  # mo() needs the levels' order
        data[column] = data[column].cat.as_ordered()
    model = ordstats.OrdinalModel.from_formula(formula, data, **kwargs)
    return model.fit(prior=prior)


def wine_extended(wine: pd.DataFrame) -> pd.DataFrame:
    """Wine with a random-slope column ``z``, frequency weights ``w`` and an offset ``off``."""
    n = len(wine)
    return wine.assign(
        z=np.linspace(0.5, 1.5, n),
        w=np.tile([1.0, 2.0, 0.5], n // 3),
        off=np.linspace(-0.3, 0.3, n),
    )
