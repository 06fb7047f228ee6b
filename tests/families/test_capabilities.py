"""The capabilities each family declares are exactly what the model enforces.

Every flag is checked against behaviour: a feature the family declares works,
one it lacks raises a SpecificationError that names the family; the sign
convention is checked on fits and on the likelihood.  No layer outside
``ordstats.families`` may test the family's name instead.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import ordstats
from ordstats.core.links import link_names
from ordstats.errors import ConvergenceWarning, SpecificationError
from ordstats.families import DEFAULT_FAMILY, Capabilities, family_names, get_family

PACKAGE = Path(ordstats.__file__).resolve().parent
ORIENTED = [
    (name, reverse)
    for name in family_names()
    for reverse in ((False, True) if get_family(name).capabilities.reverse else (False,))
]


def _model(wine, name, **kwargs):
    return ordstats.OrdinalModel.from_formula("rating ~ temp", wine, family=name, **kwargs)


FEATURES = {
    "nominal": lambda wine, name: _model(wine, name, nominal="~ contact"),
    "scale": lambda wine, name: _model(wine, name, scale="~ contact"),
    "flexible_links": lambda wine, name: _model(wine, name, link="aranda-ordaz"),
    "reverse": lambda wine, name: _model(wine, name, reverse=True),
    "threshold_structures": lambda wine, name: _model(wine, name, threshold="equidistant"),
    "banded": lambda wine, name: _model(wine, name).fit(banded=True),
    "chunked": lambda wine, name: _model(wine, name, chunksize=30),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
@pytest.mark.parametrize("name", family_names())
def test_declared_features_are_what_the_model_enforces(wine, name, feature):
    declared = getattr(get_family(name).capabilities, feature)
    attempt = FEATURES[feature]
    if declared:
        attempt(wine, name)
    else:
        with pytest.raises(SpecificationError) as info:
            attempt(wine, name)
        assert f"'{name}'" in str(info.value)  # the message names the family


@pytest.mark.parametrize("name", family_names())
def test_declared_links_are_the_accepted_ones(wine, name):
    caps = get_family(name).capabilities
    for link in link_names():
        if link in caps.links:
            assert _model(wine, name, link=link).link.name == link
        else:
            with pytest.raises(SpecificationError, match=f"family='{name}' supports link"):
                _model(wine, name, link=link)


def test_acat_with_scale_raises_as_before(wine):
    with pytest.raises(
        SpecificationError,
        match="scale effects are defined for the cumulative family only, not 'acat'",
    ):
        _model(wine, "acat", scale="~ contact")


@pytest.mark.parametrize("name", family_names())
def test_latent_variable_decides_the_latent_scale_methods(wine, name):
    res = _model(wine, name).fit()
    latent = get_family(name).capabilities.latent_variable
    assert np.isnan(res.pseudo_rsquared["mckelvey_zavoina"]) != latent
    if latent:
        with warnings.catch_warnings():  # wine's lowest level is separated by temp
            warnings.simplefilter("ignore", ConvergenceWarning)
            assert len(res.brant_test()) > 0
    else:
        with pytest.raises(SpecificationError, match=f"family='{name}'"):
            res.brant_test()
    # probability residuals: the latent formula and the generic one agree
    prob = res.predict().to_numpy()
    y = res.model.data.y
    below = np.cumsum(prob, axis=1) - prob
    above = 1.0 - np.cumsum(prob, axis=1)
    rows = np.arange(len(y))
    np.testing.assert_allclose(res.resid_prob, below[rows, y] - above[rows, y], atol=1e-12)


@pytest.mark.parametrize(("name", "reverse"), ORIENTED)
def test_positive_effect_is_where_a_positive_slope_moves_the_response(name, reverse):
    rng = np.random.default_rng(11)
    x = rng.normal(size=400)
    latent = 1.5 * x + rng.logistic(size=400)
    y = np.digitize(latent, [-1.5, 0.0, 1.5])  # larger x, higher levels
    fam = get_family(name, reverse=reverse)
    res = ordstats.OrdinalModel(y, x[:, None], family=name, reverse=reverse).fit()
    slope = float(res.params.iloc[-1])
    assert fam.positive_effect == fam.capabilities.positive_effect
    assert (slope > 0) == (fam.capabilities.positive_effect == "higher"), slope
    # reverse flips the sign convention and nothing else
    if reverse:
        forward = get_family(name).capabilities
        assert fam.capabilities.positive_effect != forward.positive_effect
        assert fam.capabilities == forward.reversed()


@pytest.mark.parametrize("name", family_names())
def test_nominal_sign_is_how_a_nominal_effect_enters_the_linear_predictor(name):
    """Equal nominal effects on every step are the slope times nominal_sign."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(120, 1))
    y = rng.integers(0, 4, size=120)
    location = ordstats.OrdinalModel(y, x, family=name)
    nominal = ordstats.OrdinalModel(y, None, nominal=x, family=name)
    sign = get_family(name).capabilities.nominal_sign
    alpha, beta = np.array([-1.0, 0.2, 1.1]), 0.7
    expected = location.loglike(np.r_[alpha, beta])
    assert nominal.loglike(np.r_[alpha, np.full(3, sign * beta)]) == pytest.approx(expected)
    assert nominal.loglike(np.r_[alpha, np.full(3, -sign * beta)]) != pytest.approx(expected)
    # and odds ratios of nominal effects are exp(nominal_sign * gamma)
    res = nominal.fit()
    odds = res.odds_ratios() if res.model.link.name == "logit" else None
    np.testing.assert_allclose(
        odds["odds_ratio"].to_numpy(), np.exp(sign * res.params.iloc[3:].to_numpy())
    )


@pytest.mark.parametrize("name", family_names())
def test_ordered_cutpoints_label_the_intercepts(wine, name):
    caps = get_family(name).capabilities
    text = _model(wine, name).fit().summary().as_text()
    assert ("Thresholds" in text) == caps.ordered_cutpoints
    assert ("Intercepts" in text) != caps.ordered_cutpoints


def test_capabilities_are_frozen_and_typed():
    caps = get_family("cumulative").capabilities
    assert isinstance(caps, Capabilities)
    with pytest.raises(AttributeError):
        caps.scale = False  # type: ignore[misc]
    assert DEFAULT_FAMILY == "cumulative"
    assert all(get_family(n).capabilities.nominal_sign in (1, -1) for n in family_names())


def test_no_layer_outside_families_tests_the_family_name():
    pattern = re.compile(
        r"""(family\w*|\.name)\s*[!=]=\s*["'](cumulative|sratio|cratio|acat)["']"""
        r"""|get\(\s*["']family["']\s*,\s*["']\w+["']\s*\)\s*[!=]="""
    )
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if "families" in path.relative_to(PACKAGE).parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize(
    ("name", "reverse", "sign"),
    [
        ("cumulative", False, 0),
        ("sratio", False, 1),
        ("sratio", True, -1),
        ("cratio", False, -1),
        ("cratio", True, 1),
        ("acat", False, -1),
        ("acat", True, 1),
    ],
)
def test_absent_step_sign_ends_a_groups_chain_at_its_top_level(name, reverse, sign):
    """thres(gr = g) puts a shorter group's absent steps at ``sign * s``; the step
    probability of its top level must then be 1 (stop) or its continuation 0."""
    from ordstats.families import get_family

    caps = get_family(name, reverse=reverse).capabilities
    assert caps.absent_step_sign == sign
    assert caps.summed_steps == (name == "acat")
