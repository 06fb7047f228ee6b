"""The cumulative link model (R's ``clm``) as a :class:`~ordstats.families.base.Family`.

Everything is delegated to the modules beside it (``likelihood``, ``start``,
``prediction``) and to :mod:`ordstats.families.separation`, so
``family="cumulative"`` is exactly the model ordstats has always fitted:
``P(Y <= j) = F(theta_j - x'beta)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ordstats._typing import FloatArray
from ordstats.core.links import Link
from ordstats.core.thresholds import threshold_names, threshold_parameter_names
from ordstats.errors import SpecificationError
from ordstats.families.base import Family
from ordstats.families.cumulative.likelihood import (
    CLMData,
    CLMProblem,
    Evaluation,
    evaluate,
    prepare,
)
from ordstats.families.cumulative.prediction import category_probabilities, cumulative_probabilities
from ordstats.families.cumulative.start import initial_params
from ordstats.families.separation import detect_separation

__all__ = ["Cumulative"]


class Cumulative(Family):
    """Cumulative link model: ``P(Y <= j) = F(theta_j - x'beta)`` (clm's signs).

    Raises
    ------
    SpecificationError
        For ``reverse=True``: the clm parametrisation already has positive
        effects meaning higher levels; VGAM's ``cumulative(reverse = TRUE)`` is
        the same model with intercepts ``-theta_j`` and slopes ``beta``
        (symmetric links; for cloglog/loglog swap the link).
    """

    name = "cumulative"
    title = "Cumulative Link Model"
    ordered_cutpoints = True

    def __init__(self, link: Link, reverse: bool = False) -> None:
        if reverse:
            raise SpecificationError(
                "reverse=True is not defined for family='cumulative': ordstats uses clm's "
                "parametrisation P(Y <= j) = F(theta_j - x'beta), where a positive beta already "
                "means higher levels. VGAM's cumulative(reverse = TRUE) is this model with "
                "intercepts -theta_j and slopes beta (with a symmetric link; with cloglog "
                "use link='loglog' and vice versa); VGAM's cumulative() has slopes -beta"
            )
        super().__init__(link, reverse=False)

    @property
    def definition(self) -> str:  # noqa: D102
        return f"P(Y <= j) = F(theta_j - x'beta), link {self.link.name} (F = its inverse)"

    @property
    def positive_effect(self) -> str:  # noqa: D102
        return "higher"

    @property
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        return "odds of a response above any cut-point, P(Y > j) / P(Y <= j), for every j"

    def prepare(self, data: CLMData) -> CLMProblem:  # noqa: D102
        return prepare(data)

    def evaluate(self, problem: CLMProblem, params: FloatArray) -> Evaluation:  # noqa: D102
        return evaluate(problem, params)

    def initial_params(self, problem: CLMProblem) -> FloatArray:  # noqa: D102
        return initial_params(problem)

    def parameter_names(self, threshold: str, levels: Sequence[str]) -> list[str]:  # noqa: D102
        return threshold_parameter_names(threshold, levels)

    def cutpoint_names(self, levels: Sequence[str]) -> list[str]:  # noqa: D102
        return threshold_names(levels)

    def category_probabilities(  # noqa: D102
        self,
        cutpoints: FloatArray,
        location: FloatArray,
        scale: FloatArray | None = None,
        *,
        link: Link | None = None,
    ) -> FloatArray:
        return category_probabilities(link or self.link, cutpoints, location, scale)

    def cumulative_probabilities(  # noqa: D102
        self,
        cutpoints: FloatArray,
        location: FloatArray,
        scale: FloatArray | None = None,
        *,
        link: Link | None = None,
    ) -> FloatArray:
        return cumulative_probabilities(link or self.link, cutpoints, location, scale)

    def diverging_parameters(self, problem: CLMProblem) -> list[int]:  # noqa: D102
        data = problem.data
        if data.X.shape[1] == 0:
            return []
        found = detect_separation(data.y, data.X, data.n_levels)
        if not found.separated:
            return []
        # thresholds diverge along with the effects; the effects are what to act on
        n_thr, q = problem.layout.n_threshold_block, data.n_levels - 1
        return [n_thr + j - q for j in found.diverging if j >= q]
