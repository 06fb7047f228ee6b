"""A family's evaluation computed on centred/rescaled columns, reported in the user's parameters.

See :class:`ordstats.core.linalg.ShiftedBasis`: the likelihood is evaluated
at ``q = T^{-1} p`` on the transformed design, where the Hessian is well
conditioned; the gradient, Hessian and per-row scores are mapped back to
``p``, and :attr:`ShiftedEvaluation.internal` keeps the evaluation in ``q``
for Newton steps and the covariance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ordstats._typing import FloatArray
from ordstats.core.cached import cached_property
from ordstats.core.linalg import ShiftedBasis
from ordstats.core.links import Link
from ordstats.families.problem import FamilyEvaluation

__all__ = ["ShiftedEvaluation"]


@dataclass(eq=False)
class ShiftedEvaluation:
    """An evaluation in the internal parameters ``q``, seen in the user's ``p = T q``.

    Parameters
    ----------
    internal : FamilyEvaluation
        The family's evaluation at ``q`` on the transformed design.
    basis : ShiftedBasis
    """

    internal: FamilyEvaluation
    basis: ShiftedBasis
    #: negative log-likelihood, the same in both parametrisations
    nll: float = field(init=False)

    def __post_init__(self) -> None:
        self.nll = self.internal.nll

    @cached_property
    def gradient(self) -> FloatArray:
        """Gradient in ``p``: ``T^{-T} grad_q``."""
        return self.basis.gradient(self.internal.gradient)

    @cached_property
    def hessian(self) -> FloatArray:
        """Hessian in ``p``: ``T^{-T} H_q T^{-1}`` (as ill-conditioned as the data make it)."""
        return self.basis.hessian(self.internal.hessian)

    @property
    def link(self) -> Link:
        """The link at the evaluated parameters."""
        return self.internal.link

    @property
    def log_prob(self) -> FloatArray:
        """Per-row ``log P(Y_i = y_i)``."""
        return self.internal.log_prob

    def observation_scores(self) -> FloatArray:
        """Per-row gradient of the log-likelihood in ``p``."""
        return self.basis.gradient(self.internal.observation_scores())

    def __getattr__(self, name: str) -> Any:
        # per-row quantities (bounds ``upper``/``lower``, ``scale``, ``fitted``)
        # do not depend on the parametrisation; parameter-shaped ones are above
        if name in _ROW_ATTRIBUTES:
            return getattr(self.internal, name)
        raise AttributeError(name)


_ROW_ATTRIBUTES = frozenset({"upper", "lower", "scale", "fitted"})
