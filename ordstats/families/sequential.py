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
``g = f/F``, ``h = (f'/f) g - g^2`` for an event of probability ``F(eta)`` and
``g = -f/(1 - F)`` with the same ``h`` for its complement.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ordstats._typing import BoolArray, FloatArray, IntArray
from ordstats.families.base import StepFamily
from ordstats.links import link_names

__all__ = ["ContinuationRatio", "StoppingRatio"]


class _Sequential(StepFamily):
    """Shared maths of the sequential families; subclasses say which outcome is ``F``."""

    links: ClassVar[tuple[str, ...]] = link_names()
    #: Whether ``F(eta)`` is the probability of stopping (sratio) or going on (cratio).
    event_is_stop: ClassVar[bool]

    # -- which binary outcome each (row, step) pair has ----------------------------

    @staticmethod
    def _at_risk(codes: IntArray, n_steps: int) -> BoolArray:
        """Steps ``j <= c`` that an observation in level ``c`` took."""
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

    def _forward_log_prob(self, eta: FloatArray, codes: IntArray) -> FloatArray:
        n_steps = eta.shape[1]
        events = self._events(codes, n_steps)
        terms = np.where(events, self.link.log_cdf(eta), self.link.log_sf(eta))
        return np.where(self._at_risk(codes, n_steps), terms, 0.0).sum(axis=1)

    def _forward_derivatives(
        self, eta: FloatArray, codes: IntArray
    ) -> tuple[FloatArray, FloatArray]:
        n_steps = eta.shape[1]
        at_risk = self._at_risk(codes, n_steps)
        events = self._events(codes, n_steps)
        x = np.where(at_risk & np.isfinite(eta), eta, 0.0)
        log_pdf = self.link.log_pdf(x)
        g = np.where(
            events,
            np.exp(log_pdf - self.link.log_cdf(x)),
            -np.exp(log_pdf - self.link.log_sf(x)),
        )
        g = np.where(at_risk, g, 0.0)
        h = np.where(at_risk, self.link.dlog_pdf(x) * g - g * g, 0.0)
        return g, h

    def _forward_log_probabilities(self, eta: FloatArray) -> FloatArray:
        log_stop, log_go = self._log_event_terms(eta)
        n = eta.shape[0]
        reached = np.column_stack([np.zeros(n), np.cumsum(log_go, axis=1)])
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


class StoppingRatio(_Sequential):
    """Stopping-ratio model (VGAM ``sratio``): ``eta_j = F^-1 P(Y = j | Y >= j)``."""

    name = "sratio"
    title = "Stopping-Ratio Model"
    event_is_stop = True

    @property
    def definition(self) -> str:  # noqa: D102
        f = self.link.name
        if self.reverse:
            return f"eta_j = {f} P(Y = j+1 | Y <= j+1)"
        return f"eta_j = {f} P(Y = j | Y >= j)"

    @property
    def positive_effect(self) -> str:  # noqa: D102
        return "higher" if self.reverse else "lower"

    @property
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        if self.reverse:
            return ("odds of reaching level j+1 rather than stopping below it, among "
                    "responses at most j+1: P(Y = j+1 | Y <= j+1) / P(Y <= j | Y <= j+1)")
        return ("odds of stopping at level j rather than going beyond it, among "
                "responses at least j: P(Y = j | Y >= j) / P(Y > j | Y >= j)")


class ContinuationRatio(_Sequential):
    """Continuation-ratio model (VGAM ``cratio``): ``eta_j = F^-1 P(Y > j | Y >= j)``."""

    name = "cratio"
    title = "Continuation-Ratio Model"
    event_is_stop = False

    @property
    def definition(self) -> str:  # noqa: D102
        f = self.link.name
        if self.reverse:
            return f"eta_j = {f} P(Y <= j | Y <= j+1)"
        return f"eta_j = {f} P(Y > j | Y >= j)"

    @property
    def positive_effect(self) -> str:  # noqa: D102
        return "lower" if self.reverse else "higher"

    @property
    def odds_ratio_meaning(self) -> str:  # noqa: D102
        if self.reverse:
            return ("odds of staying below level j+1 rather than reaching it, among "
                    "responses at most j+1: P(Y <= j | Y <= j+1) / P(Y = j+1 | Y <= j+1)")
        return ("odds of going beyond level j rather than stopping there, among "
                "responses at least j: P(Y > j | Y >= j) / P(Y = j | Y >= j)")
