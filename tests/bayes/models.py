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
    "sim_thres_ragged": ("y | thres(gr = g) ~ x", {"data": "simulated_ragged"}, "default"),
    "sim_thres_bottom": ("y | thres(gr = g) ~ x", {"data": "simulated_no_bottom"}, "default"),
    "sim_thres_cratio": (
        "y | thres(gr = g) ~ x",
        {"data": "simulated_ragged", "family": "cratio"},
        "default",
    ),
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


def simulated_ragged(
    per_group: int = 80, seed: int = 26, *, lift_bottom: bool = False
) -> pd.DataFrame:
    """Five levels 1-5 in groups with different numbers of categories (``thres(gr = g)``).

    ``y* = x + e`` (``e`` logistic) cut at each group's thresholds; group ``c`` never
    goes above 4 and ``d`` above 3 (their top levels take what lies above); ``a`` and
    ``b`` have every level, unless ``lift_bottom``: then ``b``'s rows at 1 become 2, so
    that ``b`` lacks the lowest level.
    """
    rng = np.random.default_rng(seed)
    cuts = {
        "a": [-2.0, -0.5, 0.5, 2.0],
        "b": [-2.5, -1.0, 0.5, 1.5],
        "c": [-1.5, 0.0, 1.0],
        "d": [-1.0, 0.5],
    }
    frames = []
    for g, cut in cuts.items():
        x = rng.standard_normal(per_group)
        y = 1 + np.searchsorted(cut, x + rng.logistic(size=per_group))
        if g == "b" and lift_bottom:
            y = np.maximum(y, 2)
        frames.append(pd.DataFrame({"y": y, "x": x, "g": g}))
    data = pd.concat(frames, ignore_index=True)
    return data.assign(y=pd.Categorical(data["y"], categories=[1, 2, 3, 4, 5], ordered=True))


def load(name: str) -> pd.DataFrame:
    """A data set of ``ordstats.datasets`` or a simulated one of this module."""
    if name == "simulated_correlated":
        return simulated_correlated()
    if name == "simulated_ragged":
        return simulated_ragged()
    if name == "simulated_no_bottom":
        return simulated_ragged(lift_bottom=True)
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
