"""Ordinal regression families: cumulative, sequential and adjacent-category models.

=============  =====================================  ==========================
family         linear predictor (``reverse=False``)   positive slope moves to
=============  =====================================  ==========================
cumulative     ``P(Y <= j) = F(theta_j - x'beta)``    higher levels (clm)
sratio         ``F(eta_j) = P(Y = j | Y >= j)``       lower levels (VGAM)
cratio         ``F(eta_j) = P(Y > j | Y >= j)``       higher levels (VGAM)
acat           ``eta_j = log P(Y=j+1) / P(Y=j)``      higher levels (VGAM)
=============  =====================================  ==========================

``sratio``, ``cratio`` and ``acat`` follow VGAM's families with
``parallel = TRUE``: ``eta_j = (intercept j) + x'b``, so their coefficients equal
VGAM's; ``reverse=True`` gives VGAM's reverse variants (the steps run from the
top level down, and the direction of a positive slope flips).  The cumulative
family keeps R ``clm``'s signs and has no reverse variant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.links import Link, get_link
from ordstats.errors import SpecificationError
from ordstats.families.adjacent import AdjacentCategory
from ordstats.families.base import Family, StepFamily, StepProblem, step_names
from ordstats.families.capabilities import Capabilities
from ordstats.families.cumulative import Cumulative
from ordstats.families.cumulative.likelihood import (
    CLMProblem,
    CumulativeRowDerivatives,
    Evaluation,
    evaluate,
)
from ordstats.families.evaluation import StepEvaluation
from ordstats.families.pointwise import RowDerivatives
from ordstats.families.sequential import ContinuationRatio, StoppingRatio

__all__ = [
    "DEFAULT_FAMILY",
    "AdjacentCategory",
    "Capabilities",
    "ContinuationRatio",
    "Cumulative",
    "CumulativeRowDerivatives",
    "Family",
    "RowDerivatives",
    "StepEvaluation",
    "StepFamily",
    "StepProblem",
    "StoppingRatio",
    "evaluate_problem",
    "family_names",
    "get_family",
    "step_names",
]

_FAMILIES: dict[str, type[Family[Any]]] = {
    cls.name: cls for cls in (Cumulative, StoppingRatio, ContinuationRatio, AdjacentCategory)
}

#: The family a model has unless told otherwise (R's ``clm``); summaries and
#: model descriptions name the family only when it is another one.
DEFAULT_FAMILY = Cumulative.name


def evaluate_problem(
    problem: CLMProblem | StepProblem, params: FloatArray
) -> Evaluation | StepEvaluation:
    """Evaluate a prepared problem of any family at ``params``.

    A :class:`StepProblem` knows its family; a
    :class:`~ordstats.families.cumulative.likelihood.CLMProblem` is the cumulative model.
    """
    if isinstance(problem, StepProblem):
        return problem.family.evaluate(problem, params)
    return evaluate(problem, params)


def family_names() -> tuple[str, ...]:
    """Return the names accepted by :func:`get_family`."""
    return tuple(_FAMILIES)


def get_family(name: str, *, link: str | Link = "logit", reverse: bool = False) -> Family[Any]:
    """Return the family called ``name`` with the given link.

    Parameters
    ----------
    name : {"cumulative", "sratio", "cratio", "acat"}
        Case-insensitive.
    link : str or Link
        sratio and cratio accept every link of :func:`ordstats.core.links.get_link`;
        acat is the adjacent-category *logit* model and accepts ``"logit"`` only.
    reverse : bool
        VGAM's ``reverse=`` (not for the cumulative family).

    Returns
    -------
    Family

    Raises
    ------
    SpecificationError
        Unknown family, a link the family does not support, a non-boolean
        ``reverse`` or ``reverse=True`` for the cumulative family.

    Examples
    --------
    >>> get_family("sratio", link="probit")
    StoppingRatio(link='probit')
    >>> get_family("acat", reverse=True).positive_effect
    'lower'
    """
    if not isinstance(name, str) or name.lower() not in _FAMILIES:
        raise SpecificationError(
            f"unknown family {name!r}; choose one of {', '.join(map(repr, _FAMILIES))}"
        )
    if not isinstance(reverse, (bool, np.bool_)):
        raise SpecificationError(f"reverse must be True or False; got {reverse!r}")
    return _FAMILIES[name.lower()](get_link(link), reverse=bool(reverse))
