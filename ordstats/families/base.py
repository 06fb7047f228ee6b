r"""The interface every ordinal family implements, and the shared chain rule.

An ordinal *family* says how the category probabilities depend on ``K - 1``
linear predictors.  The cumulative model keeps its own likelihood
(:mod:`ordstats.families.cumulative.likelihood`); the sequential (stopping- and continuation-ratio)
and adjacent-category families share the structure of VGAM's families with
shared slopes (``parallel = TRUE``):

.. math::

    \eta_{ij} = \alpha_j + w_i^\top \gamma_j + x_i^\top b + o_i,
    \qquad j = 1, \dots, K - 1,

with intercepts ``alpha``, optional category-specific (non-parallel, "nominal")
effects ``gamma_j`` of the columns ``w``, shared slopes ``b`` and an offset ``o``.
A :class:`StepFamily` only supplies ``log P(Y_i = y_i)`` as a function of the
row ``eta_i`` with its first and second derivatives in ``eta_i``; the chain rule
to the parameters is common (:class:`StepEvaluation`):

.. math::

    \frac{\partial \ell}{\partial \gamma_{tj}} = \sum_i w^{(f)}_i z_{it} g_{ij},\quad
    \frac{\partial \ell}{\partial b} = \sum_i w^{(f)}_i x_i \textstyle\sum_j g_{ij},\quad
    \frac{\partial^2 \ell}{\partial \gamma_{tj}\,\partial \gamma_{sk}} =
        \sum_i w^{(f)}_i z_{it} z_{is} h_{ijk}, \ \dots

where ``z_i = (1, w_i)`` (so ``gamma_0 = alpha``), ``g_ij = d log P_i / d eta_ij``,
``h_ijk = d^2 log P_i / d eta_ij d eta_ik`` and ``w^(f)`` are frequency weights.

The parameter vector is ordered as in the cumulative model:
``[alpha, gamma_1, ..., gamma_r, b]`` (see :class:`ordstats.families.problem.ParamLayout`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

from ordstats._typing import FloatArray, IntArray
from ordstats.core.linalg import weighted_gram
from ordstats.core.links import FlexibleLink, Link
from ordstats.core.thresholds import Structure
from ordstats.errors import SpecificationError
from ordstats.families.capabilities import Capabilities, PositiveEffect
from ordstats.families.evaluation import StepEvaluation
from ordstats.families.pointwise import Curvature, Pointwise, RowDerivatives, cumsum_columns
from ordstats.families.problem import CLMData, FamilyEvaluation, ParamLayout, Problem
from ordstats.families.separation import SeparationResult, separation_from_constraints

__all__ = ["Family", "StepFamily", "StepProblem", "step_names"]


def step_names(levels: Sequence[str]) -> list[str]:
    """Names of the ``K - 1`` intercepts of the sequential and adjacent families.

    Linear predictor ``j`` always concerns the step between levels ``j`` and
    ``j + 1``, so its intercept is called ``"<level_j>:<level_j+1>"`` (VGAM calls
    it ``(Intercept):j``).

    Examples
    --------
    >>> step_names(["low", "mid", "high"])
    ['low:mid', 'mid:high']
    """
    return [f"{lo}:{hi}" for lo, hi in pairwise(levels)]


ProblemT = TypeVar("ProblemT", bound=Problem)


class Family(ABC, Generic[ProblemT]):
    """An ordinal regression family: likelihood, starting values, predictions.

    Subclasses are small strategy objects; :class:`~ordstats.OrdinalModel`
    holds one and calls it to fit and predict.

    Attributes
    ----------
    name : str
        ``"cumulative"``, ``"sratio"``, ``"cratio"`` or ``"acat"``.
    title : str
        Name of the model in summaries.
    CAPABILITIES : Capabilities
        What the family supports, declared by each subclass for
        ``reverse=False`` (see :attr:`capabilities`).
    link : Link
    reverse : bool
        VGAM's ``reverse=``: the steps run from the top level down.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    CAPABILITIES: ClassVar[Capabilities]

    def __init__(self, link: Link, reverse: bool = False) -> None:
        self.link = link
        self.reverse = bool(reverse)

    def __repr__(self) -> str:
        rev = ", reverse=True" if self.reverse else ""
        return f"{type(self).__name__}(link={self.link.name!r}{rev})"

    @property
    def label(self) -> str:
        """Short label such as ``"sratio"`` or ``"sratio (reverse)"``."""
        return f"{self.name} (reverse)" if self.reverse else self.name

    @property
    def capabilities(self) -> Capabilities:
        """What this family supports, with the sign convention of its orientation."""
        return self.CAPABILITIES.reversed() if self.reverse else self.CAPABILITIES

    @property
    def ordered_cutpoints(self) -> bool:
        """Whether the cut-points must increase (:attr:`Capabilities.ordered_cutpoints`)."""
        return self.capabilities.ordered_cutpoints

    # -- text for docstrings, summaries and odds ratios -----------------------

    @property
    @abstractmethod
    def definition(self) -> str:
        """What the linear predictors model, e.g. ``"eta_j = logit P(Y = j | Y >= j)"``."""

    @property
    def positive_effect(self) -> PositiveEffect:
        """Where a positive slope moves the response: ``"higher"`` or ``"lower"``."""
        return self.capabilities.positive_effect

    @property
    @abstractmethod
    def odds_ratio_meaning(self) -> str:
        """What ``exp(coefficient)`` multiplies under the logit link."""

    # -- the likelihood -------------------------------------------------------

    @abstractmethod
    def prepare(self, data: CLMData) -> ProblemT:
        """Precompute what :meth:`evaluate` needs; the result has ``data`` and ``layout``."""

    @abstractmethod
    def evaluate(self, problem: ProblemT, params: FloatArray) -> FamilyEvaluation:
        """Evaluate the negative log-likelihood (an ``Evaluation``-like object)."""

    @abstractmethod
    def initial_params(self, problem: ProblemT) -> FloatArray:
        """Return starting values for Newton's method."""

    def release_workspace(
        self, problem: ProblemT, evaluation: FamilyEvaluation | None = None
    ) -> None:
        """Free what ``problem`` and a fit's final ``evaluation`` keep only for speed.

        Called when a fit ends, so that a fitted model keeps no per-row work
        arrays (copies of the design, derivative terms); anything freed is
        computed again if it is needed.  The default frees nothing.
        """

    @abstractmethod
    def parameter_names(self, threshold: Structure, levels: Sequence[str]) -> list[str]:
        """Names of the free intercept (threshold) parameters."""

    @abstractmethod
    def cutpoint_names(self, levels: Sequence[str]) -> list[str]:
        """Names of the ``K - 1`` intercepts (thresholds) after any structure."""

    @abstractmethod
    def category_probabilities(
        self,
        cutpoints: FloatArray,
        location: FloatArray,
        scale: FloatArray | None = None,
        *,
        link: Link | None = None,
    ) -> FloatArray:
        """``P(Y = j)``, shape ``(n, K)``, from the intercepts and ``x'b + o``.

        Parameters
        ----------
        cutpoints : ndarray, shape (K - 1,) or (n, K - 1)
            Thresholds (cumulative) or intercepts (other families), per row
            when they vary.
        location : ndarray, shape (n,)
        scale : ndarray, shape (n,), optional
            ``exp(z'zeta)`` (cumulative family only).
        link : Link, optional
            The link with its estimated parameter (flexible links); default
            :attr:`link`.
        """

    def probabilities(self, params: FloatArray, rows: CLMData) -> FloatArray:
        """Category probabilities of new rows, shape ``(m, K)`` (no gradients).

        The probabilities of :meth:`probability_gradients` at a fraction of its
        cost (e.g. for held-out losses along a regularisation path).

        Parameters
        ----------
        params : ndarray, shape (k,)
        rows : CLMData
            The new rows' designs (``y`` and ``weights`` are not used).

        Returns
        -------
        ndarray, shape (m, K)
        """
        prob = np.empty((rows.n_obs, rows.n_levels))
        for level, evaluation in enumerate(self._every_level(rows, params)):
            prob[:, level] = evaluation.fitted
        return prob

    def probability_gradients(
        self, params: FloatArray, rows: CLMData
    ) -> tuple[FloatArray, FloatArray]:
        r"""Category probabilities of new rows and their gradients in the parameters.

        ``dP_k/d theta = P_k \, d log P_k / d theta``: the score of each row had
        it been in level ``k``, times ``P_k`` (for delta-method standard errors).

        Parameters
        ----------
        params : ndarray, shape (k,)
        rows : CLMData
            The new rows' designs (``y`` and ``weights`` are not used).

        Returns
        -------
        prob : ndarray, shape (m, K)
        gradient : ndarray, shape (m, K, k)
        """
        prob = np.empty((rows.n_obs, rows.n_levels))
        gradient = np.empty((rows.n_obs, rows.n_levels, params.size))
        for level, evaluation in enumerate(self._every_level(rows, params)):
            prob[:, level] = evaluation.fitted
            gradient[:, level] = evaluation.fitted[:, None] * evaluation.observation_scores()
        return prob, gradient

    def cumulative_probabilities(
        self,
        cutpoints: FloatArray,
        location: FloatArray,
        scale: FloatArray | None = None,
        *,
        link: Link | None = None,
    ) -> FloatArray:
        """``P(Y <= j)`` for ``j = 1, ..., K - 1``, shape ``(n, K - 1)``."""
        prob = self.category_probabilities(cutpoints, location, scale, link=link)
        return cumsum_columns(prob[:, :-1])

    @abstractmethod
    def row_derivatives(
        self,
        eta: FloatArray,
        y: IntArray,
        *,
        cutpoints: FloatArray | None = None,
        scale: FloatArray | None = None,
        link: Link | None = None,
    ) -> RowDerivatives:
        r"""``log P(Y_i = y_i)`` of every row and its derivatives in the linear predictors.

        See :class:`~ordstats.families.pointwise.RowDerivatives` for the
        quantities and the chain rule to the parameters; the subclasses say
        which linear predictors ``eta_i`` are (the location for the cumulative
        model, the ``K - 1`` step predictors otherwise).

        Parameters
        ----------
        eta : ndarray, shape (n,) or (n, K - 1)
            The linear predictors.
        y : ndarray of int, shape (n,)
            Observed levels ``0, ..., K - 1``.
        cutpoints : ndarray, shape (K - 1,) or (n, K - 1), optional
            Thresholds or intercepts, as in :meth:`category_probabilities`.
        scale : ndarray, shape (n,), optional
            ``exp(z'zeta)``, for families with scale effects.
        link : Link, optional
            The link with its estimated parameter (flexible links); default
            :attr:`link`.

        Returns
        -------
        RowDerivatives
        """

    @abstractmethod
    def diverging_parameters(self, problem: ProblemT) -> list[int]:
        """Return the indices of effect parameters without a finite MLE (separation)."""

    def expected_information(self, problem: ProblemT, params: FloatArray) -> FloatArray:
        r"""Fisher (expected) information at ``params``, shape ``(k, k)``.

        The expectation of the observed information over the response given
        the predictors: with :math:`s_{ik}` the score of row ``i`` had it been
        in level ``k``, :math:`\mathcal{I} = \sum_i w_i \sum_k P_{ik}\, s_{ik}
        s_{ik}^\top`.  VGAM's standard errors (Fisher scoring) are its inverse.
        For the adjacent-category logit it equals the observed information; for
        the sequential families it does not (which steps a row takes depends on
        its response), nor for the cumulative model.

        Parameters
        ----------
        problem
            As returned by :meth:`prepare`.
        params : ndarray, shape (k,)

        Returns
        -------
        ndarray, shape (k, k)
        """
        data = problem.data
        info = np.zeros((problem.layout.n_params, problem.layout.n_params))
        for evaluation in self._every_level(data, params):
            scores = evaluation.observation_scores()
            info += weighted_gram(scores, data.weights * evaluation.fitted)
        return info

    def _every_level(self, data: CLMData, params: FloatArray) -> Iterator[Any]:
        """Evaluate the likelihood of every row as if it were in level 0, 1, ..., K - 1."""
        for level in range(data.n_levels):
            as_level = replace(data, y=np.full(data.n_obs, level, dtype=np.intp))
            yield self.evaluate(self.prepare(as_level), params)


@dataclass(frozen=True, eq=False)
class StepProblem:
    """A :class:`~ordstats.families.problem.CLMData` prepared for a :class:`StepFamily`.

    Attributes
    ----------
    data : CLMData
    layout : ParamLayout
    family : StepFamily
    Z : ndarray, shape (n, 1 + r)
        ``[1, w]``: the columns whose effects vary by step.
    """

    data: CLMData
    layout: ParamLayout
    family: StepFamily
    Z: FloatArray


class StepFamily(Family["StepProblem"]):
    """A family whose ``K - 1`` linear predictors all share the slopes ``b``.

    Subclasses implement the ``_forward_*`` methods for ``reverse=False``;
    the reverse variant is the forward one on the response with its levels in
    the opposite order and the linear predictors in the opposite order.
    """

    def __init__(self, link: Link, reverse: bool = False) -> None:
        caps = self.CAPABILITIES
        if not caps.accepts_link(link.name, flexible=isinstance(link, FlexibleLink)):
            raise SpecificationError(
                f"family={self.name!r} supports link "
                + " or ".join(map(repr, caps.links))
                + f"; got {link.name!r}"
            )
        super().__init__(link, reverse)

    # -- per-row likelihood in the forward orientation -------------------------

    @abstractmethod
    def _forward_pointwise(self, eta: FloatArray, codes: IntArray) -> Pointwise:
        """``log P(Y_i = c_i)`` and its derivatives in ``eta`` for ``reverse=False``."""

    @abstractmethod
    def _forward_log_probabilities(self, eta: FloatArray) -> FloatArray:
        """``log P(Y_i = k)`` for every level, shape ``(n, K)``."""

    @abstractmethod
    def _forward_constraints(self, codes: IntArray, n_steps: int) -> tuple[IntArray, FloatArray]:
        """Rows of ``d eta`` whose sign must be >= 0 for no log-probability to fall.

        Returns the observation of each row and the row itself, shape ``(m, q)``.
        """

    @abstractmethod
    def _forward_intercepts(self, counts: FloatArray) -> FloatArray:
        """Maximum-likelihood intercepts without predictors from level counts."""

    # -- orientation ------------------------------------------------------------

    def _orient(self, eta: FloatArray, codes: IntArray) -> tuple[FloatArray, IntArray]:
        if not self.reverse:
            return eta, codes
        return eta[:, ::-1], eta.shape[1] - codes

    def pointwise(self, eta: FloatArray, codes: IntArray) -> Pointwise:
        """Evaluate ``log P(Y_i = y_i)`` at the linear predictors ``eta`` (n, K - 1).

        The derivatives in ``eta`` follow on demand (:meth:`Pointwise.derivatives`).
        """
        forward = self._forward_pointwise(*self._orient(eta, codes))
        return _Reversed(forward) if self.reverse else forward

    def log_prob(self, eta: FloatArray, codes: IntArray) -> FloatArray:
        """``log P(Y_i = y_i)`` given the linear predictors ``eta`` (n, K - 1)."""
        return self.pointwise(eta, codes).log_prob

    def log_probabilities(self, eta: FloatArray) -> FloatArray:
        """``log P(Y_i = k)`` for all levels, shape ``(n, K)``."""
        if not self.reverse:
            return self._forward_log_probabilities(eta)
        return self._forward_log_probabilities(eta[:, ::-1])[:, ::-1]

    def row_derivatives(
        self,
        eta: FloatArray,
        y: IntArray,
        *,
        cutpoints: FloatArray | None = None,
        scale: FloatArray | None = None,
        link: Link | None = None,
    ) -> RowDerivatives:
        r"""``log P(Y_i = y_i)`` and its derivatives in the ``K - 1`` step predictors.

        The linear predictors are VGAM's :math:`\eta_{ij} = \alpha_j + w_i^\top
        \gamma_j + x_i^\top b + o_i` (module equation), so the gradient is
        :math:`g_{ij}` and the Hessian :math:`h_{ijk}` of the chain rule in
        :mod:`ordstats.families.base`; the derivative in a shared location
        ``x_i'b + o_i`` is the row sum :math:`\sum_j g_{ij}`.  The curvature is
        diagonal for sratio and cratio and semiseparable for acat
        (:mod:`ordstats.families.pointwise`).  Every ``log P`` is computed from
        the link's ``log_cdf``/``log_sf`` (or log-sum-exp), so it stays finite
        at extreme predictors.

        Parameters
        ----------
        eta : ndarray, shape (n, K - 1) or (n,)
            The step predictors ``eta_ij``; with ``cutpoints``, the location
            ``x_i'b + o_i`` and ``eta_ij = cutpoints_j + eta_i``.
        y : ndarray of int, shape (n,)
            Observed levels ``0, ..., K - 1``.
        cutpoints : ndarray, shape (K - 1,) or (n, K - 1), optional
            The intercepts (with any non-parallel effects) of every step.
        scale, link
            Must be None (or this family's link): no scale effects, fixed link.

        Returns
        -------
        RowDerivatives
            ``gradient`` of shape ``(n, K - 1)``.

        Raises
        ------
        SpecificationError
            For ``scale``, another link, or ``eta`` of the wrong shape.
        """
        if scale is not None or (link is not None and link != self.link):
            raise SpecificationError(
                f"family={self.name!r} has no scale effects and only its own link"
            )
        eta = np.asarray(eta, dtype=float)
        if cutpoints is not None:
            eta = np.atleast_2d(np.asarray(cutpoints, dtype=float)) + eta[:, None]
        if eta.ndim != 2:
            raise SpecificationError(
                f"family={self.name!r} needs the K - 1 step predictors of every row, shape "
                f"(n, K - 1), or the location and cutpoints=; got shape {eta.shape}"
            )
        with np.errstate(invalid="ignore", over="ignore"):
            pointwise = self.pointwise(eta, np.asarray(y, dtype=np.intp))
            gradient, curvature = pointwise.derivatives()
        return RowDerivatives(pointwise.log_prob, gradient, curvature)

    # -- Family interface -------------------------------------------------------

    def prepare(self, data: CLMData) -> StepProblem:
        """Check that ``data`` suits the family and precompute ``[1, w]``.

        Raises
        ------
        SpecificationError
            For threshold structures or scale effects, which these families lack.
        """
        n_steps = data.n_levels - 1
        if data.threshold_jacobian.shape != (n_steps, n_steps) or not np.array_equal(
            data.threshold_jacobian, np.eye(n_steps)
        ):
            raise SpecificationError(
                f"family={self.name!r} has one free intercept per step; use "
                "threshold='flexible' (structured thresholds exist for the cumulative family only)"
            )
        if data.scale.size or data.scale_offset is not None:  # scale = ~ offset(q) too
            raise SpecificationError(
                f"scale effects are defined for the cumulative family only, not {self.name!r}"
            )
        nominal = data.nominal if data.nominal.size else np.empty((data.n_obs, 0))
        layout = ParamLayout(
            n_alpha=n_steps, n_nominal_cols=nominal.shape[1], n_beta=data.X.shape[1], n_zeta=0
        )
        Z = np.column_stack([np.ones(data.n_obs), nominal])
        return StepProblem(data=data, layout=layout, family=self, Z=Z)

    def evaluate(self, problem: StepProblem, params: FloatArray) -> StepEvaluation:
        """Evaluate the negative log-likelihood at ``params``."""
        return StepEvaluation(problem, params)

    def initial_params(self, problem: StepProblem) -> FloatArray:
        """Return the intercepts of the model without predictors, all effects zero.

        With an offset the intercepts are shifted by minus its weighted mean.
        """
        data = problem.data
        counts = np.bincount(data.y, weights=data.weights, minlength=data.n_levels).astype(float)
        start = np.zeros(problem.layout.n_params)
        if self.reverse:
            start[problem.layout.alpha] = self._forward_intercepts(counts[::-1])[::-1]
        else:
            start[problem.layout.alpha] = self._forward_intercepts(counts)
        if data.n_obs and np.any(data.offset):  # eta_j = alpha_j + x'b + o: absorb mean(o)
            start[problem.layout.alpha] -= float(np.average(data.offset, weights=data.weights))
        return start

    def parameter_names(self, threshold: Structure, levels: Sequence[str]) -> list[str]:
        """``"1:2", "2:3", ...`` (see :func:`step_names`)."""
        return step_names(levels)

    def cutpoint_names(self, levels: Sequence[str]) -> list[str]:
        """``"1:2", "2:3", ...`` (see :func:`step_names`)."""
        return step_names(levels)

    def category_probabilities(
        self,
        cutpoints: FloatArray,
        location: FloatArray,
        scale: FloatArray | None = None,
        *,
        link: Link | None = None,
    ) -> FloatArray:
        """``P(Y = k)`` from intercepts (shape (K - 1,) or (n, K - 1)) and ``x'b + o``.

        ``scale`` must be None and ``link`` (if given) this family's link.
        """
        if scale is not None or (link is not None and link != self.link):
            raise SpecificationError(
                f"family={self.name!r} has no scale effects and only its own link"
            )
        eta = np.atleast_2d(cutpoints) + np.asarray(location, dtype=float)[:, None]
        return np.exp(self.log_probabilities(eta))

    def diverging_parameters(self, problem: StepProblem) -> list[int]:
        """Return the effects that diverge because of separation.

        Found by a linear program (:meth:`detect_separation`).
        """
        found = self.detect_separation(problem)
        return [int(j) for j in found.diverging if j >= problem.layout.n_alpha]

    def detect_separation(self, problem: StepProblem) -> SeparationResult:
        """Look for a direction in parameter space along which no probability falls.

        ``d eta_ij = z_i' d gamma_j + x_i' d b`` is linear in the direction, so
        the family's constraints on ``d eta`` become linear constraints on it.
        """
        data, lay = problem.data, problem.layout
        rows = np.unique(np.column_stack([data.y, problem.Z[:, 1:], data.X]), axis=0)
        codes = rows[:, 0].astype(np.intp)
        Z = np.column_stack([np.ones(len(rows)), rows[:, 1 : problem.Z.shape[1]]])
        X = rows[:, problem.Z.shape[1] :]
        n_steps = data.n_levels - 1
        obs, d_eta = self._forward_constraints(n_steps - codes if self.reverse else codes, n_steps)
        if self.reverse:
            d_eta = d_eta[:, ::-1]
        # row-wise kron(z_i, d_eta) is t-major, matching the layout of gamma
        threshold_part = (Z[obs][:, :, None] * d_eta[:, None, :]).reshape(len(obs), -1)
        A = np.column_stack([threshold_part, X[obs] * d_eta.sum(axis=1, keepdims=True)])
        assert A.shape[1] == lay.n_params
        return separation_from_constraints(A)


class _Reversed(Pointwise):
    """A forward :class:`Pointwise` seen with the steps in the opposite order."""

    def __init__(self, forward: Pointwise) -> None:
        self.forward = forward
        self.log_prob = forward.log_prob

    def derivatives(self) -> tuple[FloatArray, Curvature]:
        g, curvature = self.forward.derivatives()
        return g[:, ::-1], curvature.reversed()
