r"""Bayesian fits: brms' priors, the posterior mode by Newton, and the posterior's target.

``model.fit(prior=...)`` maximises the log posterior ``l(x) + log p(x)`` and returns a
:class:`~ordstats.results.posterior.PosteriorMode`, whose ``posterior(draws=...)`` draws
from the posterior (:mod:`ordstats.results.posterior`).

**Priors as brms** (:func:`prior`).  Parameters belong to brms' classes:

============  ===============================================================  ==================
class         parameters                                                       brms' default
============  ===============================================================  ==================
``b``         location slopes and category-specific (nominal, ``cs()``) ones   flat
``Intercept`` the thresholds *of the centred design* (below)                   student_t(3, 0, 2.5)
``sd``        random-effect standard deviations (``group=`` the factor)        student_t(3, 0, 2.5)
``disc``      the log-scale (discrimination) coefficients                      flat
``simo``      the simplex of a monotonic predictor ``mo(x)`` (``coef="mox1"``)  dirichlet(1)
``cor``       the correlations of a random term ``(1 + x|g)`` (``group=``)      lkj(1)
============  ===============================================================  ==================

``mo()`` terms and correlated random terms: :mod:`ordstats.estimation.bayes_language`;
group-specific thresholds ``y | thres(gr = g) ~ ...`` (each group's thresholds take the
``Intercept`` prior *uncentred*, as brms; ``group=`` one level):
:mod:`ordstats.estimation.bayes_thresholds`.

brms centres the design before it puts priors on the intercepts: with column means
``xbar`` (unweighted, over the rows used) the linear predictor
``theta_j - x'beta = (theta_j - xbar'beta) - (x - xbar)'beta``, and the ``Intercept`` prior
is on ``theta_j - xbar'beta`` (cumulative; ``alpha_j + xbar'b`` for sratio, cratio and acat,
whose predictors are ``alpha_j + x'b``).  Category-specific (nominal, ``cs()``) effects do
not enter it: brms centres only the design of the ``b`` slopes, and its Stan code subtracts
the uncentred ``Xcs * bcs`` from the centred intercepts.  With equidistant thresholds the
``Intercept`` prior is on the first (centred) threshold only and the spacing is flat (brms'
``delta``, whose prior ordstats does not take).  The map from
the reported parameters is a shear with unit determinant, so no Jacobian enters.  An ``sd``
prior is a density on the standard deviation ``s`` (restricted to ``s > 0``: half-normal,
half-Student-t); the parameter is ``log s``, so its density carries the Jacobian ``s``.

**Signs.**  ordstats' parameters are the ones its fits report: a cumulative model's
``P(Y <= j) = F(theta_j - x'beta)`` is brms' ``cumulative()`` (nominal ``gamma = -bcs``),
but the step families use VGAM's ``eta_j = alpha_j + x'b + w'gamma_j`` where brms' Stan code has
``disc * (thres_j - mu)`` (sratio: ``alpha = thres``, ``b = -b_brms``, ``gamma = -bcs``) or
``disc * (mu - thres_j)`` (cratio and acat: ``alpha = -thres``, ``b = b_brms``,
``gamma = bcs``), and the ``disc`` coefficients here are the log-scale ``zeta``
(``disc = exp(-z'zeta)``): a prior centred at zero is the same either way; give a non-zero
centre with the reported sign.

**The mode** is found by the Newton solver of the maximum-likelihood fit
(:func:`ordstats.core.solver.newton`) with the log prior's gradient and Hessian added
(:class:`ordstats.core.priors.LogPrior`); with Laplace (double-exponential) priors, by the
proximal Newton solver of the lasso (:func:`ordstats.core.penalty.proximal_newton`), since
``|b|`` has no derivative at 0.  So a ``normal(0, s)`` prior on every slope gives the ridge
fit ``fit_regularized(alpha=1 / (s^2 n_w), L1_wt=0)`` and ``double_exponential(0, s)`` the
lasso ``fit_regularized(alpha=1 / (s n_w), L1_wt=1)``, ``n_w`` the sum of the weights.
A mixed model's Newton starts from the clm estimates scaled for a unit random-effect SD
(then, if it fails there, from the maximum-likelihood fit); its Hessian is exact for the
logit link with one scalar random term and the Laplace approximation
(:mod:`ordstats.families.mixed_hessian`), otherwise central differences of the analytic
gradient.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, cast

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray
from ordstats.core.penalty import ElasticNet, proximal_newton
from ordstats.core.priors import Density, LogPrior, PriorTerm, parse_density
from ordstats.core.solver import NewtonOptions, newton
from ordstats.design import newdata_matrices
from ordstats.design.monotonic import monotonic_blocks
from ordstats.errors import (
    ConvergenceWarning,
    NotFittedError,
    OrdstatsError,
    SpecificationError,
    user_stacklevel,
)
from ordstats.estimation.bayes_language import (
    ChainedEvaluation,
    CorrelationMap,
    MonotonicMap,
    correlation_map,
    has_monotonic_terms,
    monotonic_columns,
    monotonic_map,
)
from ordstats.estimation.bayes_thresholds import (
    ThresholdGroupMap,
    refuse_threshold_groups_ml,
)
from ordstats.estimation.draw_densities import ClmDraws, MixedDraws
from ordstats.estimation.vector_quadrature import CorrelatedDraws
from ordstats.families.cumulative.prediction import cut_points_and_scale
from ordstats.families.mixed_hessian import has_laplace_hessian, laplace_hessian
from ordstats.results.fitted import FitInfo, OrdinalResults
from ordstats.results.posterior import PosteriorMode

__all__ = [
    "CLASSES",
    "DEFAULT_PRIORS",
    "Prior",
    "fit_mode",
    "prior",
    "resolve_priors",
]

#: brms' parameter classes this module knows.
CLASSES = ("b", "Intercept", "sd", "disc", "simo", "cor")
#: The classes whose priors take group= (a factor; for Intercept, a level of thres(gr = g)).
_GROUPED = frozenset({"sd", "cor", "Intercept"})
#: The classes whose prior is a density on several parameters, and that density.
_JOINT = {"simo": "dirichlet", "cor": "lkj"}
#: brms' default prior of each class for ordinal families.
DEFAULT_PRIORS: dict[str, Density] = {
    "b": Density("flat"),
    "Intercept": Density("student_t", (3.0, 0.0, 2.5)),
    "sd": Density("student_t", (3.0, 0.0, 2.5)),
    "disc": Density("flat"),
    "simo": Density("dirichlet", (1.0,)),
    "cor": Density("lkj", (1.0,)),
}


@dataclass(frozen=True)
class Prior:
    """A prior on a class of parameters or on one of them (what :func:`prior` returns).

    Attributes
    ----------
    density : Density
    class_ : str
        ``"b"``, ``"Intercept"``, ``"sd"`` or ``"disc"``.
    coef : str
        One parameter's name (ordstats' or brms' spelling); ``""``: the whole class.
    group : str
        For ``class_="sd"``: the grouping factor; ``""``: every factor.  For
        ``class_="Intercept"`` with ``thres(gr = g)``: one level of ``g``.
    """

    density: Density
    class_: str = "b"
    coef: str = ""
    group: str = ""

    def __str__(self) -> str:
        where = "".join(
            f", {k}={v!r}" for k, v in (("coef", self.coef), ("group", self.group)) if v
        )
        return f"prior({str(self.density)!r}, class_={self.class_!r}{where})"


def prior(density: str | Density, class_: str = "b", coef: str = "", group: str = "") -> Prior:
    """A prior as brms' ``prior()``, e.g. ``prior("normal(0, 2.5)", class_="b", coef="temp")``.

    Parameters
    ----------
    density : str
        brms' text: ``"normal(mu, sigma)"``, ``"student_t(nu, mu, sigma)"``,
        ``"cauchy(mu, sigma)"``, ``"double_exponential(mu, sigma)"`` (or ``laplace``),
        ``"exponential(rate)"`` (``sd`` only) or ``"flat"``.
    class_ : {"b", "Intercept", "sd", "disc"}
        The class of parameters (see :mod:`ordstats.estimation.bayes`).
    coef : str, optional
        One parameter: ordstats' name (``"temp[T.warm]"``, ``"1|2"``) or brms'
        (``"tempwarm"``; a threshold's number ``"1"``); default: the whole class.
    group : str, optional
        For ``sd`` and ``cor``: the grouping factor (``"judge"``); for ``Intercept``
        with group-specific thresholds ``thres(gr = g)``: a level of ``g``.

    Returns
    -------
    Prior

    Examples
    --------
    >>> import ordstats
    >>> p = ordstats.prior("normal(0, 1)", class_="b", coef="temp[T.warm]")
    >>> p.density.name, p.density.args, p.class_, p.coef
    ('normal', (0.0, 1.0), 'b', 'temp[T.warm]')
    """
    if class_ not in CLASSES:
        raise SpecificationError(
            f"unknown prior class {class_!r}; use one of {', '.join(map(repr, CLASSES))} "
            "(brms' names)"
        )
    for name, value in (("coef", coef), ("group", group)):
        if not isinstance(value, str):
            raise SpecificationError(f"{name} must be a parameter name (a str); got {value!r}")
    if group and class_ not in _GROUPED:
        raise SpecificationError(
            "group= applies to class_='sd', 'cor' and (with thres(gr = g)) 'Intercept' "
            f"only; got class_={class_!r}"
        )
    dens = parse_density(density)
    _check_joint(dens, class_)
    if dens.positive_only and class_ != "sd":
        raise SpecificationError(
            f"{dens} lives on positive numbers only; class {class_!r} parameters are real "
            "numbers: use normal, student_t or double_exponential"
        )
    return Prior(dens, class_, coef, group)


def _check_joint(dens: Density, class_: str) -> None:
    """A Dirichlet is for ``simo`` and an LKJ for ``cor``, and those classes take nothing else."""
    wanted = _JOINT.get(class_)
    if wanted is not None and dens.name != wanted:
        raise SpecificationError(
            f"class {class_!r} takes a {wanted}(...) prior (as brms); got {dens}"
        )
    if wanted is None and dens.multivariate:
        fits = [c for c, d in _JOINT.items() if d == dens.name]
        raise SpecificationError(f"{dens} is a prior of class {fits[0]!r}, not of class {class_!r}")


def as_priors(spec: object) -> list[Prior]:
    """The priors of ``fit(prior=...)``: a :class:`Prior`, a list of them, a dict or ``"default"``.

    A dict maps ``"class"`` or ``"class:coef"`` (``"sd:group"`` for a factor) to brms' text.
    """
    if isinstance(spec, str) and spec == "default":
        return []
    if isinstance(spec, Prior):
        return [spec]
    if isinstance(spec, Mapping):
        out = []
        for key, text in spec.items():
            if not isinstance(key, str):
                raise SpecificationError(
                    f"prior dict keys are 'class' or 'class:coef'; got {key!r}"
                )
            cls, _, coef = key.partition(":")
            if cls in {"sd", "cor"}:
                out.append(prior(text, cls, group=coef))
            else:
                out.append(prior(text, cls, coef))
        return out
    if isinstance(spec, Iterable) and not isinstance(spec, (str, bytes)):
        items = list(spec)
        if all(isinstance(p, Prior) for p in items):
            return items
    raise SpecificationError(
        "prior must be ordstats.prior(...), a list of them, a dict such as "
        "{'b': 'normal(0, 1)', 'Intercept': 'student_t(3, 0, 2.5)'} or 'default' (brms' "
        f"default priors); got {spec!r}"
    )


@dataclass(frozen=True)
class Slot:
    """A parameter (or centred combination) a prior can be put on."""

    class_: str
    names: tuple[str, ...]
    row: FloatArray
    group: str = ""
    log_scale: bool = False
    #: positions of a joint prior's parameters (``simo``; a correlated term's ``cor``)
    block: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.class_} {self.names[0]!r}" + (f" of {self.group!r}" if self.group else "")


def brms_name(name: str) -> str:
    """The spelling brms gives a coefficient: ``"temp[T.warm]"`` -> ``"tempwarm"``."""
    return re.sub(r"[^A-Za-z0-9._]", "", name.replace("[T.", ""))


def _clm_slots(model: Any) -> list[Slot]:
    layout = model.problem.layout
    names = list(model.param_names)
    k = layout.n_params
    try:
        data = model.data
    except NotFittedError:
        raise SpecificationError(
            "Bayesian fits need the rows in memory (not read in chunks); load the data "
            "into a DataFrame"
        ) from None
    J = np.asarray(model.threshold_jacobian, dtype=float)
    xbar = np.asarray(data.X, dtype=float).mean(axis=0) if layout.n_beta else np.zeros(0)
    # cumulative: theta_j - x'beta (cut-points "1|2"); steps: alpha_j + x'b ("1:2")
    cumulative = model.family_spec.capabilities.latent_variable
    sign = -1.0 if cumulative else 1.0
    levels = list(model.levels)
    sep = "|" if cumulative else ":"
    slots = []
    for j in range(_n_intercept_priors(model, J)):
        row = np.zeros(k)
        row[layout.alpha] = J[j]
        row[layout.beta] = sign * xbar
        threshold = f"{levels[j]}{sep}{levels[j + 1]}"
        slots.append(Slot("Intercept", (threshold, str(j + 1)), row))
    for cls, block in (("b", layout.nominal), ("b", layout.beta)):
        for i in range(block.start, block.stop):
            slots.append(Slot(cls, _names(names[i]), _unit(k, i)))
    for i in range(layout.zeta.start, layout.zeta.stop):  # "scale:z" is brms' disc "z"
        bare = names[i].removeprefix("scale:")
        slots.append(Slot("disc", (names[i], bare, brms_name(bare)), _unit(k, i)))
    return slots


def _n_intercept_priors(model: Any, J: FloatArray) -> int:
    """How many thresholds take the Intercept prior.

    brms' equidistant thresholds have it on the first only; the spacing (brms' ``delta``)
    keeps its flat default.
    """
    return 1 if getattr(model, "threshold", None) == "equidistant" else int(J.shape[0])


def _names(name: str) -> tuple[str, ...]:
    nominal = re.match(r"^(.+?[|:].+?):(.+)$", name)
    if nominal:  # a category-specific effect "1:2:w" -> brms' "w[1]" is not known here
        return (name, brms_name(nominal.group(2)) + f"[{nominal.group(1)}]")
    return (name, brms_name(name))


def _unit(k: int, i: int) -> FloatArray:
    row = np.zeros(k)
    row[i] = 1.0
    return row


def _mixed_slots(model: Any) -> list[Slot]:
    p = model.problem
    k = p.n_alpha + p.n_beta + p.n_var
    names = list(model.param_names)
    J = np.asarray(p.jacobian, dtype=float)
    xbar = p.X.mean(axis=0) if p.n_beta else np.zeros(0)
    levels = list(model.levels)
    slots = []
    for j in range(_n_intercept_priors(model, J)):
        row = np.zeros(k)
        row[: p.n_alpha] = J[j]
        row[p.n_alpha : p.n_alpha + p.n_beta] = -xbar
        slots.append(Slot("Intercept", (f"{levels[j]}|{levels[j + 1]}", str(j + 1)), row))
    for i in range(p.n_alpha, p.n_alpha + p.n_beta):
        slots.append(Slot("b", _names(names[i]), _unit(k, i)))
    offset = p.n_alpha + p.n_beta
    for term in model.terms:
        n_var = term.q * (term.q + 1) // 2
        slots += _random_term_slots(term, k, tuple(range(offset, offset + n_var)))
        offset += n_var
    return slots


def _random_term_slots(term: Any, k: int, positions: tuple[int, ...]) -> list[Slot]:
    """Each column's ``sd`` (its log is the parameter) and a correlated term's ``cor``.

    The parameters of a correlated term are those of
    :class:`~ordstats.estimation.bayes_language.CorrelationMap`: the log SDs, then the
    ``atanh`` of the partial correlations (the LKJ prior's block).
    """
    coefs = ["Intercept" if c == "(Intercept)" else c for c in term.columns]
    slots = [
        Slot("sd", (c, brms_name(c)), _unit(k, pos), group=term.group, log_scale=True)
        for c, pos in zip(coefs, positions, strict=False)
    ]
    if term.q == 1:
        return slots
    cor = Slot("cor", (term.group,), np.zeros(k), group=term.group, block=positions[term.q :])
    return [*slots, cor]


def model_slots(model: Any) -> list[Slot]:
    """Every parameter a prior can be put on, by class, for a clm or a clmm."""
    if hasattr(model, "terms"):
        return _mixed_slots(model)
    if model.threshold_groups is not None:
        return _threshold_group_slots(_clm_slots(model), threshold_group_map(model))
    mono = monotonic_map(model)
    slots = _clm_slots(model)
    return slots if mono is None else _monotonic_slots(slots, mono)


def _monotonic_slots(slots: list[Slot], mono: Any) -> list[Slot]:
    """``b`` and ``simo`` slots of each ``mo()`` term; brms centres nothing of ``mo()``."""
    k = slots[0].row.size
    owned = {p for pos in mono.positions for p in pos}
    keep = [0.0 if i in owned else 1.0 for i in range(k)]
    out = []
    for slot in slots:
        if slot.class_ == "Intercept":
            out.append(Slot(slot.class_, slot.names, slot.row * np.asarray(keep)))
        elif not (slot.class_ == "b" and int(np.argmax(slot.row)) in owned):
            out.append(slot)
    names = mono.names()
    for block, pos in zip(mono.blocks, mono.positions, strict=True):
        out.append(Slot("b", names[pos[0]], _unit(k, pos[0])))
        if len(pos) > 1:  # two levels: one step, whose share is 1
            simplex = (f"mo({block.variable})", f"{block.brms_name}1", f"simo_{block.brms_name}1")
            out.append(Slot("simo", simplex, np.zeros(k), block=tuple(pos[1:])))
    return out


def _threshold_group_slots(slots: list[Slot], tmap: ThresholdGroupMap) -> list[Slot]:
    """Each group's thresholds (``Intercept``, not centred, as brms), then slopes and disc.

    The ungrouped slots' nominal ``b`` are the groups' thresholds in the sampled
    parameters (:mod:`ordstats.estimation.bayes_thresholds`).
    """
    names, k, n_grouped = tmap.names(), tmap.n_sampled, tmap.groups.n_groups * len(tmap.thresholds)
    group_of = np.repeat(tmap.groups.levels, tmap.groups.counts)
    out = [
        Slot("Intercept", spelled, _unit(k, p), group=str(group_of[p]))
        for p, spelled in names.items()
    ]
    rest = [
        replace(s, row=tmap.sampled_row(s.row))
        for s in slots
        if s.class_ != "Intercept" and int(np.argmax(s.row)) >= n_grouped
    ]
    return out + rest


def _specificity(p: Prior) -> int:
    return 2 * bool(p.coef) + bool(p.group)


def _most_specific(candidates: list[Prior], slot: Slot) -> Density | None:
    """The density of the most specific prior on ``slot`` (None: none given).

    Two equally specific priors on one parameter are two spellings of it
    (ordstats' and brms', or a threshold's name and number): refused, as two
    priors spelled alike are.
    """
    if not candidates:
        return None
    top = max(map(_specificity, candidates))
    best = [p for p in candidates if _specificity(p) == top]
    if len(best) > 1:
        raise SpecificationError(
            f"two priors for the same parameter {slot.names[0]!r}: {best[0]} and {best[1]} "
            "(two spellings of its name); give one"
        )
    return best[0].density


def resolve_priors(model: Any, spec: object) -> tuple[LogPrior, list[tuple[str, str, str]]]:
    """The log prior of ``fit(prior=spec)`` on ``model`` and its table (class, name, prior).

    Each parameter takes its most specific prior (coef, then group, then class), else
    brms' default (:data:`DEFAULT_PRIORS`).

    Raises
    ------
    SpecificationError
        For a prior on a class or parameter the model does not have, or two priors on
        the same thing.
    """
    given = as_priors(spec)
    slots = model_slots(model)
    seen: set[tuple[str, str, str]] = set()
    for p in given:
        key = (p.class_, p.coef, p.group)
        if key in seen:
            raise SpecificationError(f"two priors for the same parameters: {p}; give one")
        seen.add(key)
        if not any(_matches(p, s) for s in slots):
            raise SpecificationError(_no_match_message(p, slots))
    k = slots[0].row.size if slots else 0
    terms, table = [], []
    joint: dict[tuple[int, ...], list[tuple[Slot, Density]]] = {}
    for slot in slots:
        chosen = _most_specific([p for p in given if _matches(p, slot)], slot)
        density = chosen or DEFAULT_PRIORS[slot.class_]
        source = "" if chosen else " (default)"
        table.append(
            (
                slot.class_,
                slot.names[0] + (f" ({slot.group})" if slot.group else ""),
                str(density) + source,
            )
        )
        if slot.block:
            joint.setdefault(slot.block, []).append((slot, density))
        elif density.name != "flat":
            terms.append(PriorTerm(slot.row, density, slot.log_scale, slot.label))
    k = int(k or len(model.param_names))
    blocks = tuple(_joint_prior(block, chosen, k) for block, chosen in joint.items())
    return LogPrior(tuple(terms), k, blocks), table


def _joint_prior(block: tuple[int, ...], chosen: list[tuple[Slot, Density]], k: int) -> Any:
    """The Dirichlet of a ``mo()`` simplex, or the LKJ of a correlated term."""
    from ordstats.core.block_priors import LkjPrior, SimplexPrior

    if chosen[0][0].class_ == "simo":
        density, n = chosen[0][1], len(block) + 1
        alpha = density.args * n if len(density.args) == 1 else density.args
        if len(alpha) != n:
            raise SpecificationError(
                f"{density} on {chosen[0][0].names[0]}: give one concentration or {n} (the "
                f"predictor has {n} steps)"
            )
        return SimplexPrior(block, tuple(alpha), k)
    (eta,) = chosen[0][1].args
    n = len(block)
    q = round((1 + np.sqrt(1 + 8 * n)) / 2)
    return LkjPrior(block, q, float(eta), k)


def _matches(p: Prior, slot: Slot) -> bool:
    if p.class_ != slot.class_:
        return False
    if p.group and p.group != slot.group:
        return False
    return not p.coef or p.coef in slot.names


def _no_match_message(p: Prior, slots: Sequence[Slot]) -> str:
    same = [s for s in slots if s.class_ == p.class_]
    if not same:
        have = sorted({s.class_ for s in slots})
        return (
            f"{p}: the model has no parameters of class {p.class_!r}; its classes are "
            f"{', '.join(map(repr, have))}"
        )
    names = ", ".join(repr(s.names[0]) + (f" (group {s.group!r})" if s.group else "") for s in same)
    return f"{p}: the model has no such parameter; class {p.class_!r} has {names}"


# -- the mode ----------------------------------------------------------------------------------


class _Posterior:
    """The negative log posterior at one point, as the Newton solver reads it."""

    def __init__(self, inner: Any, log_prior: LogPrior, x: FloatArray) -> None:
        self.inner = inner
        self._prior = log_prior
        self._x = x
        self.nll = float(inner.nll) - log_prior.value(x) if np.isfinite(inner.nll) else np.inf

    @cached_property
    def gradient(self) -> FloatArray:
        return np.asarray(self.inner.gradient) - self._prior.gradient(self._x)

    @cached_property
    def hessian(self) -> FloatArray:
        return np.asarray(self.inner.hessian) - self._prior.hessian(self._x)


@dataclass(frozen=True)
class _MixedEvaluation:
    """The mixed model's negative log-likelihood with its gradient and Hessian on demand."""

    x: FloatArray
    fg: Callable[[FloatArray], tuple[float, FloatArray]]

    @cached_property
    def _value_gradient(self) -> tuple[float, FloatArray]:
        return self.fg(self.x)

    @property
    def nll(self) -> float:
        return float(self._value_gradient[0])

    @property
    def gradient(self) -> FloatArray:
        return self._value_gradient[1]

    @cached_property
    def hessian(self) -> FloatArray:
        return _difference_jacobian(lambda z: self.fg(z)[1], self.x)


@dataclass(frozen=True)
class _LaplaceEvaluation:
    """A logit clmm's negative Laplace log-likelihood (one scalar term), derivatives exact.

    The value alone (a step-halving trial) costs one inner Newton; the gradient and
    Hessian come together from :func:`~ordstats.families.mixed_hessian.laplace_hessian`.
    """

    x: FloatArray
    objective: Any

    @cached_property
    def nll(self) -> float:
        return float(self.objective.value(self.x, 1))

    @cached_property
    def _derivatives(self) -> tuple[float, FloatArray, FloatArray]:
        return laplace_hessian(self.objective, self.x)

    @property
    def gradient(self) -> FloatArray:
        return self._derivatives[1]

    @property
    def hessian(self) -> FloatArray:
        return self._derivatives[2]


def _difference_jacobian(grad: Callable[[FloatArray], FloatArray], x: FloatArray) -> FloatArray:
    """Central differences of an analytic gradient, symmetrised."""
    k = x.size
    H = np.empty((k, k))
    for j in range(k):
        h = 1e-5 * max(1.0, abs(x[j]))
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        H[:, j] = (grad(up) - grad(down)) / (2 * h)
    return 0.5 * (H + H.T)


class Target:
    """The log posterior of a model and prior (what :class:`PosteriorMode` samples).

    Implements :class:`ordstats.results.posterior.PosteriorTarget`.
    """

    def __init__(self, model: Any, log_prior: LogPrior, nagq: int = 1) -> None:
        self.model = model
        self.log_prior = log_prior
        self.nagq = nagq
        self.mixed = hasattr(model, "terms")
        self.param_names = list(model.param_names) + (
            list(model.variance_names) if self.mixed else []
        )
        self.levels = list(model.levels)

    def evaluation(self, x: FloatArray) -> Any:
        """The negative log-likelihood's evaluation at ``x`` (gradient, Hessian on demand)."""
        if self.mixed and has_laplace_hessian(self.model.objective, self.nagq):
            return _LaplaceEvaluation(np.asarray(x, dtype=float), self.model.objective)
        if self.mixed:
            return _MixedEvaluation(x, self.model._objective_functions(self.nagq)[1])
        return self.model.evaluator.evaluate(x)

    def negative_log_posterior(self, x: FloatArray) -> _Posterior:
        """``-(l(x) + log p(x))`` with its derivatives (the solver's objective)."""
        return _Posterior(self.evaluation(x), self.log_prior, x)

    def log_density(self, x: FloatArray) -> float:
        """``l(x) + log p(x)`` up to a constant (``-inf`` outside the support)."""
        if self.mixed:
            nll = self.model.objective.value(x, self.nagq)
        else:
            nll = self.model.evaluator.evaluate(x).nll
        if not np.isfinite(nll):
            return -np.inf
        return float(-nll + self.log_prior.value(x))

    def log_density_and_gradient(self, x: FloatArray) -> tuple[float, FloatArray]:
        """``l(x) + log p(x)`` and its gradient."""
        ev = self.negative_log_posterior(np.asarray(x, dtype=float))
        if not np.isfinite(ev.nll):
            return -np.inf, np.zeros(x.size)
        return -ev.nll, -ev.gradient

    def log_density_batch(self, X: FloatArray) -> FloatArray:
        """:meth:`log_density` at each row of ``X`` (all rows at once where the model allows).

        :mod:`ordstats.estimation.draw_densities` evaluates blocks of draws together;
        other models are evaluated draw by draw.
        """
        X = np.asarray(X, dtype=float)
        nll = self._batch_nll(X)
        out = np.full(X.shape[0], -np.inf)
        finite = np.isfinite(nll)
        out[finite] = -nll[finite] + self.log_prior.batch_value(X[finite])
        return out

    def _batch_nll(self, X: FloatArray) -> FloatArray:
        """The negative log-likelihood at each row of ``X`` (the model's parameters)."""
        if self._draws is not None:
            return -self._draws.loglik(X)
        if self.mixed:
            return np.array([self.model.objective.value(x, self.nagq) for x in X])
        return np.array([self.model.evaluator.evaluate(x).nll for x in X])

    @cached_property
    def _draws(self) -> ClmDraws | MixedDraws | None:
        """The vectorised log-likelihood of many draws, where the model has one."""
        if self.mixed:
            return MixedDraws.of(self.model, self.nagq)
        return ClmDraws.of(self.model)

    def probabilities(self, x: FloatArray, newdata: Any = None) -> FloatArray:
        """Category probabilities (rows x levels) at parameters ``x`` (random effects 0)."""
        return self.probabilities_batch(np.asarray(x, dtype=float)[None, :], newdata)[0]

    def probabilities_batch(self, draws: FloatArray, newdata: Any = None) -> FloatArray:
        """Category probabilities at each row of ``draws``: shape (draws, rows, levels).

        The new rows' designs are built once; a flexible link or an offset takes the
        slower path through ``model.predict`` for each draw.
        """
        if self.mixed:
            return np.stack([self._mixed_probabilities(x, newdata) for x in draws])
        model, lay = self.model, self.model.problem.layout
        if lay.n_lambda or model.has_offset:
            return np.stack(
                [np.asarray(model.predict(x, exog=newdata, which="prob")) for x in draws]
            )
        if newdata is None:
            X, W, Z = model.data.X, model.data.nominal, model.data.scale
        else:
            X, W, Z, _ = newdata_matrices(model.design, newdata, model.formula_context)
        out = []
        for x in draws:
            theta, scale = cut_points_and_scale(
                x, lay, model.threshold_jacobian, W, Z, model.threshold_offset
            )
            out.append(
                model.family_spec.category_probabilities(
                    theta, X @ x[lay.beta], scale, link=model.link
                )
            )
        return np.stack(out)

    def _mixed_probabilities(self, x: FloatArray, newdata: Any) -> FloatArray:
        """A clmm's probabilities of its fitted rows with the random effects at 0."""
        if newdata is not None:
            raise SpecificationError(
                "posterior predictions of a mixed model are for its fitted rows (random "
                "effects at 0); newdata is not available yet"
            )
        p = self.model.problem
        theta = np.asarray(p.jacobian, dtype=float) @ x[: p.n_alpha]
        eta = p.X @ x[p.n_alpha : p.n_alpha + p.n_beta] + p.offset
        cum = p.link.cdf(theta[None, :] - eta[:, None])
        ones = np.ones((eta.size, 1))
        return np.diff(np.hstack([0.0 * ones, cum, ones]), axis=1)

    def native_arrays(self) -> dict[str, Any]:
        """The log posterior's arrays, for its JAX version (:mod:`ordstats.results.jax_models`)."""
        prior = [
            (t.row, (t.density.name, t.density.args), t.log_scale) for t in self.log_prior.terms
        ]
        common = {
            "prior": prior,
            "blocks": [_native_block(b) for b in self.log_prior.blocks],
            "k": len(self.param_names),
            "link": None,
        }
        if self.mixed:
            p = self.model.problem
            return {
                **common,
                "family": "cumulative",
                "reverse": False,
                "link": p.link.name,
                "layout": (p.n_alpha, 0, p.n_beta, 0),
                "J": p.jacobian,
                "y": p.y,
                "X": p.X,
                "nominal": np.zeros((p.y.size, 0)),
                "scale": np.zeros((p.y.size, 0)),
                "offset": p.offset,
                "weights": p.weights,
                "groups": _native_groups(p),
            }
        data, layout = self.model.data, self.model.problem.layout
        return {
            **common,
            "family": self.model.family,
            "reverse": bool(self.model.reverse),
            "link": self.model.link.name if not layout.n_lambda else "flexible",
            "layout": (layout.n_alpha, layout.n_nominal_cols, layout.n_beta, layout.n_zeta),
            "J": data.threshold_jacobian,
            "y": data.y,
            "X": data.X,
            "nominal": data.nominal if data.nominal.size else np.zeros((data.y.size, 0)),
            "scale": data.scale if data.scale.size else np.zeros((data.y.size, 0)),
            "offset": data.offset,
            "weights": data.weights,
        }

    def results_at(self, x: FloatArray) -> OrdinalResults:
        """A results object holding ``x`` (for the margins verbs on the draws)."""
        if self.mixed:
            raise SpecificationError(
                "the margins verbs on posterior draws are available for models without "
                "random effects; use predict() on the posterior of a mixed model"
            )
        evaluation = self.model.evaluator.evaluate(x)
        info = FitInfo(
            converged=True,
            code=0,
            message="posterior draw",
            n_iter=0,
            n_halvings=0,
            max_grad=float("nan"),
        )
        return OrdinalResults(self.model, x, evaluation, info, defer_covariance=True)

    def model_params(self, X: FloatArray) -> FloatArray:
        """The model's parameters at each sampled row of ``X`` (here the same)."""
        return np.asarray(X, dtype=float)

    def observed_counts(self) -> FloatArray:
        """Weighted count of each response level in the fitted rows."""
        if self.mixed:
            p = self.model.problem
            return np.bincount(p.y, p.weights, minlength=len(self.levels)).astype(float)
        return np.asarray(self.model.response_counts, dtype=float)

    def row_labels(self, newdata: Any = None) -> pd.Index:
        """Labels of the rows :meth:`probabilities_batch` returns.

        ``newdata``'s index (one label per row, as given), or the fitted rows' labels.
        """
        if newdata is None:
            design = self.model.design
            return pd.Index((design.fixed if self.mixed else design).row_index)
        if isinstance(newdata, pd.DataFrame):
            return newdata.index
        return pd.RangeIndex(len(newdata))

    def row_weights(self) -> FloatArray:
        """The fitted rows' frequency weights."""
        if self.mixed:
            return np.asarray(self.model.problem.weights, dtype=float)
        return np.asarray(self.model.data.weights, dtype=float)


class MonotonicTarget(Target):
    """The log posterior in ``(b, log-ratios)`` of each ``mo()`` term."""

    def __init__(self, model: Any, log_prior: Any, nagq: int, mono: MonotonicMap) -> None:
        super().__init__(model, log_prior, nagq)
        self.mono = mono
        names = list(self.param_names)
        for p, spelled in mono.names().items():
            names[p] = spelled[0]
        self.param_names = names

    def start(self, x0: FloatArray) -> FloatArray:
        """``(b, y)`` of the maximum-likelihood steps, pulled inside the simplex."""
        from ordstats.core.solver import NewtonOptions, newton

        sol = newton(self.model.evaluator.evaluate, x0, NewtonOptions(max_iter=50))
        return self.mono.contract(np.asarray(sol.x, dtype=float))

    def evaluation(self, x: FloatArray) -> Any:
        """The linear model's evaluation at ``m(x)``, differentiated in ``x``."""
        return ChainedEvaluation(super().evaluation(self.mono.expand(x)), x, self.mono)

    def log_density(self, x: FloatArray) -> float:
        """``l(m(x)) + log p(x)`` up to a constant."""
        nll = self.model.evaluator.evaluate(self.mono.expand(x)).nll
        if not np.isfinite(nll):
            return -np.inf
        return float(-nll + self.log_prior.value(x))

    def _batch_nll(self, X: FloatArray) -> FloatArray:
        """The negative log-likelihood at the linear coefficients ``m(x)`` of each row."""
        return super()._batch_nll(self.mono.expand(X))

    def probabilities_batch(self, draws: FloatArray, newdata: Any = None) -> FloatArray:
        """Category probabilities at each draw (draws, rows, levels)."""
        return super().probabilities_batch(self.mono.expand(draws), newdata)

    def results_at(self, x: FloatArray) -> Any:
        """A results object at the linear coefficients ``m(x)``."""
        return super().results_at(self.mono.expand(x))

    def model_params(self, X: FloatArray) -> FloatArray:
        """The linear coefficients ``m(x)`` of each sampled row."""
        return np.atleast_2d(self.mono.expand(np.asarray(X, dtype=float)))

    def native_arrays(self) -> dict[str, Any]:
        """The JAX model's arrays, with the ``mo()`` positions."""
        return {**super().native_arrays(), "monotonic": [list(p) for p in self.mono.positions]}

    def brms_columns(self, draws: pd.DataFrame) -> pd.DataFrame:
        """``bsp_`` and ``simo_`` draws of each ``mo()`` term."""
        return monotonic_columns(draws, self.mono)


class ThresholdGroupTarget(MonotonicTarget):
    """The log posterior in the groups' thresholds of ``thres(gr = g)``.

    :class:`MonotonicTarget`'s chain rule, start and predictions serve any map with
    ``expand``, ``chain``, ``contract`` and ``names``; here the affine
    :class:`~ordstats.estimation.bayes_thresholds.ThresholdGroupMap`, whose sampled
    vector is shorter than the model's where groups have fewer thresholds.
    """

    def __init__(self, model: Any, log_prior: Any, nagq: int, tmap: ThresholdGroupMap) -> None:
        # MonotonicTarget reads only the map's expand, chain, contract and names
        super().__init__(model, log_prior, nagq, cast(MonotonicMap, tmap))
        self.tmap = tmap
        names = tmap.names()
        n_grouped = tmap.groups.n_groups * len(tmap.thresholds)
        rest = list(model.param_names)[n_grouped:]
        self.param_names = [names[p][0] for p in range(len(names))] + rest

    def start(self, x0: FloatArray) -> FloatArray:
        """The maximum-likelihood fit's thresholds; the model's start where groups differ.

        A group without rows at some levels has no maximum-likelihood fit (its absent
        thresholds run off), so the start is then the model's own (every group at the
        pooled thresholds).
        """
        if self.tmap.groups.ragged:
            return self.tmap.contract(x0)
        return super().start(x0)

    def native_arrays(self) -> dict[str, Any]:
        """The JAX model's arrays, with the affine map to the nominal model's parameters."""
        return {
            **Target.native_arrays(self),
            "linear_map": self.tmap.matrix,
            "linear_offset": self.tmap.offset,
        }

    def brms_columns(self, draws: pd.DataFrame) -> pd.DataFrame:
        """The draws of brms' ``b_Intercept[g,j]``."""
        return self.tmap.brms_columns(draws)


def threshold_group_map(model: Any) -> ThresholdGroupMap:
    """The map of a model with ``thres(gr = g)``."""
    layout = model.problem.layout
    thresholds = tuple(model.param_names[: layout.n_alpha])
    sign = model.family_spec.capabilities.absent_step_sign
    return ThresholdGroupMap(model.threshold_groups, layout.n_params, thresholds, sign)


class CorrelatedTarget(Target):
    """A mixed model's log posterior in each term's log SDs and ``atanh`` partial correlations.

    See :class:`~ordstats.estimation.bayes_language.CorrelationMap`.  The mode is that of
    the Laplace marginal likelihood (analytic gradient); the log density that weighs the
    draws is, for a single correlated term, the adaptive Gauss-Hermite product rule of
    :mod:`ordstats.estimation.vector_quadrature`, and the Laplace value otherwise.
    """

    def __init__(self, model: Any, log_prior: Any, nagq: int, cmap: CorrelationMap) -> None:
        super().__init__(model, log_prior, nagq)
        self.cmap = cmap
        names = list(self.param_names)
        for p, name in cmap.names(model.terms).items():
            names[p] = name
        self.param_names = names

    def start(self, x0: FloatArray) -> FloatArray:
        """The maximum-likelihood fit's ``(t, y)``, pulled inside the support."""
        return self.cmap.contract(x0)

    def _chained(self, x: FloatArray) -> tuple[float, FloatArray]:
        fg = self.model._objective_functions(self.nagq)[1]
        nll, grad = fg(self.cmap.expand(x))
        return float(nll), self.cmap.jacobian(x).T @ np.asarray(grad)

    def evaluation(self, x: FloatArray) -> Any:
        """The marginal negative log-likelihood in ``(t, y)`` (Hessian by differences)."""
        return _MixedEvaluation(np.asarray(x, dtype=float), self._chained)

    def log_density(self, x: FloatArray) -> float:
        """``l(v(x)) + log p(x)`` up to a constant (the log density the draws are weighed by)."""
        return float(self.log_density_batch(np.asarray(x, dtype=float)[None, :])[0])

    @cached_property
    def _quadrature(self) -> CorrelatedDraws | None:
        return CorrelatedDraws.of(self.model)

    def _batch_nll(self, X: FloatArray) -> FloatArray:
        """The negative log marginal likelihood at ``v(x)`` of each row."""
        V = self.cmap.expand(X)
        if self._quadrature is not None:
            return -self._quadrature.loglik(V)
        return np.array([self.model.objective.value(v, self.nagq) for v in V])


def _native_block(block: Any) -> tuple[Any, ...]:
    """A joint prior's description for :mod:`ordstats.results.jax_models`."""
    if hasattr(block, "alpha"):
        return ("simplex", list(block.positions), tuple(block.alpha))
    return ("lkj", list(block.positions), block.q, block.eta)


def _native_groups(p: Any) -> list[tuple[Any, ...]]:
    """Each random term's ``(X_t, codes, levels, positions of its (log SD, atanh) parameters)``."""
    out, pos = [], p.n_alpha + p.n_beta
    for t in p.terms:
        n_var = t.q * (t.q + 1) // 2
        out.append((t.matrix, t.codes, t.n_levels, list(range(pos, pos + n_var))))
        pos += n_var
    return out


def refuse_monotonic_ml(model: Any) -> None:
    """Maximum-likelihood fits (and mixed models) do not take ``mo()`` terms.

    See :mod:`ordstats.estimation.bayes_language`.

    Raises
    ------
    SpecificationError
    """
    refuse_threshold_groups_ml(model)
    if hasattr(model, "terms"):
        if monotonic_blocks(list(model.param_names)):
            raise SpecificationError(
                "mo() terms are not available in mixed models yet; fit the monotonic "
                "predictor without random terms, or as a factor"
            )
        return
    design = getattr(model, "design", None)
    if design is not None and has_monotonic_terms(design):
        raise SpecificationError(
            "mo() terms are fitted by Bayesian fits only: use fit(prior='default') (brms' "
            "priors, a Dirichlet on the simplex); for maximum likelihood, write the ordinal "
            "predictor as a factor (its successive-difference steps are the unconstrained "
            "mo() steps)"
        )


def make_target(model: Any, log_prior: LogPrior, nagq: int = 1) -> Target:
    """The log posterior of ``model``: in ``mo()``'s ``(b, log-ratios)`` where it has such terms."""
    if hasattr(model, "terms"):
        cmap = correlation_map(model)
        if cmap is None:
            return Target(model, log_prior, nagq)
        return CorrelatedTarget(model, log_prior, nagq, cmap)
    if model.design.scale_offset_name is not None:
        raise SpecificationError(
            "Bayesian fits do not take an offset in the scale formula (R's offset() term) "
            "yet; fit by maximum likelihood (fit() without prior=), which does"
        )
    if model.threshold_groups is not None:
        return ThresholdGroupTarget(model, log_prior, nagq, threshold_group_map(model))
    mono = monotonic_map(model)
    if mono is None:
        return Target(model, log_prior, nagq)
    return MonotonicTarget(model, log_prior, nagq, mono)


def fit_mode(
    model: Any,
    spec: object,
    *,
    start_params: FloatArray | None = None,
    maxiter: int = 100,
    gradtol: float = 1e-8,
    nagq: int = 1,
) -> PosteriorMode:
    """Maximise the log posterior of ``model`` under the priors ``spec`` (``fit(prior=...)``).

    Parameters
    ----------
    model : OrdinalModel or OrdinalMixedModel
    spec : Prior, list of Prior, dict or "default"
    start_params : ndarray, optional
    maxiter : int
    gradtol : float
        Tolerance on the largest absolute gradient of the log posterior.
    nagq : int
        For a mixed model: 1 (Laplace) or adaptive quadrature nodes.

    Returns
    -------
    PosteriorMode
    """
    log_prior, table = resolve_priors(model, spec)
    target = make_target(model, log_prior, nagq)
    l1 = log_prior.l1_weights()
    options = NewtonOptions(max_iter=maxiter, grad_tol=gradtol, rel_tol=1e-10)
    quick = None
    if start_params is None and not np.any(l1 > 0):
        quick = _mode_from_clm_start(model, target, options)
    if quick is not None:
        x, converged, message = quick.x, quick.converged, quick.message
        hessian = np.asarray(quick.evaluation.hessian)
    else:
        x0 = _start_values(model, target, start_params, nagq)
        if np.any(l1 > 0):
            x, hessian, converged, message = _proximal_mode(target, x0, l1, gradtol, maxiter)
        else:
            sol = newton(target.negative_log_posterior, x0, options)
            x, converged, message = sol.x, sol.converged, sol.message
            hessian = np.asarray(sol.evaluation.hessian)
    if not converged:
        import warnings

        warnings.warn(
            f"the posterior mode was not found ({message}); give start_params, raise "
            "maxiter, or use more informative priors",
            ConvergenceWarning,
            stacklevel=user_stacklevel(),
        )
    return PosteriorMode(
        target,
        x,
        hessian,
        log_posterior=target.log_density(x),
        prior_table=table,
        converged=converged,
        message=message,
    )


def _start_values(
    model: Any, target: Target, start_params: FloatArray | None, nagq: int
) -> FloatArray:
    """``start_params``, else the maximum-likelihood fit's estimates (a mixed model) or start."""
    if start_params is not None:
        return np.asarray(start_params, dtype=float)
    if target.mixed:
        x0 = np.asarray(model.fit(nagq=nagq).params_all, dtype=float)
    else:
        x0 = np.asarray(model.start_params, dtype=float)
    return np.asarray(getattr(target, "start", lambda x: x)(x0), dtype=float)


def _mode_from_clm_start(model: Any, target: Target, options: NewtonOptions) -> Any:
    """Newton from the clm start of a mixed model (no correlated terms), or ``None``.

    The clm estimates scaled for a unit SD (``model.clm_start()``) are close enough for
    Newton on the log posterior, whose prior keeps the SD off the boundary: no
    maximum-likelihood fit first, and none of its trouble where the likelihood's SD
    is 0 (Newton from there stalls on the flat log-likelihood).  ``None`` (the caller
    then starts from the maximum-likelihood fit) for other models or when Newton does
    not converge from there.
    """
    if type(target) is not Target or not target.mixed:
        return None
    try:
        sol = newton(target.negative_log_posterior, model.clm_start(), options)
    except OrdstatsError:  # not finite at the start
        return None
    return sol if sol.converged else None


def _proximal_mode(
    target: Target, x0: FloatArray, l1: FloatArray, gradtol: float, maxiter: int
) -> tuple[FloatArray, FloatArray, bool, str]:
    """The mode with Laplace priors: the lasso's proximal Newton on the smooth rest."""
    smooth = make_target(target.model, target.log_prior.smooth_part(), target.nagq)
    n_w = float(np.sum(target.row_weights()))
    penalty = ElasticNet(l1=l1 / n_w, l2=np.zeros_like(l1))
    sol = proximal_newton(
        smooth.negative_log_posterior, x0, penalty, n_w, tol=gradtol / n_w, max_iter=maxiter
    )
    hessian = np.asarray(sol.evaluation.hessian)
    return sol.x, hessian, sol.converged, f"proximal Newton: max KKT violation {sol.kkt:.2e}"
