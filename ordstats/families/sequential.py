r"""Sequential models: stopping ratio (``sratio``) and continuation ratio (``cratio``).

A response that reaches level ``j + 1`` only through level ``j`` is a sequence
of binary decisions ("stop at ``j``, or go on?"), one per step
``j = 1, ..., K - 1`` (Tutz 2012, *Regression for Categorical Data*, sec. 9.2;
VGAM's ``sratio()`` and ``cratio()``).  With ``F`` the link's distribution:

``sratio``
    :math:`F(\eta_j) = P(Y = j \mid Y \ge j)`, the probability of stopping at
    ``j``.  A positive slope makes stopping likelier: **lower** levels.
``cratio``
    :math:`F(\eta_j) = P(Y > j \mid Y \ge j)`, the probability of going on.
    A positive slope moves the response to **higher** levels.  With a
    symmetric link (logit, probit, cauchit) it is ``sratio`` with every
    coefficient negated.

With ``reverse=True`` the steps run from the top down: ``sratio``
:math:`F(\eta_j) = P(Y = j + 1 \mid Y \le j + 1)` (positive = higher),
``cratio`` :math:`F(\eta_j) = P(Y \le j \mid Y \le j + 1)` (positive = lower).

An observation in level ``c`` contributes the binary outcomes of the steps it
took: "go on" at every ``j < c`` and "stop" at ``j = c`` (none at the top), so

.. math:: \log P(Y = c) = \sum_{j < c} \log P(\text{go on at } j)
          + [c < K] \log P(\text{stop at } c),

a sum of binary log-likelihoods whose derivatives in ``eta`` are diagonal:
``g = f/F = r``, ``h = (f'/f) g - g^2 = r (log r)'`` for an event of probability
``F(eta)`` (``r`` the reversed hazard) and ``g = -f/(1 - F) = -lambda``,
``h = -lambda (log lambda)'`` for its complement (``lambda`` the hazard); the
links compute ``log r``, ``log lambda`` and their derivatives without
cancellation (:meth:`~ordstats.core.links.Link.log_hazard_terms`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

import numpy as np

from ordstats._typing import BoolArray, FloatArray, IntArray
from ordstats.core.links import Link, link_names
from ordstats.families.base import StepFamily
from ordstats.families.capabilities import Capabilities
from ordstats.families.pointwise import DiagonalCurvature, Pointwise, cumsum_columns

__all__ = ["ContinuationRatio", "StoppingRatio"]


class _Sequential(StepFamily):
    """Shared maths of the sequential families; subclasses say which outcome is ``F``."""

    #: Whether ``F(eta)`` is the probability of stopping (sratio) or going on (cratio).
    event_is_stop: ClassVar[bool]

    # -- which binary outcome each (row, step) pair has ----------------------------

    @staticmethod
    def _at_risk(codes: IntArray, n_steps: int) -> BoolArray:
        """Mark the steps ``j <= c`` that an observation in level ``c`` took."""
        return np.arange(n_steps)[None, :] <= codes[:, None]

    def _events(self, codes: IntArray, n_steps: int) -> BoolArray:
        """Where the outcome of probability ``F(eta)`` happened (at-risk pairs only)."""
        stop = np.arange(n_steps)[None, :] == codes[:, None]
        return stop if self.event_is_stop else ~stop

    def _log_event_terms(self, eta: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``log P(stop)`` and ``log P(go on)`` at every ``eta``."""
        log_f, log_1mf = self.link.log_cdf(eta), self.link.log_sf(eta)
        return (log_f, log_1mf) if self.event_is_stop else (log_1mf, log_f)

    # -- StepFamily hooks ----------------------------------------------------------

    def _forward_pointwise(self, eta: FloatArray, codes: IntArray) -> _SequentialPointwise:
        n_steps = eta.shape[1]
        at_risk = self._at_risk(codes, n_steps)
        return _SequentialPointwise(self.link, eta, at_risk, self._events(codes, n_steps)[at_risk])

    def _forward_log_probabilities(self, eta: FloatArray) -> FloatArray:
        log_stop, log_go = self._log_event_terms(eta)
        n = eta.shape[0]
        reached = cumsum_columns(np.column_stack([np.zeros(n), log_go]))
        return reached + np.column_stack([log_stop, np.zeros(n)])

    def _forward_constraints(self, codes: IntArray, n_steps: int) -> tuple[IntArray, FloatArray]:
        # log F(eta) rises with eta, log(1 - F(eta)) falls: one sign per at-risk pair
        obs, step = np.nonzero(self._at_risk(codes, n_steps))
        sign = np.where(self._events(codes, n_steps)[obs, step], 1.0, -1.0)
        rows = np.zeros((len(obs), n_steps))
        rows[np.arange(len(obs)), step] = sign
        return obs, rows

    def _forward_intercepts(self, counts: FloatArray) -> FloatArray:
        reached = np.cumsum(counts[::-1])[::-1][:-1]  # weight at risk at each step
        stop = counts[:-1] / reached
        return np.asarray(self.link.ppf(stop if self.event_is_stop else 1.0 - stop), dtype=float)


class _SequentialPointwise(Pointwise):
    """Binary log-likelihood terms of the steps taken, evaluated once.

    Only the ``(row, step)`` pairs at risk are computed: ``log F(eta)`` where the
    outcome of probability ``F`` happened, ``log(1 - F(eta))`` elsewhere.
    """

    def __init__(self, link: Link, eta: FloatArray, at_risk: BoolArray, events: BoolArray):
        self.link, self.at_risk, self.events = link, at_risk, events
        self.x = eta[at_risk]
        if link.symmetric:  # 1 - F(x) = F(-x): one evaluation for both outcomes
            self.terms = link.log_cdf(np.where(events, self.x, -self.x))
        else:
            self.terms = np.empty_like(self.x)
            self.terms[events] = link.log_cdf(self.x[events])
            self.terms[~events] = link.log_sf(self.x[~events])
        self.log_prob = self._per_row(self.terms).sum(axis=1)

    def _per_row(self, values: FloatArray) -> FloatArray:
        out = np.zeros(self.at_risk.shape)
        out[self.at_risk] = values
        return out

    def derivatives(self) -> tuple[FloatArray, DiagonalCurvature]:
        # g = f/F = r (reversed hazard) for the event, -f/(1 - F) = -lambda (hazard)
        # for its complement; h = (f'/f) g - g^2 = r (log r)' or -lambda (log lambda)',
        # which does not cancel where the hazard is huge (cloglog, loglog tails)
        x = np.where(np.isfinite(self.x), self.x, 0.0)
        event, other = x[self.events], x[~self.events]
        g = np.empty_like(x)
        h = np.empty_like(x)
        with np.errstate(over="ignore"):
            _, log_r, slope_r = self.link.log_rhazard_terms(event)
            _, log_hazard, slope_hazard = self.link.log_hazard_terms(other)
        g[self.events] = np.exp(log_r)
        g[~self.events] = -np.exp(log_hazard)
        h[self.events] = g[self.events] * slope_r
        h[~self.events] = g[~self.events] * slope_hazard
        return self._per_row(g), DiagonalCurvature(self._per_row(h))


#: What both sequential families support; they differ only in the sign convention.
_SEQUENTIAL = Capabilities(
    nominal=True,
    scale=False,
    flexible_links=False,
    links=link_names(),
    banded=False,
    chunked=False,
    reverse=True,
    threshold_structures=False,
    ordered_cutpoints=False,
    latent_variable=False,
    positive_effect="lower",
    nominal_sign=1,
)


class StoppingRatio(_Sequential):
    """Stopping-ratio model (VGAM ``sratio``): ``eta_j = F^-1 P(Y = j | Y >= j)``."""

    name = "sratio"
    title = "Stopping-Ratio Model"
    CAPABILITIES = replace(_SEQUENTIAL, positive_effect="lower", absent_step_sign=1)
    event_is_stop = True

    @property
    def definition(self) -> str:  # noqa: D102
        f = self.link.name
        if self.reverse:
            return f"eta_j = {f} P(Y = j+1 | Y <= j+1)"
        return f"eta_j = {f} P(Y = j | Y >= j)"

    @property
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        if self.reverse:
            return (
                "odds of reaching level j+1 rather than stopping below it, among "
                "responses at most j+1: P(Y = j+1 | Y <= j+1) / P(Y <= j | Y <= j+1)"
            )
        return (
            "odds of stopping at level j rather than going beyond it, among "
            "responses at least j: P(Y = j | Y >= j) / P(Y > j | Y >= j)"
        )


class ContinuationRatio(_Sequential):
    """Continuation-ratio model (VGAM ``cratio``): ``eta_j = F^-1 P(Y > j | Y >= j)``."""

    name = "cratio"
    title = "Continuation-Ratio Model"
    CAPABILITIES = replace(_SEQUENTIAL, positive_effect="higher", absent_step_sign=-1)
    event_is_stop = False

    @property
    def definition(self) -> str:  # noqa: D102
        f = self.link.name
        if self.reverse:
            return f"eta_j = {f} P(Y <= j | Y <= j+1)"
        return f"eta_j = {f} P(Y > j | Y >= j)"

    @property
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        if self.reverse:
            return (
                "odds of staying below level j+1 rather than reaching it, among "
                "responses at most j+1: P(Y <= j | Y <= j+1) / P(Y = j+1 | Y <= j+1)"
            )
        return (
            "odds of going beyond level j rather than stopping there, among "
            "responses at least j: P(Y > j | Y >= j) / P(Y = j | Y >= j)"
        )
