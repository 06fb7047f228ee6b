r"""What a family supports, declared once so that no layer tests family names.

Each :class:`~ordstats.families.base.Family` subclass declares a
:class:`Capabilities` for its forward orientation (``reverse=False``);
:attr:`Family.capabilities <ordstats.families.base.Family.capabilities>` gives
the one of an instance, with the sign convention of its orientation.  The model,
the results and the inference layers ask these flags instead of comparing
``family == "cumulative"``:

=====================  ==========  ======================  =========================
flag                   cumulative  sratio, cratio          acat
=====================  ==========  ======================  =========================
nominal                yes         yes (non-parallel)      yes (non-parallel)
scale                  yes         no                      no
flexible_links         yes         no                      no
links                  all five    all five                logit
banded                 yes         no                      no
chunked                yes         no                      no
reverse                no          yes                     yes
threshold_structures   yes         no                      no
ordered_cutpoints      yes         no                      no
latent_variable        yes         no                      no
positive_effect        higher      lower / higher          higher
nominal_sign           -1          +1                      +1
absent_step_sign       0           +1 / -1                 -1
summed_steps           no          no                      yes
=====================  ==========  ======================  =========================

(``positive_effect`` and ``absent_step_sign`` are for ``reverse=False``;
``reverse=True`` flips them.)

The two sign fields say how to read coefficients.  In the cumulative model
(R's ``clm``), :math:`P(Y \le j) = F(\theta_j + w^\top\gamma_j - x^\top\beta)`:
a slope enters the linear predictor with a minus sign and a nominal effect with
a plus sign, so a nominal effect ``gamma_j`` acts as a slope ``-gamma_j`` on the
odds of ``Y > j`` (``nominal_sign = -1``).  In the step families
:math:`\eta_j = \alpha_j + w^\top\gamma_j + x^\top b`, so ``gamma_j`` acts as a
slope on step ``j`` (``nominal_sign = +1``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["Capabilities", "PositiveEffect"]

#: Where a positive slope moves the response.
PositiveEffect = Literal["higher", "lower"]


@dataclass(frozen=True)
class Capabilities:
    """Features a family supports and its sign convention.

    Attributes
    ----------
    nominal : bool
        Category-specific effects (``nominal=``): effects on the thresholds of
        the cumulative model, non-parallel slopes ``gamma_j`` otherwise.
    scale : bool
        Log-scale effects (``scale=``).
    flexible_links : bool
        Links with an estimated shape parameter (Aranda-Ordaz, log-gamma).
    links : tuple of str
        The standard links the family accepts.
    banded : bool
        The banded Newton step for many flexible thresholds
        (:mod:`ordstats.families.cumulative.banded`, ``fit(banded=True)``).
    chunked : bool
        Fitting from data read in chunks
        (:class:`ordstats.estimation.chunked.ChunkedOrdinalModel`).
    reverse : bool
        VGAM's ``reverse=True`` variant is defined.
    threshold_structures : bool
        Structured thresholds (``threshold="equidistant"``, ``"symmetric"``, ...);
        without them the family has one free intercept per step.
    ordered_cutpoints : bool
        The intercepts are cut-points that must increase (fitted rows whose
        nominal effects make them cross are flagged).
    latent_variable : bool
        The model is a latent continuous response cut at the thresholds,
        ``P(Y <= j) = F((theta_j - eta) / s)``: cumulative probabilities and
        their gradients, probability residuals, McKelvey-Zavoina's R² and
        Brant's test follow from ``F`` at the cut-points.
    positive_effect : {"higher", "lower"}
        Where a positive slope moves the response.
    nominal_sign : {1, -1}
        Sign of a nominal effect relative to a slope in the linear predictor:
        ``+1`` if ``w'gamma_j`` enters like ``x'b``, ``-1`` if like ``-x'b``
        (the cumulative model, where nominal effects shift the thresholds).
    absent_step_sign : {0, 1, -1}
        For a group with fewer levels than the model (brms' ``thres(gr = g)``):
        the sign of the large intercepts ``eta_j`` that end its chain at its top
        level ``m``.  ``+1`` where ``F(eta_m) = 1`` stops it (stopping ratio),
        ``-1`` where ``F(eta_m) = 0`` does (continuation ratio; adjacent
        categories, whose levels above ``m`` then have no weight); ``0`` for the
        cumulative model, whose absent thresholds follow the group's last.
        ``reverse=True`` flips it.
    summed_steps : bool
        Each level's log-probability is a sum of the steps ``eta_1 .. eta_j``
        (adjacent categories), so large absent steps of ``reverse=True`` would
        enter every present level's score.

    Examples
    --------
    >>> from ordstats.families import get_family
    >>> get_family("acat").capabilities.scale
    False
    >>> get_family("sratio", reverse=True).capabilities.positive_effect
    'higher'
    """

    nominal: bool
    scale: bool
    flexible_links: bool
    links: tuple[str, ...]
    banded: bool
    chunked: bool
    reverse: bool
    threshold_structures: bool
    ordered_cutpoints: bool
    latent_variable: bool
    positive_effect: PositiveEffect
    nominal_sign: Literal[1, -1]
    absent_step_sign: Literal[0, 1, -1] = 0
    summed_steps: bool = False

    def reversed(self) -> Capabilities:
        """Return the capabilities of the reverse variant: the sign of a slope flips.

        So does the sign of the absent steps (``absent_step_sign``).
        """
        flipped: PositiveEffect = "lower" if self.positive_effect == "higher" else "higher"
        absent: Literal[0, 1, -1] = (
            1 if self.absent_step_sign == -1 else (-1 if self.absent_step_sign == 1 else 0)
        )
        return replace(self, positive_effect=flipped, absent_step_sign=absent)

    def accepts_link(self, name: str, flexible: bool) -> bool:
        """Whether the link called ``name`` (a flexible one if ``flexible``) is supported."""
        return self.flexible_links if flexible else name in self.links
