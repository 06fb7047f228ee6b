"""The model options, declared and validated once.

:class:`ModelOptions` is the one place where the options shared by every way of
building a model live: :class:`~ordstats.OrdinalModel` (arrays),
:meth:`~ordstats.OrdinalModel.from_formula` (in memory or in chunks) and the
command line all turn their keywords into a :class:`ModelOptions`, so a new
option is declared here and nowhere else.  :func:`newton_options` does the same
for the solver's tolerances.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ordstats._typing import CollinearAction, MissingAction
from ordstats.core.links import Link
from ordstats.core.solver import NewtonOptions
from ordstats.core.thresholds import THRESHOLD_STRUCTURES, Structure, fixed_thresholds
from ordstats.design import DesignOptions
from ordstats.errors import SpecificationError
from ordstats.families import DEFAULT_FAMILY, Family, get_family

__all__ = [
    "ModelOptions",
    "check_maxiter",
    "check_tolerance",
    "newton_options",
    "print_iteration",
]


@dataclass(frozen=True)
class ModelOptions:
    """Options of an ordinal model (every constructor's keywords besides the data).

    Parameters
    ----------
    family : {"cumulative", "sratio", "cratio", "acat"}
        The model: cumulative link (R's ``clm``), stopping ratio, continuation
        ratio or adjacent category (VGAM's families).
    reverse : bool
        VGAM's ``reverse=`` for sratio, cratio and acat: the steps run from the
        top level down.  Not defined for the cumulative family.
    link : str or Link
        The inverse of ``F``: ``"logit"``, ``"probit"``, ``"cloglog"``,
        ``"loglog"``, ``"cauchit"``, or a flexible family.  ``"aranda-ordaz"``
        (logit at ``lambda = 1``, cloglog as ``lambda -> 0``) and ``"log-gamma"``
        (probit at 0, cloglog at 1, loglog at -1) estimate ``lambda``; R's
        spellings are accepted.  A frozen scipy continuous distribution
        (``scipy.stats.t(df=5)``, as statsmodels' ``OrderedModel(distr=...)``)
        is ``F`` itself, with ``f'`` by finite differences
        (:class:`~ordstats.core.links.distribution.DistributionLink`).
        statsmodels' keyword ``distr=`` is accepted for ``link=``.  sratio
        and cratio take the five standard links; ``acat`` is the
        adjacent-category *logit* model and takes ``"logit"`` only.
    threshold : {"flexible", "equidistant", "symmetric", "symmetric2"} or sequence of float
        Threshold structure (cumulative family only; the others have one free
        intercept per step), or ``K - 1`` fixed, strictly increasing cut-points
        (``threshold=[0.5, 1.5, 2.5]``): they are held fixed and the location
        intercept ``(Intercept)`` is estimated instead,
        ``P(Y <= j) = F(c_j - alpha_0 - x'beta)``.
    levels : sequence, optional
        Order of the response levels, lowest first.
    missing : {"drop", "raise"}
        What to do with rows that have missing or non-finite values.
    collinear : {"drop", "raise", "keep"}
        What to do with aliased regressors: drop them with a warning (as R's
        ``clm``), raise, or keep them, for penalised fits (``fit_regularized``,
        ``path``, ``cv``: glmnet keeps every column, and with an L1 penalty
        the estimates differ); ``fit()`` cannot estimate aliased columns.
    many_levels : bool
        Allow a response with more than 50 distinct levels.

    Raises
    ------
    SpecificationError
        For a value outside the allowed ones; the message lists them.

    Examples
    --------
    >>> import ordstats
    >>> options = ordstats.ModelOptions(link="probit", threshold="equidistant")
    >>> wine = ordstats.datasets.load("wine")
    >>> model = ordstats.OrdinalModel.from_formula("rating ~ temp", wine, **options.as_keywords())
    >>> model.link.name, model.threshold
    ('probit', 'equidistant')
    """

    family: str = DEFAULT_FAMILY
    reverse: bool = False
    link: str | Link = "logit"
    threshold: Structure = "flexible"
    levels: Sequence[Any] | None = None
    missing: MissingAction = "drop"
    collinear: CollinearAction = "drop"
    many_levels: bool = False

    def __post_init__(self) -> None:
        family = self.family_object()  # validates family, link and reverse together
        if not isinstance(self.threshold, str):
            # fixed cut-points: validated once, kept as a tuple (hashable, picklable)
            object.__setattr__(self, "threshold", fixed_thresholds(self.threshold))
            if not family.capabilities.threshold_structures:
                raise SpecificationError(
                    "fixed thresholds are available for the cumulative family only; "
                    f"got family={self.family!r}"
                )
        elif self.threshold not in THRESHOLD_STRUCTURES:
            raise SpecificationError(
                f"unknown threshold structure {self.threshold!r}; choose one of "
                f"{', '.join(map(repr, THRESHOLD_STRUCTURES))}, or give the fixed "
                "cut-points as a list of numbers"
            )
        _check_choice("missing", self.missing, ("drop", "raise"))
        _check_choice("collinear", self.collinear, ("drop", "raise", "keep"))
        if not isinstance(self.many_levels, (bool, np.bool_)):
            raise SpecificationError(f"many_levels must be True or False; got {self.many_levels!r}")

    @classmethod
    def from_keywords(cls, keywords: Mapping[str, object]) -> ModelOptions:
        """Build the options from a constructor's ``**options``, naming any unknown keyword.

        Parameters
        ----------
        keywords : mapping
            Option names and values.

        Returns
        -------
        ModelOptions
        """
        keywords = _link_from_distr(keywords)
        cls.check_names(keywords)
        return cls(**keywords)  # type: ignore[arg-type]

    def replace(self, keywords: Mapping[str, object]) -> ModelOptions:
        """These options with some replaced (validated together).

        Parameters
        ----------
        keywords : mapping
            Option names and new values.

        Returns
        -------
        ModelOptions
        """
        keywords = _link_from_distr(keywords)
        self.check_names(keywords)
        return dataclasses.replace(self, **keywords)  # type: ignore[arg-type]

    @classmethod
    def check_names(cls, keywords: Mapping[str, object]) -> None:
        """Raise a :class:`SpecificationError` naming any unknown option."""
        known = cls.names()
        for name in keywords:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise SpecificationError(
                    f"unknown option {name!r}; the options are {', '.join(known)}.{hint}"
                )

    @classmethod
    def names(cls) -> list[str]:
        """Names of the options, in declaration order."""
        return [f.name for f in fields(cls)]

    def family_object(self) -> Family:
        """The :class:`~ordstats.families.Family` these options describe."""
        return get_family(self.family, link=self.link, reverse=self.reverse)

    def as_keywords(self) -> dict[str, Any]:
        """The options as keywords for :class:`~ordstats.OrdinalModel` or ``from_formula``."""
        return {name: getattr(self, name) for name in self.names()}

    def design_options(self) -> DesignOptions:
        """The options the formula layer needs to build a design."""
        return DesignOptions(
            levels=self.levels,
            missing=self.missing,
            collinear=self.collinear,
            many_levels=self.many_levels,
        )


def _link_from_distr(keywords: Mapping[str, object]) -> Mapping[str, object]:
    """Rename ``distr=``, statsmodels' ``OrderedModel`` spelling of ``link=``.

    statsmodels defaults to ``"probit"``; ordstats, as R's ``clm``, to
    ``"logit"``, so only an explicit ``distr`` is taken over.
    """
    if "distr" not in keywords:
        return keywords
    if "link" in keywords:
        raise SpecificationError(
            "give the link once: distr= (statsmodels' name) and link= were both given"
        )
    renamed = {name: value for name, value in keywords.items() if name != "distr"}
    renamed["link"] = keywords["distr"]
    return renamed


def _check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if not isinstance(value, str) or value not in choices:
        raise SpecificationError(
            f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}"
        )


def newton_options(maxiter: object, gradtol: object, reltol: object) -> NewtonOptions:
    """Validate ``fit()``'s solver settings and return them as :class:`NewtonOptions`.

    Parameters
    ----------
    maxiter : int
        Maximum Newton iterations (non-negative).
    gradtol, reltol : float
        Positive, finite tolerances on ``max|gradient|`` and the relative step.

    Returns
    -------
    NewtonOptions

    Raises
    ------
    SpecificationError
        For a negative or non-integer ``maxiter``, or a tolerance that is not a
        positive finite number (an infinite tolerance would report convergence
        at the starting values).
    """
    return NewtonOptions(
        max_iter=check_maxiter(maxiter),
        grad_tol=check_tolerance("gradtol", gradtol),
        rel_tol=check_tolerance("reltol", reltol),
    )


def check_maxiter(maxiter: object) -> int:
    """``maxiter`` as an ``int``: a non-negative whole number, or a SpecificationError."""
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 0:
        raise SpecificationError(f"maxiter must be a non-negative integer; got {maxiter!r}")
    return int(maxiter)


def check_tolerance(name: str, value: object) -> float:
    """A convergence tolerance as a ``float``: positive and finite, or a SpecificationError.

    A negative tolerance can never be met (the solver runs to ``maxiter``) and
    an infinite one is met at the starting values.
    """
    ok = isinstance(value, (int, float, np.floating)) and not isinstance(value, bool)
    if not ok or not float(value) > 0 or not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise SpecificationError(
            f"{name} must be a positive number, and finite (an infinite tolerance would "
            f"stop at the starting values); got {value!r}"
        )
    return float(value)  # type: ignore[arg-type]


def print_iteration(iteration: int, nll: float, max_grad: float) -> None:
    """The line ``fit(disp=True)`` prints per iteration (the clm and the clmm fit alike)."""
    print(f"iter {iteration:3d}  nll = {nll:.10g}  max|grad| = {max_grad:.3e}")
