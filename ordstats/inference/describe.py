"""One-line and tabular descriptions of fitted models for the tests between them.

:func:`describe_model` labels a fit in LR tests and ``anova`` rows as R's
``anova.clm`` lists it (formula, nominal and scale parts, non-default link and
threshold); :func:`models_frame` is R's ``attr(anova(...), "models")``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ordstats.core.thresholds import describe_threshold
from ordstats.design import r_label
from ordstats.design.core import TermsDesign
from ordstats.families import DEFAULT_FAMILY
from ordstats.inference.mixed import describe_mixed
from ordstats.results.fitted import OrdinalResults
from ordstats.results.mixed import MixedResults

__all__ = ["describe_model", "formula_with_parts", "model_columns", "models_frame"]


def _part_formula(terms: TermsDesign | None) -> str | None:
    """A nominal or scale part as R deparses it (``"~contact"``); None without one."""
    if terms is None:
        return None
    return "~" + r_label(terms.formula.strip() if terms.formula else " + ".join(terms.names))


def model_columns(res: OrdinalResults | MixedResults) -> dict[str, str]:
    """What R's ``anova.clm`` prints about a model: formula, nominal, scale, link, threshold.

    ``nominal`` and ``scale`` are ``"~1"`` for a model without that part, as R's.
    """
    if isinstance(res, MixedResults):
        mixed = res.model
        return {
            "formula": r_label(mixed.design.formula),
            "nominal": "~1",
            "scale": "~1",
            "link": mixed.problem.link.name,
            "threshold": describe_threshold(mixed.threshold),
        }
    model = res.model
    design = model.design
    return {
        "formula": r_label(design.formula)
        if design.formula
        else f"{model.endog_name} ~ exog ({len(model.exog_names)} columns)",
        "nominal": _part_formula(design.nominal) or "~1",
        "scale": _part_formula(design.scale) or "~1",
        "link": model.link.name,
        "threshold": describe_threshold(model.threshold),
    }


def formula_with_parts(res: OrdinalResults) -> str:
    """The formula with its nominal and scale parts: ``"rating ~ temp, nominal: ~contact"``."""
    columns = model_columns(res)
    return ", ".join(
        [columns["formula"]]
        + [f"{part}: {columns[part]}" for part in ("nominal", "scale") if columns[part] != "~1"]
    )


def describe_model(res: OrdinalResults | MixedResults) -> str:
    """Describe a fit in one line, as R's ``anova`` lists it.

    The formula, its nominal and scale parts (``"rating ~ temp, nominal: ~contact"``),
    and the family, link and threshold structure where they are not the default.
    """
    if isinstance(res, MixedResults):
        return describe_mixed(res)
    model = res.model
    text = formula_with_parts(res)
    extras = [f"family={model.family_spec.label}"] if model.family != DEFAULT_FAMILY else []
    extras += [f"link={model.link.name}"] if model.link.name != "logit" else []
    if model.threshold != "flexible":
        extras.append(f"threshold {describe_threshold(model.threshold)}")
    return text + (f" [{', '.join(extras)}]" if extras else "")


def models_frame(
    models: Sequence[OrdinalResults | MixedResults], index: Sequence[str]
) -> pd.DataFrame:
    """R's ``attr(anova(...), "models")``: one row per model.

    Columns ``formula``, ``nominal`` and ``scale`` (only when some model has
    that part, as R), ``link``, ``threshold``, and ``family`` when some model
    is not a cumulative one.
    """
    rows = [model_columns(res) for res in models]
    frame = pd.DataFrame(rows, index=list(index))
    for part in ("nominal", "scale"):
        if (frame[part] == "~1").all():
            frame = frame.drop(columns=part)
    families = [
        res.model.family_spec.label if isinstance(res, OrdinalResults) else DEFAULT_FAMILY
        for res in models
    ]
    if any(family != DEFAULT_FAMILY for family in families):
        frame["family"] = families
    return frame
