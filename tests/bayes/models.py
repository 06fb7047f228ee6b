"""The models whose NUTS posteriors are vendored in tests/data/reference/bayes/.

Shared by the generator (``make_reference.py``, run by hand) and the tests, so that
both fit exactly the same model with the same priors.
"""

from __future__ import annotations

from typing import Any

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
    "wine_sratio_cs": (
        "rating ~ temp",
        {"data": "wine", "nominal": "~ contact", "family": "sratio"},
        {"b": "normal(0, 5)"},
    ),
}


def posterior_mode(name: str) -> Any:
    """``model.fit(prior=...)`` of the named reference model."""
    formula, kwargs, prior = MODELS[name]
    kwargs = dict(kwargs)
    data = ordstats.datasets.load(kwargs.pop("data"))
    for column in kwargs.pop("ordered", []):  # mo() needs the levels' order
        data[column] = data[column].cat.as_ordered()
    model = ordstats.OrdinalModel.from_formula(formula, data, **kwargs)
    return model.fit(prior=prior)
