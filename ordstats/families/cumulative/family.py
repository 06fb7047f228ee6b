"""The cumulative link model (R's ``clm``) as a :class:`~ordstats.families.base.Family`.

Everything is delegated to the modules beside it (``likelihood``, ``start``,
``prediction``) and to :mod:`ordstats.families.separation`, so
``family="cumulative"`` is exactly the model ordstats has always fitted:
``P(Y <= j) = F(theta_j - x'beta)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link, link_names
from ordstats.core.thresholds import Structure, threshold_names, threshold_parameter_names
from ordstats.errors import SpecificationError
from ordstats.families.base import Family
from ordstats.families.capabilities import Capabilities
from ordstats.families.cumulative.likelihood import (
    CLMData,
    CLMProblem,
    CumulativeRowDerivatives,
    Evaluation,
    evaluate,
    prepare,
    row_derivatives,
)
from ordstats.families.cumulative.prediction import category_probabilities, cumulative_probabilities
from ordstats.families.cumulative.start import initial_params
from ordstats.families.problem import FamilyEvaluation
from ordstats.families.separation import detect_separation

__all__ = ["Cumulative"]


class Cumulative(Family[CLMProblem]):
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
    CAPABILITIES = Capabilities(
        nominal=True,
        scale=True,
        flexible_links=True,
        links=link_names(),
        banded=True,
        chunked=True,
        reverse=False,
        threshold_structures=True,
        ordered_cutpoints=True,
        latent_variable=True,
        positive_effect="higher",
        nominal_sign=-1,
    )

    def __init__(self, link: Link, reverse: bool = False) -> None:
        if reverse and not self.CAPABILITIES.reverse:
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
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        return "odds of a response above any cut-point, P(Y > j) / P(Y <= j), for every j"

    def prepare(self, data: CLMData) -> CLMProblem:  # noqa: D102
        return prepare(data)

    def evaluate(self, problem: CLMProblem, params: FloatArray) -> Evaluation:  # noqa: D102
        return evaluate(problem, params)

    def initial_params(self, problem: CLMProblem) -> FloatArray:  # noqa: D102
        return initial_params(problem)

    def release_workspace(  # noqa: D102
        self, problem: CLMProblem, evaluation: FamilyEvaluation | None = None
    ) -> None:
        problem.release_workspace()
        if isinstance(evaluation, Evaluation):
            evaluation.release_row_terms()

    def parameter_names(self, threshold: Structure, levels: Sequence[str]) -> list[str]:  # noqa: D102
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

    def row_derivatives(
        self,
        eta: FloatArray,
        y: IntArray,
        *,
        cutpoints: FloatArray | None = None,
        scale: FloatArray | None = None,
        link: Link | None = None,
    ) -> CumulativeRowDerivatives:
        r"""``log P(Y_i = y_i)`` and its derivatives in the location and the cut-points.

        The linear predictor is the location :math:`\eta_i = x_i^\top\beta + o_i`
        of :math:`P(Y_i \le j) = F((\theta_j - \eta_i)/s_i)` (Christensen 2019,
        eq. 2), one per row (``m = 1``); the derivatives in the two cut-points
        of the observed level come along (see
        :class:`~ordstats.families.cumulative.likelihood.CumulativeRowDerivatives`).
        They are taken at fixed scale ``s_i`` and fixed link parameter: the
        derivatives in ``zeta`` and ``lambda`` stay inside
        :class:`~ordstats.families.cumulative.likelihood.Evaluation`.  The
        pointwise terms are those of the likelihood
        (:func:`~ordstats.families.cumulative.likelihood.interval_derivatives`),
        from the link's ``log_pdf``, ``dlog_pdf``, ``log_cdf`` and ``log_sf``,
        so they stay finite where ``F(u) - F(l)`` underflows.

        Parameters
        ----------
        eta : ndarray, shape (n,)
            The location ``x_i'beta + o_i``.
        y : ndarray of int, shape (n,)
            Observed levels ``0, ..., K - 1``.
        cutpoints : ndarray, shape (K - 1,) or (n, K - 1)
            Thresholds ``theta`` (required).
        scale : ndarray, shape (n,), optional
            ``s_i = exp(z_i'zeta)``; default 1.
        link : Link, optional
            The link at its estimated parameter (flexible links); default :attr:`link`.

        Returns
        -------
        CumulativeRowDerivatives

        Raises
        ------
        SpecificationError
            Without ``cutpoints``.
        """
        if cutpoints is None:
            raise SpecificationError(
                "family='cumulative' needs the thresholds: row_derivatives(eta, y, cutpoints=...)"
            )
        return row_derivatives(link or self.link, eta, y, cutpoints, scale)

    def diverging_parameters(self, problem: CLMProblem) -> list[int]:  # noqa: D102
        data = problem.data
        if data.X.shape[1] == 0:
            return []
        found = detect_separation(data.y, data.X, data.n_levels, y_low=data.y_low)
        if not found.separated:
            return []
        # thresholds diverge along with the effects; the effects are what to act on
        n_thr, q = problem.layout.n_threshold_block, data.n_levels - 1
        return [n_thr + j - q for j in found.diverging if j >= q]
