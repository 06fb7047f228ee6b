r"""Complex survey designs: strata, clusters (PSUs), finite-population corrections, weights.

:class:`SurveyDesign` describes a design as R's ``survey::svydesign`` does
(``id=`` is ``psu=`` here) and :class:`ReplicateDesign` one given by replicate
weights, as ``survey::svrepdesign``.  They only hold and check the design;
``OrdinalModel.from_formula(formula, design=...)`` fits with the sampling
weights and :mod:`ordstats.results.survey` computes the design-based
covariance (Taylor linearisation as R's ``svyrecvar``, or the replicate
variance as R's ``svrVar``).

A design keeps every row of its data, in a copy of the user's frame (a later
change to that frame does not change the design, as R's designs hold their own
copy).  :meth:`SurveyDesign.subset` (R's ``subset(design, ...)``) marks a
domain: a fit uses the domain's rows only, but the variance still counts every
PSU of the full design, as R does.

Stages: ``psu`` may name several columns (R's ``id = ~dnum + snum``); clusters
of a later stage are nested in those of the earlier one, and with an ``fpc``
column per stage the later stages add their variance (R's multistage
formula).  Strata may be given per stage (R's ``strata = ~s1 + s2``): a later
stage's strata split each cluster of the stage before.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Protocol

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.design.core import align_to_index
from ordstats.errors import (
    DataError,
    OrdstatsWarning,
    SpecificationError,
    check_flag,
    is_real_number,
    not_numbers,
    user_stacklevel,
)

__all__ = [
    "CALFUNS",
    "LONELY_PSU",
    "REPLICATE_TYPES",
    "Calibration",
    "Raking",
    "ReplicateDesign",
    "Stage",
    "SurveyDesign",
]

#: R's ``options(survey.lonely.psu=)`` choices for a stratum with one PSU.
LONELY_PSU = ("fail", "remove", "adjust", "certainty", "average")
#: R's ``calibrate(calfun=)`` choices.
CALFUNS = ("linear", "raking", "logit")
#: Replicate-weight types (R's ``svrepdesign(type=)``).
REPLICATE_TYPES = (
    "BRR",
    "Fay",
    "JK1",
    "JKn",
    "bootstrap",
    "ACS",
    "successive-difference",
    "JK2",
    "other",
)
#: Types whose scale R fixes (rscales 1), ignoring scale= and rscales=: 4/R or 1.
_FIXED_SCALE = {"ACS": 4.0, "successive-difference": 4.0, "JK2": None}


@dataclass(frozen=True)
class Stage:
    """One sampling stage, per row of the design's data.

    Attributes
    ----------
    strata : ndarray of int
        Stratum code of each row (at later stages: the earlier stage's cluster).
    clusters : ndarray of int
        Cluster (PSU at stage 1) code of each row, nested in the strata.
    n_psu : ndarray of float
        Clusters sampled in the row's stratum (R's ``fpc$sampsize``).
    popsize : ndarray of float or None
        Clusters in the population in the row's stratum (R's ``fpc$popsize``).
    """

    strata: IntArray
    clusters: IntArray
    n_psu: FloatArray
    popsize: FloatArray | None
    labels: Any = None

    def take(self, rows: IntArray) -> Stage:
        """The stage restricted to some rows (codes and counts kept)."""
        return Stage(
            self.strata[rows],
            self.clusters[rows],
            self.n_psu[rows],
            None if self.popsize is None else self.popsize[rows],
            self.labels,
        )

    def stratum_label(self, code: int) -> Any:
        """The user's label of a stratum code (at later stages: the earlier clusters' labels)."""
        if self.labels is None:
            return code
        label = self.labels[code]
        return label.item() if hasattr(label, "item") else label


def _names(value: Any, what: str) -> list[str]:
    """A column name or a sequence of them as a list (empty for None)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return list(value)
    raise SpecificationError(
        f"{what} must be a column name or a list of column names; got {type(value).__name__}"
    )


def _check_frame(data: Any) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        raise DataError(
            f"a survey design needs its data as a pandas DataFrame; got {type(data).__name__}"
        )
    if len(data) == 0:
        raise DataError("the survey data have no rows")
    if not data.index.is_unique:
        raise DataError(
            "the survey data's index repeats labels, so fitted rows cannot be matched to the "
            "design; give the data a unique index (data.reset_index(drop=True))"
        )
    # a copy: the weights, strata and clusters are read now, the model's variables at the
    # fit, and a later change to the user's frame must change neither
    return data.copy()


def _column(data: pd.DataFrame, name: str, what: str) -> pd.Series:
    if not isinstance(name, str):
        raise SpecificationError(
            f"{what} must be the name of a column of the design's data; got "
            f"{type(name).__name__} (put the values in a column and give its name)"
        )
    if name not in data.columns:
        raise DataError(f"the {what} column {name!r} is not a column of the data")
    column = data[name]
    if column.isna().any():
        raise DataError(
            f"the {what} column {name!r} has {int(column.isna().sum())} missing values; a "
            "survey design needs every row's " + what + " (drop those rows or fill them in "
            "before building the design)"
        )
    return column


def _codes(*columns: Any) -> IntArray:
    """Integer codes of the combinations of the given label arrays."""
    if len(columns) == 1:
        return pd.factorize(pd.Series(columns[0]), sort=True)[0].astype(np.intp)
    frame = pd.DataFrame({i: np.asarray(c) for i, c in enumerate(columns)})
    return frame.groupby(list(frame.columns), sort=True).ngroup().to_numpy(np.intp)


def _count_per_group(groups: IntArray, members: IntArray) -> FloatArray:
    """For each row: how many distinct ``members`` its ``groups`` value has (codes >= 0)."""
    groups, members = np.asarray(groups, dtype=np.int64), np.asarray(members, dtype=np.int64)
    pairs = np.unique(groups * (int(members.max()) + 1) + members)
    counts = np.bincount(pairs // (int(members.max()) + 1), minlength=int(groups.max()) + 1)
    return counts[groups].astype(float)


def _numbers(values: Any, what: str, column: str | None = None) -> FloatArray:
    """``values`` as floats, or an error naming the column whose values are not numbers.

    Booleans, complex numbers, dates and numbers as text are refused, as the
    fit's ``weights=`` refuses them: numpy would read them as 0/1, the real
    part, nanoseconds or the parsed text.
    """
    where = f"the column {column!r}" if column is not None else "they"
    kind = not_numbers(values)
    if kind is not None:
        holds = "has" if column is not None else "have"
        raise DataError(
            f"{what} must be numbers; {where} {holds} {kind}. Convert them to real numbers "
            "before building the design"
        )
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        where = f"the column {column!r}" if column is not None else "they"
        raise DataError(
            f"{what} must be numbers; {where} has text or other values that are not: {err}. "
            "Convert it with pandas.to_numeric before building the design"
        ) from err


def _checked_weights(
    values: Any, n: int, what: str = "weights", column: str | None = None
) -> FloatArray:
    w = _numbers(values, what, column)
    if w.shape != (n,):
        raise DataError(f"{what} must have one value per row of the data ({n}); got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise DataError(f"{what} have {int((~np.isfinite(w)).sum())} missing or infinite values")
    if np.any(w <= 0):
        raise DataError(
            f"sampling weights must be positive; {int((w <= 0).sum())} are zero or negative. "
            "Drop rows that are not in the sample, or use design.subset(...) for a domain"
        )
    return w


def _popsize(fpc: list[FloatArray], n_psu: list[FloatArray]) -> list[FloatArray]:
    """Population sizes from fpc columns: sizes (all >= 1) or fractions (all <= 1), as R."""
    values = np.column_stack(fpc)
    if np.any(values <= 0):
        raise DataError("fpc must be positive: a population size or a sampling fraction")
    is_size = bool(np.any(values > 1))
    if is_size and not np.all(values >= 1):
        raise DataError(
            "fpc must be all population sizes (>= 1) or all sampling fractions (<= 1); "
            "some values are above 1 and some below"
        )
    sizes = [f if is_size else n / f for f, n in zip(fpc, n_psu, strict=True)]
    for stage, (size, n) in enumerate(zip(sizes, n_psu, strict=True), start=1):
        if np.any(size < n - 1e-9 * n):
            i = int(np.flatnonzero(size < n - 1e-9 * n)[0])
            raise DataError(
                f"fpc implies more than 100% sampling at stage {stage}: row {i} has "
                f"population size {size[i]:g} but {n[i]:g} sampled PSUs in its stratum; "
                "fpc is the number of PSUs in the population stratum (or the sampling fraction)"
            )
    return sizes


class _DesignRows:
    """What both kinds of design share: the data, the weights, a domain."""

    data: pd.DataFrame
    weights: FloatArray
    domain: np.ndarray

    @property
    def population_size(self) -> float:
        """Sum of the sampling weights over the full design (R's estimated population)."""
        return float(self.weights.sum())

    def fit_data(self) -> pd.DataFrame:
        """The rows a fit uses: those of the domain (all rows without a subset)."""
        return self.data if self.domain.all() else self.data.loc[self.domain]

    def subset(self, rows: Any) -> Any:
        """A domain (subpopulation) of the design, keeping the full design (R's ``subset``).

        Parameters
        ----------
        rows : array-like of bool or pandas.Series of bool
            Which rows are in the domain (a Series is aligned on the data's
            index; missing values count as outside, as R).

        Returns
        -------
        SurveyDesign or ReplicateDesign
            The same design with a domain; fits use its rows, variances count
            every PSU (or replicate weight) of the full design.

        Raises
        ------
        DataError
            The condition has the wrong length or selects no row.
        """
        mask = _domain_mask(rows, self.data.index)
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.domain = self.domain & mask
        if not new.domain.any():
            raise DataError(
                "the domain has no rows: the subset condition selects none of the design's rows"
            )
        return new

    def trim_weights(
        self, upper: float = np.inf, lower: float = -np.inf, strict: bool = False
    ) -> Any:
        """The design with its weights trimmed to ``[lower, upper]``, as R's ``trimWeights``.

        Weights outside the limits are set to the limit, and the weight taken
        off (or added) is shared equally among the other rows, so the sum of
        the weights is kept.  The shares can carry a row past a limit;
        ``strict=True`` repeats the trimming until no weight is outside.  The
        variance then treats the trimmed weights as sampling weights, as R
        does (a calibration made before keeps its own weights in the
        linearisation, as R's).

        A :class:`ReplicateDesign` trims its full-sample weights and each
        replicate's weights the same way, rows of weight zero (outside a
        replicate) left at zero.  R's ``trimWeights`` of a ``svyrep.design``
        (survey 4.1-1) leaves the full-sample weights untrimmed and recycles
        the replicate weights' shares across columns; ordstats does what its
        help page describes.

        Parameters
        ----------
        upper, lower : float
            The limits (R's order of arguments); default: none.
        strict : bool
            Repeat until every weight is within the limits (R's ``strict``).

        Returns
        -------
        SurveyDesign or ReplicateDesign
            A new design; take a domain (:meth:`subset`) afterwards.

        Raises
        ------
        SpecificationError
            The limits are not numbers with ``lower < upper``, or the design
            already has a domain.
        DataError
            ``strict=True`` with limits no weights summing to the design's
            total can meet (R recurses without end there).
        """
        self._check_no_domain("trim the weights of")
        lower = _real_number(lower, "lower", "the lowest weight kept")
        upper = _real_number(upper, "upper", "the highest weight kept")
        if not lower < upper:
            raise SpecificationError(
                f"trim_weights needs lower < upper; got lower={lower:g}, upper={upper:g}"
            )
        strict = check_flag("strict", strict)
        new = self._copy()
        new._trim(lambda w, where: trimmed_weights(w, lower, upper, strict, where))
        limits = f"[{lower:g}, {upper:g}]" + (", strict" if strict else "")
        new._record_adjustment(("Weights trimmed to:", limits))
        return new

    def _trim(self, trim: Callable[[FloatArray, str], FloatArray]) -> None:
        self.weights = trim(self.weights, "the sample")

    def _record_adjustment(self, label: tuple[str, str]) -> None:
        raise NotImplementedError

    def post_stratify(self, by: str | Sequence[str], population: Any) -> Any:
        """The design with its weights post-stratified, as R's ``postStratify``.

        Each row's weight is multiplied by its post-stratum's population count
        over the post-stratum's sum of weights.  A :class:`SurveyDesign`'s
        linearisation then uses the residuals of the influence functions from
        their weighted post-stratum means, as R's ``svyrecvar`` with
        ``postStrata``; a :class:`ReplicateDesign` post-stratifies each
        replicate's weights the same way (R's ``postStratify`` of a
        ``svyrep.design``).

        Parameters
        ----------
        by : str or list of str
            Column(s) of the data whose combinations are the post-strata.
        population : pandas.DataFrame or pandas.Series
            The population count of each post-stratum: a DataFrame with the
            ``by`` columns and a ``Freq`` column (R's data frame), or a Series
            indexed by the post-strata labels (a MultiIndex for several columns).

        Returns
        -------
        SurveyDesign or ReplicateDesign
            A new design; post-stratify again for further variables, and take
            a domain (:meth:`subset`) afterwards.

        Raises
        ------
        SpecificationError
            The design already has a domain, or ``population`` is not one of the forms above.
        DataError
            A post-stratum of the sample has no population count (or a zero
            one), or one with a positive count has no row in the sample (or, of
            a replicate design, no positive weight in some replicate).
        """
        self._check_no_domain("post-stratify")
        codes, totals, names = self._cells(by, population)
        new = self._copy()
        new._post_stratify(codes, totals, names)
        return new

    def _cells(self, by: Any, population: Any) -> tuple[IntArray, FloatArray, list[str]]:
        """Each row's post-stratum code, the post-strata's counts and the ``by`` columns."""
        names = _names(by, "by")
        if not names:
            raise SpecificationError("by= needs at least one column name")
        cells = pd.DataFrame({name: _column(self.data, name, "post-strata") for name in names})
        codes, totals = _post_stratum_totals(cells, _population_counts(population, names))
        return codes, totals, names

    def _copy(self) -> Any:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def _post_stratify(self, codes: IntArray, totals: FloatArray, names: list[str]) -> None:
        raise NotImplementedError

    def _rescale(self, codes: IntArray, totals: FloatArray, names: list[str]) -> None:
        raise NotImplementedError

    def _record_raking(self, steps: list[tuple[IntArray, FloatArray]], label: str) -> None:
        raise NotImplementedError

    def rake(
        self,
        margins: Sequence[str | Sequence[str]],
        populations: Sequence[Any],
        maxit: int = 10,
        epsilon: float = 1.0,
    ) -> Any:
        """The design raked to several margins, as R's ``rake``.

        Iterative proportional fitting: each sweep post-stratifies on every
        margin in turn (:meth:`post_stratify`), until the weighted counts of
        the cross-classification of all the margins' columns change by less
        than ``epsilon`` in a sweep.  A :class:`SurveyDesign`'s linearisation
        then residualises the influence functions on the last sweep's margins,
        ten times round, as R's ``svyrecvar`` for a raked design; a
        :class:`ReplicateDesign` rakes each replicate's weights in the same
        sweeps.

        Parameters
        ----------
        margins : list of (str or list of str)
            The columns of each margin (R's ``sample.margins``).
        populations : list of pandas.DataFrame or pandas.Series
            The population counts of each margin, in the forms
            :meth:`post_stratify` takes (R's ``population.margins``).
        maxit : int
            Most sweeps (R's ``control$maxit``, default 10).
        epsilon : float
            Largest change of a cell's weighted count in the last sweep; below
            1 it is a fraction of the sum of the weights (R's ``control$epsilon``,
            default 1).

        Returns
        -------
        SurveyDesign or ReplicateDesign
            A new design; take a domain (:meth:`subset`) afterwards.

        Warns
        -----
        OrdstatsWarning
            Raking did not converge in ``maxit`` sweeps (as R), or the margins'
            counts add up to different totals (which no weights can meet).

        Raises
        ------
        SpecificationError
            The design has a domain, margins and populations differ in number,
            or ``maxit``/``epsilon`` are not a positive count/number.
        DataError
            A margin's counts do not match the sample's cells (as
            :meth:`post_stratify`).
        """
        self._check_no_domain("rake")
        if isinstance(margins, str) or len(margins) == 0 or len(margins) != len(populations):
            raise SpecificationError(
                "margins and populations must be lists of the same length: the columns of "
                "each margin and its population counts"
            )
        maxit = _count(maxit, "maxit")
        epsilon = _real_number(epsilon, "epsilon", "positive")
        if not epsilon > 0:
            raise SpecificationError(f"epsilon must be positive; got {epsilon!r}")
        cells = [self._cells(by, pop) for by, pop in zip(margins, populations, strict=True)]
        sizes = [float(totals.sum()) for _, totals, _ in cells]
        if max(sizes) - min(sizes) > 1e-8 * max(sizes):
            warnings.warn(
                f"the margins' population counts add up to different totals ({min(sizes):g} "
                f"to {max(sizes):g}): no weights meet them all, and each sweep ends on the "
                "last margin's (R rakes them without a word); check the population counts",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
        columns = list(dict.fromkeys(name for _, _, names in cells for name in names))
        table_codes = _codes(*[self.data[name].to_numpy() for name in columns])
        tolerance = epsilon * self.population_size if epsilon < 1 else epsilon
        new = self._copy()
        table = np.bincount(table_codes, new.weights)
        for _ in range(maxit):
            steps = []
            for codes, totals, names in cells:
                new._rescale(codes, totals, names)
                steps.append((codes, new.weights))
            table, change = np.bincount(table_codes, new.weights), table
            if np.max(np.abs(table - change)) < tolerance:
                break
        else:
            warnings.warn(
                f"raking did not converge after {maxit} sweeps (as R's rake, the design is "
                "returned); raise maxit or epsilon",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
        new._record_raking(steps, " + ".join(" x ".join(names) for _, _, names in cells))
        return new

    def calibrate(
        self,
        population: Any,
        calfun: str = "linear",
        bounds: tuple[float, float] | None = None,
        maxit: int = 50,
        epsilon: float = 1e-7,
        trim: tuple[float, float] | None = None,
        bounds_const: bool = False,
    ) -> Any:
        """The design with calibration weights, as R's ``calibrate``.

        R's ``calibrate(design, ~x1 + x2, population, calfun = "linear")`` on
        numeric columns: the weights become ``d_i (1 + x_i' lambda)`` so that
        their totals of the columns equal ``population``, and the
        linearisation of a :class:`SurveyDesign` uses the influence functions'
        residuals from their weighted regression on the columns, as R's
        ``svyrecvar``; a :class:`ReplicateDesign` calibrates each replicate's
        weights to the same totals, as R's ``calibrate`` of a ``svyrep.design``.

        Parameters
        ----------
        population : mapping or pandas.Series
            Population total of each numeric column, by name; ``"(Intercept)"``
            (R's name) is the population size, the total of a column of ones.
            Categorical variables enter as 0/1 columns the user makes (or
            through :meth:`post_stratify` for their cells).
        calfun : {"linear", "raking", "logit"}
            The calibration function (R's ``calfun``): weights ``d_i F(x_i'
            lambda)`` with ``F(u) = 1 + u`` (linear), ``exp(u)`` (raking) or
            the logit function bounded by ``bounds``.  All but the unbounded
            linear one are solved by R's Newton iterations (``grake``); the
            linearisation is the same as linear calibration's, as R.
        bounds : (float, float), optional
            Bounds ``(L, U)`` on the ratios ``g_i`` of the new to the old
            weights, ``L < 1 < U`` (R's ``bounds``); ``"logit"`` needs finite ones.
            Where every total is over 20 times the sample's, the weights are
            first multiplied by the mean of those ratios and the bounds apply to
            the ratios to the rescaled weights, with a warning, as R's ``grake``.
            With ``bounds_const=True`` they bound the new weights instead.
        maxit, epsilon : int, float
            R's ``grake`` controls: most Newton steps, and the largest misfit of
            a total relative to ``1 + |total|``.
        trim : (float, float), optional
            Limits ``(L, U)`` of the ratios ``g_i`` after calibrating (R's
            ``trim``): ratios outside are set to the limit, and the weight
            taken off (or added) is shared among the other rows in proportion
            to their old weights, so the weights' sum is kept; the other
            totals then hold only approximately, as in R.  A replicate design
            trims each replicate's ratios the same way.  R ignores ``trim`` in
            unbounded linear calibration (its ``regcalibrate`` shortcut); here
            those ratios are trimmed too, as R trims them given wide finite
            ``bounds``.
        bounds_const : bool
            ``bounds`` are limits of the new weights, not of their ratios to
            the old (R's ``bounds.const``): row ``i``'s ratio is bounded by
            ``(L / d_i, U / d_i)``.  A replicate design bounds each
            replicate's weights the same way; R ignores ``bounds.const`` there.

        Returns
        -------
        SurveyDesign or ReplicateDesign
            A new design; take a domain (:meth:`subset`) afterwards.

        Raises
        ------
        SpecificationError
            The design already has a domain, or no totals are given.
        DataError
            A column is missing or not numeric, the columns are collinear, the
            calibrated weights are not all positive (R's linear calibration
            allows negative weights; a fit here needs positive ones), or the
            iterations fail to reach the totals (R's "Calibration failed"; a
            replicate's failure only warns, as R).
        """
        self._check_no_domain("calibrate")
        rule = _CalibrationRule.of(
            calfun, bounds, _count(maxit, "maxit"), epsilon, trim, bounds_const
        )
        totals = _calibration_totals(population)
        names = list(totals.index)
        matrix = np.column_stack(
            [
                np.ones(len(self.data))
                if name == "(Intercept)"
                else _numbers(_column(self.data, name, "calibration"), "calibration", name)
                for name in names
            ]
        )
        new = self._copy()
        target = totals.to_numpy()
        new._calibrate(matrix, names, rule.label, partial(rule.weights, matrix, target))
        return new

    def _calibrate(self, matrix: FloatArray, names: list[str], kind: str, adjust: _Adjust) -> None:
        raise NotImplementedError

    def _check_no_domain(self, what: str) -> None:
        if not self.domain.all():
            raise SpecificationError(
                f"{what} the full design, then take the domain with subset(): the "
                "population counts and totals are of the whole population"
            )


class SurveyDesign(_DesignRows):
    """A complex survey design, as R's ``svydesign``.

    Parameters
    ----------
    data : pandas.DataFrame
        The sample, one row per unit; the model's variables are read from it.
    weights : str, optional
        Column of sampling weights (inverse inclusion probabilities, > 0).
        Default: from ``fpc`` (population over sample size at each stage) or,
        without it, 1 with a warning (R's "assuming equal probability").
    strata : str or list of str, optional
        Column of first-stage strata, or one column per stage up to the last
        (R's ``strata = ~s1 + s2``): the clusters of stage ``i`` are sampled
        within the strata of stage ``i`` inside each cluster of stage ``i - 1``.
        A cluster of a later stage with rows in several of its strata counts
        as one cluster in each of them, as in R's variance, with a warning.
    psu : str or list of str, optional
        Column(s) of the cluster labels, one per stage (R's ``id=``); default:
        each row is its own PSU (R's ``id = ~1``).
    fpc : str or list of str, optional
        Finite-population correction per stage: the number of PSUs in the
        population stratum (values >= 1) or the sampling fraction (<= 1), as R.
    nest : bool
        PSU labels are only unique within strata (R's ``nest=TRUE``).  Without
        it, a PSU label found in two strata is an error, as R's check.
    lonely_psu : {"fail", "remove", "adjust", "certainty", "average"}
        What a stratum with a single PSU contributes to the variance, R's
        ``options(survey.lonely.psu=)``: an error (R's default), nothing
        (``"remove"``, ``"certainty"``), its PSU total centred at zero, the
        grand mean (``"adjust"``), or the average of the other strata.
    adjust_domain_lonely : bool
        Apply ``lonely_psu`` also where a domain (:meth:`subset`) uses a single
        PSU of a stratum that has several, with a warning (R's
        ``options(survey.adjust.domain.lonely = TRUE)``); default False, as R:
        that PSU's total is centred at the stratum's mean over all its PSUs.

    Raises
    ------
    DataError
        Missing values in the design columns, non-positive weights, PSUs not
        nested in strata, or an fpc below the number of sampled PSUs.
    """

    def __init__(
        self,
        data: Any,
        weights: str | None = None,
        strata: str | None = None,
        psu: str | Sequence[str] | None = None,
        fpc: str | Sequence[str] | None = None,
        nest: bool = False,
        lonely_psu: str = "fail",
        adjust_domain_lonely: bool = False,
    ) -> None:
        data = _check_frame(data)
        if lonely_psu not in LONELY_PSU:
            raise SpecificationError(f"lonely_psu must be one of {LONELY_PSU}; got {lonely_psu!r}")
        for name, flag in (("nest", nest), ("adjust_domain_lonely", adjust_domain_lonely)):
            if not isinstance(flag, (bool, np.bool_)):
                raise SpecificationError(f"{name} must be True or False; got {flag!r}")
        n = len(data)
        psu_names = _names(psu, "psu")
        strata_names = _names(strata, "strata")
        fpc_names = _names(fpc, "fpc")
        if len(strata_names) > max(1, len(psu_names)):
            raise SpecificationError(
                f"strata= takes at most one column per stage ({max(1, len(psu_names))}: "
                f"{len(psu_names) or 1} psu column(s)); got {len(strata_names)}"
            )
        if fpc_names and len(fpc_names) != max(1, len(psu_names)):
            raise SpecificationError(
                f"fpc= needs one column per stage ({max(1, len(psu_names))}); got {len(fpc_names)}"
            )
        ids = [_column(data, name, "psu").to_numpy() for name in psu_names] or [np.arange(n)]
        given = [_column(data, name, "strata").to_numpy() for name in strata_names] or [
            np.zeros(n, dtype=np.intp)
        ]
        # the strata of stage i: column min(i, number given), within stage i-1's clusters
        per_stage = [given[min(i, len(given) - 1)] for i in range(len(ids))]
        stratum = per_stage[0]
        clusters = [_codes(stratum, ids[0]) if nest else _codes(ids[0])]
        for i, later in enumerate(ids[1:], start=1):
            # a later stage's clusters are counted within its strata, as R's svyrecvar
            # (which totals each stratum's rows by cluster): one that spans several strata
            # is one cluster in each, with nest or without
            nested_in = (per_stage[i],) if i < len(given) else ()
            clusters.append(_codes(clusters[-1], *nested_in, later))
            if nested_in and not nest:
                _warn_split_clusters(clusters[-1], _codes(clusters[-2], later), i + 1)
        strata_codes = [_codes(stratum)] + [
            _codes(clusters[i - 1], per_stage[i]) if strata_names else clusters[i - 1]
            for i in range(1, len(ids))
        ]
        if strata_names and not nest:
            spread = _count_per_group(clusters[0], strata_codes[0])
            if np.any(spread > 1):
                raise DataError(
                    "some PSUs appear in several strata: their labels are reused across strata; "
                    "pass nest=True if PSU labels are only unique within a stratum"
                )
        n_psu = [_count_per_group(s, c) for s, c in zip(strata_codes, clusters, strict=True)]
        popsize: list[FloatArray | None] = [None] * len(clusters)
        if fpc_names:
            columns = [_numbers(_column(data, name, "fpc"), "fpc", name) for name in fpc_names]
            if any(np.isnan(c).any() for c in columns):
                raise DataError("fpc columns must be numeric")
            popsize = list(_popsize(columns, n_psu))
            for stage, (s, size) in enumerate(zip(strata_codes, popsize, strict=True), 1):
                if _count_per_group(s, pd.factorize(size)[0]).max() > 1:
                    warnings.warn(
                        f"fpc varies within strata at stage {stage}",
                        OrdstatsWarning,
                        stacklevel=user_stacklevel(),
                    )
        if weights is not None:
            w = _checked_weights(_column(data, weights, "weights").to_numpy(), n, column=weights)
        elif fpc_names:
            w = np.prod([p / m for p, m in zip(popsize, n_psu, strict=True)], axis=0)  # type: ignore[operator]
        else:
            warnings.warn(
                "no sampling weights given: equal probability assumed (weights 1), as R's "
                "svydesign; pass weights= the column of sampling weights",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
            w = np.ones(n)
        self.data = data
        self.weights_name = weights
        self.weights = w
        self.strata_name = strata_names[0] if strata_names else None
        self.strata_names = strata_names
        self.psu_names = psu_names
        self.fpc_names = fpc_names
        self.nest = bool(nest)
        self.lonely_psu = lonely_psu
        self.adjust_domain_lonely = bool(adjust_domain_lonely)
        self.stages = [
            Stage(s, c, m, p)
            for s, c, m, p in zip(strata_codes, clusters, n_psu, popsize, strict=True)
        ]
        if strata_names:
            labels = pd.factorize(pd.Series(stratum), sort=True)[1].to_numpy()
            self.stages[0] = replace(self.stages[0], labels=labels)
        for i in range(1, len(ids)):
            # a later stratum is named as R names it: its strata value (1 without strata)
            # and the earlier stage's cluster, "M.83"
            parts = [per_stage[i] if strata_names else np.ones(n, dtype=np.intp), ids[i - 1]]
            self.stages[i] = replace(self.stages[i], labels=_joined_labels(strata_codes[i], parts))
        self.domain = np.ones(n, dtype=bool)
        self.calibrations: tuple[Calibration | Raking | Trimming, ...] = ()

    def _post_stratify(self, codes: IntArray, totals: FloatArray, names: list[str]) -> None:
        old = self.weights
        indicators = np.zeros((codes.size, totals.size))
        indicators[np.arange(codes.size), codes] = 1.0
        label = ("Post-strata:", " x ".join(names))
        self._rescale(codes, totals, names)
        self.calibrations = (*self.calibrations, Calibration(indicators, old, self.weights, label))

    def _rescale(self, codes: IntArray, totals: FloatArray, names: list[str]) -> None:
        sums = np.bincount(codes, weights=self.weights, minlength=totals.size)
        self.weights = self.weights * (totals / sums)[codes]

    def _record_raking(self, steps: list[tuple[IntArray, FloatArray]], label: str) -> None:
        self.calibrations = (*self.calibrations, Raking(tuple(steps), ("Raked on:", label)))

    def _record_adjustment(self, label: tuple[str, str]) -> None:
        self.calibrations = (*self.calibrations, Trimming(label))

    def _calibrate(self, matrix: FloatArray, names: list[str], kind: str, adjust: _Adjust) -> None:
        old = self.weights
        self.weights = adjust(old, "the sample", True)
        label = ("Calibrated on:", ", ".join(names) + kind)
        self.calibrations = (*self.calibrations, Calibration(matrix, old, self.weights, label))

    # -- what a fit and a summary read ----------------------------------------

    kind = "linearization"

    @property
    def n_strata(self) -> int:
        """Strata of the first stage in the full design."""
        return int(np.unique(self.stages[0].strata).size)

    @property
    def n_psu(self) -> int:
        """PSUs in the full design."""
        return int(np.unique(self.stages[0].clusters).size)

    def degf(self, rows: IntArray | None = None) -> int:
        """Design degrees of freedom, PSUs minus strata (R's ``degf``).

        Parameters
        ----------
        rows : ndarray of int, optional
            Positions of the rows a fit used (default: the domain's rows); only
            PSUs and strata with such rows count, as R's ``degf`` of the design
            a fit used.
        """
        rows = np.flatnonzero(self.domain) if rows is None else rows
        stage = self.stages[0]
        return int(np.unique(stage.clusters[rows]).size - np.unique(stage.strata[rows]).size)

    def describe(self) -> list[tuple[str, str]]:
        """Lines of the summary's design block."""
        stages = len(self.stages)
        return [
            ("Design:", f"{stages}-stage, {'stratified' if self.strata_name else 'no strata'}"),
            ("Strata:", str(self.n_strata)),
            ("PSUs:", str(self.n_psu)),
            ("FPC:", ", ".join(self.fpc_names) if self.fpc_names else "none"),
            *[c.label for c in self.calibrations],
            ("Sum of weights:", f"{self.population_size:.6g}"),
        ]

    def __repr__(self) -> str:
        return (
            f"SurveyDesign({len(self.data)} rows, {self.n_strata} strata, {self.n_psu} PSUs"
            + (f", domain of {int(self.domain.sum())} rows" if not self.domain.all() else "")
            + ")"
        )


@dataclass(frozen=True)
class Calibration:
    """One calibration of a design's weights (post-strata, linear): what its variance reads.

    Attributes
    ----------
    matrix : ndarray, shape (n, q)
        The calibration variables of each row of the data (post-strata: 0/1 indicators).
    old_weights, weights : ndarray of float
        The weights before and after calibrating.
    label : tuple of str
        The summary's line for it.
    """

    matrix: FloatArray
    old_weights: FloatArray
    weights: FloatArray
    label: tuple[str, str]

    def residuals(self, x: FloatArray) -> FloatArray:
        """Weighted influence values less their fit on the calibration variables.

        ``x`` has one row per row of the data; with ``u = x / w`` (``w`` the
        calibrated weights) the result is ``w_i (u_i - m_i' b)``, ``b`` the
        least-squares fit of ``u`` on the variables ``m`` with the weights
        before calibrating (post-strata: the weighted post-stratum means), as
        R's ``svyrecvar`` with ``postStrata``.
        """
        root = np.sqrt(self.old_weights)[:, None]
        u = x / self.weights[:, None]
        coef = np.linalg.lstsq(root * self.matrix, root * u, rcond=None)[0]
        return x - self.weights[:, None] * (self.matrix @ coef)


@dataclass(frozen=True)
class Trimming:
    """Weights trimmed (R's ``trimWeights``): a line of the summary, nothing for the variance.

    Attributes
    ----------
    label : tuple of str
        The summary's line for it.
    """

    label: tuple[str, str]

    def residuals(self, x: FloatArray) -> FloatArray:
        """``x`` unchanged: trimmed weights are taken as sampling weights, as R."""
        return x


@dataclass(frozen=True)
class Raking:
    """A raking of a design's weights (R's ``rake``): what its variance reads.

    Attributes
    ----------
    steps : tuple of (ndarray of int, ndarray of float)
        For each margin of the last sweep: each row's cell and the weights
        after post-stratifying on it.
    label : tuple of str
        The summary's line for it.
    """

    steps: tuple[tuple[IntArray, FloatArray], ...]
    label: tuple[str, str]

    def residuals(self, x: FloatArray) -> FloatArray:
        """Weighted influence values residualised on each margin in turn, ten times round.

        R's ``svyrecvar`` for a raked design: ``x - w * ave(x / w, cell)`` with
        each margin's weights ``w`` and unweighted cell means (over all rows of
        the design), the sweep repeated ten times whether or not it has settled.
        """
        for _ in range(10):
            for codes, weights in self.steps:
                u = x / weights[:, None]
                counts = np.bincount(codes)[:, None]
                means = np.stack([np.bincount(codes, col) for col in u.T], axis=1) / counts
                x = x - weights[:, None] * means[codes]
        return x


class _Adjust(Protocol):
    def __call__(self, weights: FloatArray, where: str, strict: bool) -> FloatArray: ...


@dataclass(frozen=True)
class _CalibrationRule:
    """R's calibration functions (``cal.linear``, ``cal.raking``, ``cal.logit``) and ``grake``."""

    calfun: str
    #: bounds of the ratios g (floats), or of each row's (arrays: :meth:`for_weights`)
    lower: Any
    upper: Any
    maxit: int
    epsilon: float
    trim: tuple[float, float] | None = None
    #: ``lower`` and ``upper`` bound the new weights (R's ``bounds.const``)
    bounds_const: bool = False

    @classmethod
    def of(
        cls,
        calfun: Any,
        bounds: Any,
        maxit: int,
        epsilon: Any,
        trim: Any = None,
        bounds_const: Any = False,
    ) -> _CalibrationRule:
        if calfun not in CALFUNS:
            raise SpecificationError(f"calfun must be one of {CALFUNS}; got {calfun!r:.40}")
        bounds_const = check_flag("bounds_const", bounds_const)
        lower, upper = -np.inf, np.inf
        if bounds is not None:
            if isinstance(bounds, str) or np.shape(bounds) != (2,):
                raise SpecificationError(
                    f"bounds must be a pair (lower, upper); got {bounds!r:.40}"
                )
            what = ("the lowest weight", "the highest weight") if bounds_const else None
            lower = _real_number(bounds[0], "bounds[0]", what[0] if what else "below 1")
            upper = _real_number(bounds[1], "bounds[1]", what[1] if what else "above 1")
            if bounds_const and not lower < upper:
                raise SpecificationError(
                    "bounds (lower, upper) on the new weights need lower < upper; got "
                    f"({lower:g}, {upper:g})"
                )
            if not bounds_const and not lower < 1 < upper:
                raise SpecificationError(
                    "bounds (lower, upper) on the ratios of new to old weights need "
                    f"lower < 1 < upper; got ({lower:g}, {upper:g})"
                )
        if calfun == "logit" and not (np.isfinite(lower) and np.isfinite(upper)):
            raise SpecificationError("calfun='logit' needs finite bounds=(lower, upper)")
        epsilon = _real_number(epsilon, "epsilon", "positive")
        if not epsilon > 0:
            raise SpecificationError(f"epsilon must be positive; got {epsilon!r}")
        return cls(calfun, lower, upper, maxit, epsilon, _trim_limits(trim), bounds_const)

    def for_weights(self, old: FloatArray) -> _CalibrationRule:
        """The rule with each row's bounds of its ratio, ``L / d_i`` and ``U / d_i``.

        R's ``bounds.const``; rows of weight zero keep ``L`` and ``U``, as R's.
        """
        if not self.bounds_const:
            return self
        with np.errstate(divide="ignore", invalid="ignore"):
            lower, upper = (np.where(old > 0, b / old, b) for b in (self.lower, self.upper))
        return replace(self, lower=lower, upper=upper, bounds_const=False)

    @property
    def bounded(self) -> bool:
        """Whether either bound is finite (for some row)."""
        return bool(np.isfinite(np.hstack([self.lower, self.upper])).any())

    @property
    def label(self) -> str:
        """What the summary adds to the calibration's columns."""
        kind = "" if self.calfun == "linear" else self.calfun
        if self.bounded:
            what = ", weights" if self.bounds_const else ""
            kind += f"{what} in [{self.lower:g}, {self.upper:g}]"
        if self.trim is not None:
            kind += f", trimmed to [{self.trim[0]:g}, {self.trim[1]:g}]"
        kind = kind.strip().lstrip(", ")
        return f" ({kind})" if kind else ""

    def excess(self, u: FloatArray) -> FloatArray:
        """``g - 1`` at ``u = x' lambda`` (R's ``Fm1``)."""
        lo, hi = self.lower, self.upper
        if self.calfun == "linear":
            return np.clip(u + 1.0, lo, hi) - 1.0
        if self.calfun == "raking":
            return np.clip(np.exp(u), lo, hi) - 1.0
        a = (hi - lo) / ((hi - 1.0) * (1.0 - lo))
        e = np.exp(a * u)
        return (lo * (hi - 1.0) + hi * (1.0 - lo) * e) / (hi - 1.0 + (1.0 - lo) * e) - 1.0

    def slope(self, u: FloatArray) -> FloatArray:
        """The derivative of ``g`` in ``u`` (R's ``dF``).

        For raking within bounds this is ``exp(u)`` where ``L < exp(u) < U``
        (R's ``cal.raking`` tests ``L - 1 < u < U - 1``, which only changes the
        Newton path, not the weights it converges to).
        """
        lo, hi = self.lower, self.upper
        if self.calfun == "linear":
            return ((u < hi - 1.0) & (u > lo - 1.0)).astype(float)
        if self.calfun == "raking":
            g = np.exp(u)
            return np.where((g > lo) & (g < hi), g, 0.0)
        a = (hi - lo) / ((hi - 1.0) * (1.0 - lo))
        e = np.exp(a * u)
        d = hi - 1.0 + (1.0 - lo) * e
        return a * (1.0 - lo) * e * (hi * d - (lo * (hi - 1.0) + hi * (1.0 - lo) * e)) / d**2

    def weights(
        self, matrix: FloatArray, totals: FloatArray, old: FloatArray, where: str, strict: bool
    ) -> FloatArray:
        """The calibrated weights of ``old`` (``strict``: failures are errors, else warnings)."""
        if self.bounds_const:
            return self.for_weights(old).weights(matrix, totals, old, where, strict)
        if self.calfun == "linear" and not self.bounded:
            if self.trim is None:
                return _linear_calibration(matrix, old, totals, where, positive=strict)
            new = _linear_calibration(matrix, old, totals, where, positive=False)
            g, misfit = np.divide(new, old, out=np.ones_like(old), where=old != 0), None
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                g, misfit = self._grake(matrix, totals, old)
        if self.trim is not None:
            trimmed = trimmed_ratios(g, old, *self.trim)
            if not np.array_equal(trimmed, g):  # R passes a failed calibration it trims
                misfit = None
            g = trimmed
        if misfit is not None:
            message = (
                f"calibration of {where} did not reach the totals in {self.maxit} steps "
                f"(largest relative misfit {misfit:.3g}, as R's grake); the totals may be out "
                "of reach within the bounds: widen them or check the totals"
            )
            if strict:
                raise DataError(message)
            warnings.warn(message, OrdstatsWarning, stacklevel=user_stacklevel())
        new = old * g
        bad = (new <= 0) & (old > 0)
        if strict and bad.any():
            raise DataError(
                f"calibration gives {int(bad.sum())} weights that are zero or negative (fits "
                "need positive ones); raise the lower bound above 0"
            )
        return new

    def _grake(
        self, matrix: FloatArray, totals: FloatArray, old: FloatArray
    ) -> tuple[FloatArray, float | None]:
        """R's ``grake``: Newton steps on ``lambda`` (halved while ``g`` is not finite)."""
        sample = matrix.T @ old
        scale = float(np.mean(totals / sample)) if np.min(totals / sample) > 20 else 1.0
        w, sample = old * scale, sample * scale  # R rescales weights far below the totals
        if scale != 1.0 and self.bounded:
            warnings.warn(
                f"the weights are far below the totals: they are rescaled by {scale:.3g} "
                "before calibrating, and the bounds apply to the ratios to the rescaled "
                "weights, as R's grake",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
        eta = np.zeros(matrix.shape[1])
        u = np.zeros(matrix.shape[0])
        step = 1
        while True:
            slope = self.slope(u)
            misfit = totals - sample - matrix.T @ (w * self.excess(u))
            delta = np.linalg.pinv(matrix.T @ (matrix * (w * slope)[:, None]), rcond=256 * 2.0**-52)
            delta = delta @ misfit
            eta = eta + delta
            u = matrix @ eta
            while step < self.maxit and not np.all(np.isfinite(self.excess(u) + self.slope(u))):
                step, delta = step + 1, delta / 2
                eta = eta - delta
                u = matrix @ eta
            misfit = totals - sample - matrix.T @ (w * self.excess(u))
            relative = np.abs(misfit) / (1.0 + np.abs(totals))
            if np.all(relative < self.epsilon):
                return (1.0 + self.excess(u)) * scale, None
            step += 1
            if step > self.maxit:
                return (1.0 + self.excess(u)) * scale, float(relative.max())


def trimmed_ratios(ratios: FloatArray, old: FloatArray, lower: float, upper: float) -> FloatArray:
    """Ratios clipped to ``[lower, upper]``, the weight clipped off shared by the others.

    R's ``calibrate(trim=)``: the rows inside the limits gain ``sum((g - g') d)
    / sum(d)`` over them, so that ``sum(d g')`` is ``sum(d g)``.  With no row
    inside, the ratios are only clipped, as R's.
    """
    clipped, _ = _clipped_and_shared(ratios, lower, upper, old, np.ones(ratios.size, dtype=bool))
    return clipped


def trimmed_weights(
    weights: FloatArray, lower: float, upper: float, strict: bool, where: str
) -> FloatArray:
    """R's ``trimWeights``: clip to ``[lower, upper]``, share the difference equally.

    Rows of weight zero (outside a replicate) stay at zero and take no share.
    """
    inside_rows = weights != 0
    total, count = float(weights.sum()), int(inside_rows.sum())
    if strict and not lower * count <= total <= upper * count:
        raise DataError(
            f"no weights of {where} within [{lower:g}, {upper:g}] have its sum {total:.6g} "
            f"over {count} rows, so strict trimming cannot end; widen the limits"
        )
    new, equal_shares = weights, np.ones(weights.size)
    for _ in range(10_000 if strict else 1):
        new, outside = _clipped_and_shared(new, lower, upper, equal_shares, inside_rows)
        if not outside.any():
            return new
        if outside.sum() == count:
            raise DataError(
                f"every weight of {where} is outside [{lower:g}, {upper:g}], so none is left "
                "to take the trimmed weight; widen the limits"
            )
    if strict and ((new < lower) | (new > upper))[inside_rows].any():
        raise DataError(f"strict trimming of {where} did not settle; widen the limits")
    return new


def _clipped_and_shared(
    values: FloatArray, lower: float, upper: float, mass: FloatArray, rows: np.ndarray
) -> tuple[FloatArray, np.ndarray]:
    """One trimming pass: ``rows`` outside ``[lower, upper]`` clipped, the rest sharing.

    The rows of ``rows`` inside the limits gain ``sum((v - v') m) / sum(m)``
    over them, so that ``sum(v m)`` is kept (``m`` the ``mass``: old weights
    for ratios, ones for weights shared equally).  Returns the new values and
    which rows were outside.
    """
    outside = rows & ((values < lower) | (values > upper))
    new = values.copy()
    if not outside.any():
        return new, outside
    new[outside] = np.clip(values[outside], lower, upper)
    trimmings = float(np.sum((values[outside] - new[outside]) * mass[outside]))
    sharing = rows & ~outside
    if sharing.any():
        new[sharing] += trimmings / float(np.sum(mass[sharing]))
    return new, outside


def _trim_limits(trim: Any) -> tuple[float, float] | None:
    """``trim=(lower, upper)`` checked: two real numbers, lower < upper."""
    if trim is None:
        return None
    if isinstance(trim, str) or np.shape(trim) != (2,):
        raise SpecificationError(f"trim must be a pair (lower, upper); got {trim!r:.40}")
    lower = _real_number(trim[0], "trim[0]", "the lowest ratio kept")
    upper = _real_number(trim[1], "trim[1]", "the highest ratio kept")
    if not lower < upper:
        raise SpecificationError(
            f"trim (lower, upper) needs lower < upper; got ({lower:g}, {upper:g})"
        )
    return lower, upper


def _count(value: Any, name: str) -> int:
    """A positive whole number (maxit)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise SpecificationError(f"{name} must be a positive whole number; got {value!r:.40}")
    return int(value)


def _linear_calibration(
    matrix: FloatArray, old: FloatArray, totals: FloatArray, where: str, positive: bool = True
) -> FloatArray:
    """Weights ``d_i (1 + m_i' lambda)`` whose totals of the columns ``m`` are ``totals``."""
    gram = matrix.T @ (old[:, None] * matrix)
    if np.linalg.matrix_rank(gram) < matrix.shape[1]:
        raise DataError(f"the calibration columns are collinear in {where}: drop one")
    lam = np.linalg.solve(gram, totals - matrix.T @ old)
    new = old * (1.0 + matrix @ lam)
    bad = (new <= 0) & (old > 0)
    if positive and bad.any():
        raise DataError(
            f"linear calibration to these totals gives {int(bad.sum())} weights that "
            "are zero or negative (R's calibrate allows them; fits need positive weights); "
            "check the totals, bound the ratios (bounds=(L, U) with 0 < L < 1, or "
            "calfun='raking'), or post-stratify on cells instead"
        )
    return new


def _calibration_totals(population: Any) -> pd.Series:
    """Calibration totals as a Series of floats indexed by column names."""
    if isinstance(population, Mapping):
        population = pd.Series(dict(population), dtype=object)
    if not isinstance(population, pd.Series) or population.empty:
        raise SpecificationError(
            "population must map column names (and '(Intercept)' for the population size) "
            f"to their population totals; got {type(population).__name__}"
        )
    if not all(isinstance(name, str) for name in population.index):
        raise SpecificationError("population's keys must be column names")
    values = _numbers(population.to_numpy(), "population totals")
    if not np.all(np.isfinite(values)):
        raise DataError("population totals must be finite numbers")
    return pd.Series(values, index=population.index)


def _population_counts(population: Any, names: list[str]) -> pd.DataFrame:
    """The population counts as a frame of the ``by`` columns and ``Freq``."""
    if isinstance(population, pd.Series):
        frame = population.rename("Freq").reset_index()
        if frame.shape[1] != len(names) + 1:
            raise SpecificationError(
                f"population as a Series needs one index level per post-strata column "
                f"({len(names)}); got {frame.shape[1] - 1}"
            )
        frame.columns = [*names, "Freq"]
    elif isinstance(population, pd.DataFrame):
        missing = [c for c in [*names, "Freq"] if c not in population.columns]
        if missing:
            raise SpecificationError(
                f"population needs the columns {[*names, 'Freq']} (the post-strata and their "
                f"counts, as R's data frame); it lacks {missing}"
            )
        frame = population[[*names, "Freq"]].reset_index(drop=True)
    else:
        raise SpecificationError(
            "population must be a pandas DataFrame with the post-strata columns and Freq, "
            f"or a Series indexed by the post-strata; got {type(population).__name__}"
        )
    freq = _numbers(frame["Freq"], "population counts", "Freq")
    if not np.all(np.isfinite(freq)) or np.any(freq < 0):
        raise DataError("population counts must be finite and not negative")
    if frame.duplicated(subset=names).any():
        raise DataError("population repeats a post-stratum: give one count per post-stratum")
    return frame.assign(Freq=freq)


def _post_stratum_totals(cells: pd.DataFrame, counts: pd.DataFrame) -> tuple[IntArray, FloatArray]:
    """Each row's post-stratum code and each post-stratum's population count."""
    names = list(cells.columns)
    keys = cells.drop_duplicates().reset_index(drop=True)
    try:
        merged = keys.merge(counts, on=names, how="left", validate="one_to_one")
    except ValueError as err:  # pandas refuses to pair text with numbers
        raise DataError(
            f"population's post-strata columns {names} hold labels of another type than the "
            f"data's ({err}); give them the data's labels"
        ) from err
    absent = merged["Freq"].isna() | (merged["Freq"] == 0)
    if absent.any():
        raise DataError(
            "post-strata of the sample have no population count (or a zero one): "
            f"{merged.loc[absent, names].to_dict('records')[:5]}"
        )
    unsampled = counts.merge(keys, on=names, how="left", indicator=True)
    unsampled = unsampled[(unsampled["_merge"] == "left_only") & (unsampled["Freq"] > 0)]
    if len(unsampled):
        raise DataError(
            "post-strata of the population have no row in the sample, so their count cannot "
            f"be spread over rows: {unsampled[names].to_dict('records')[:5]}; merge them with "
            "others or drop them from population"
        )
    codes = cells.merge(keys.assign(_code=np.arange(len(keys))), on=names, how="left")
    return codes["_code"].to_numpy(np.intp), merged["Freq"].to_numpy(float)


def _joined_labels(codes: IntArray, parts: list[Any]) -> np.ndarray:
    """For each code, its first row's values of ``parts`` joined by dots."""
    first = np.full(int(codes.max()) + 1, -1, dtype=np.intp)
    first[codes[::-1]] = np.arange(codes.size)[::-1]
    return np.array([".".join(str(part[r]) for part in parts) for r in first], dtype=object)


def _warn_split_clusters(nested: IntArray, plain: IntArray, stage: int) -> None:
    """Warn where clusters of a later stage span several of its strata (R splits them)."""
    split = int(np.unique(nested).size - np.unique(plain).size)
    if split > 0:
        warnings.warn(
            f"some clusters of stage {stage} have rows in several strata of that stage; "
            f"each part is counted as a cluster of its own stratum ({split} more clusters), as "
            "R's svydesign does at stages after the first. Check the strata= columns if the "
            "clusters should be nested in the strata",
            OrdstatsWarning,
            stacklevel=user_stacklevel(),
        )


def _domain_mask(rows: Any, index: pd.Index) -> np.ndarray:
    if isinstance(rows, pd.Series):
        # paired by label; labels absent from either side are refused, not read as outside
        values = align_to_index(rows, index, "the domain condition", "the design's data")
        values = values.to_numpy()
    else:
        values = np.asarray(rows)
    if values.shape != (len(index),):
        raise DataError(
            f"a domain condition needs one value per row of the design ({len(index)}); "
            f"got shape {values.shape}"
        )
    if values.dtype != bool:
        missing = pd.isna(values)
        other = [
            v
            for v in values[~missing]
            if not isinstance(v, (bool, np.bool_, int, float, np.number))
        ]
        if other:
            raise DataError(
                "a domain condition must be True/False per row (missing values count as "
                f"outside); got values such as {other[0]!r}"
            )
        # numbers count as R's subset does: nonzero is inside, missing outside
        values = np.where(missing, False, values).astype(bool)
    return np.asarray(values, dtype=bool)


def _replicate_matrix(data: pd.DataFrame, repweights: Any) -> tuple[FloatArray, list[str]]:
    """The (n, R) replicate weights from a regex, column names or a matrix."""
    if isinstance(repweights, str):
        try:
            pattern = re.compile(repweights)
        except re.error as exc:
            raise SpecificationError(
                f"repweights {repweights!r} is not a valid regular expression ({exc}); give "
                "a pattern such as '^rep' or a list of column names"
            ) from exc
        names = [str(c) for c in data.columns if pattern.search(str(c))]
        if not names:
            raise DataError(f"no column of the data matches the repweights pattern {repweights!r}")
        matrix = _frame_numbers(data[names])
    elif isinstance(repweights, Sequence) and all(isinstance(c, str) for c in repweights):
        names = list(repweights)
        missing = [c for c in names if c not in data.columns]
        if missing:
            raise DataError(f"repweights columns {missing} are not columns of the data")
        matrix = _frame_numbers(data[names])
    elif isinstance(repweights, pd.DataFrame):
        names = [str(c) for c in repweights.columns]
        matrix = _frame_numbers(_aligned_frame(repweights, data.index))
    else:
        matrix = _numbers(repweights, "repweights")
        names = [f"rep{i + 1}" for i in range(matrix.shape[1] if matrix.ndim == 2 else 0)]
    if matrix.ndim != 2 or matrix.shape[0] != len(data) or matrix.shape[1] < 2:
        raise DataError(
            f"repweights must have one row per row of the data ({len(data)}) and one column "
            f"per replicate (at least 2); got shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)):
        raise DataError("repweights have missing or infinite values")
    # a copy: a matrix (or a frame's values) given by the user would otherwise be shared
    matrix = np.array(matrix, dtype=float)
    # negative replicate weights are allowed, as R (Preston's multistage bootstrap gives them)
    empty = np.flatnonzero(~np.any(matrix > 0, axis=0))
    if empty.size:
        r = int(empty[0])
        raise DataError(
            f"replicate {r + 1} ({names[r]!r}) has no positive weight: every replicate must "
            f"keep some rows ({empty.size} such column(s)); drop those columns from repweights"
        )
    return matrix, names


def _frame_numbers(frame: pd.DataFrame) -> FloatArray:
    """A frame of replicate weights as floats, naming a column that is not numeric."""
    for name in frame.columns:
        column = frame[name]
        if not pd.api.types.is_numeric_dtype(column) or column.dtype.kind in "bc":
            _numbers(column, "repweights", str(name))
    return frame.to_numpy(float)


def _aligned_frame(frame: pd.DataFrame, index: pd.Index) -> pd.DataFrame:
    """A repweights DataFrame in the data's row order, matched on the index (as pandas)."""
    if frame.index.equals(index):
        return frame
    absent = index.difference(frame.index)
    if absent.size or not frame.index.is_unique or len(frame) != len(index):
        raise DataError(
            f"the repweights DataFrame lacks {absent.size} of the data's index labels (or "
            "has others, or repeats some): its rows are matched to the data's on the index; "
            "give it one row per row of the data, with the data's index"
        )
    return frame.reindex(index)


class ReplicateDesign(_DesignRows):
    """A survey design given by replicate weights, as R's ``svrepdesign``.

    Parameters
    ----------
    data : pandas.DataFrame
    repweights : str, list of str or array-like of shape (n, R)
        The replicate weights: a regular expression matching column names (as
        R), the column names, or a matrix with one column per replicate.
        Some may be negative, as R's ``mrbbootstrap`` replicates (each
        replicate is refitted with its weights, whatever their signs).
    weights : str, optional
        Column of full-sample sampling weights (default 1, with a warning, as R).
    type : {"BRR", "Fay", "JK1", "JKn", "bootstrap", "ACS", "successive-difference", "JK2", "other"}
    rho : float, optional
        Fay's coefficient (required for ``"Fay"``).
    scale, rscales : optional
        The variance is ``scale * sum_r rscales_r (theta_r - centre)^2``.
        Defaults as R: BRR ``1/R``; Fay ``1/(R (1-rho)^2)``; JK1 ``(R-1)/R``
        (with R's warning that it guesses; with ``combined_weights=False``
        one over the first replicate's largest multiplier, as R); bootstrap
        ``1/(R-1)``; JKn needs ``rscales``, except with ``combined_weights=False``
        (one over each replicate's largest multiplier, with a warning, as R);
        ``"ACS"`` and ``"successive-difference"`` ``4/R`` and ``"JK2"`` 1, with
        ``rscales`` 1 (``scale``/``rscales`` given are ignored with a warning, as
        R); ``"other"`` takes both as given, each 1 with a warning if left out;
        ``rscales`` 1 otherwise.
    mse : bool
        Centre at the full-sample estimate instead of the replicates' mean
        (R's ``mse=``, default FALSE).
    combined_weights : bool
        Whether the replicate weights already include the sampling weights (R's
        default TRUE); else they are multiplied by them.
    fpc : array-like of float, optional
        A finite-population correction per replicate, in [0, 1] (R's
        ``svrepdesign(fpc=)``): the sampling fraction of the replicate's
        stratum (``fpctype="fraction"``; ``rscales`` are multiplied by
        ``1 - fpc``) or the correction itself (``"correction"``; multiplied by
        ``fpc``).  Only for ``"JK1"``, ``"JKn"`` and ``"other"``, as R (a
        bootstrap's replicates carry their own correction).
    fpctype : {"fraction", "correction"}
        Required with ``fpc``, as R.
    """

    kind = "replicate"

    def __init__(
        self,
        data: Any,
        repweights: Any,
        weights: str | None = None,
        type: str = "BRR",
        rho: float | None = None,
        scale: float | None = None,
        rscales: Any = None,
        mse: bool = False,
        combined_weights: bool = True,
        fpc: Any = None,
        fpctype: str | None = None,
    ) -> None:
        data = _check_frame(data)
        mse, combined_weights = (
            check_flag("mse", mse),
            check_flag("combined_weights", combined_weights),
        )
        if type not in REPLICATE_TYPES:
            raise SpecificationError(f"type must be one of {REPLICATE_TYPES}; got {type!r}")
        matrix, names = _replicate_matrix(data, repweights)
        n, n_rep = matrix.shape
        if weights is not None:
            w = _checked_weights(_column(data, weights, "weights").to_numpy(), n, column=weights)
        else:
            warnings.warn(
                "no sampling weights given: equal probability assumed (weights 1), as R's "
                "svrepdesign; pass weights= the column of full-sample weights",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
            w = np.ones(n)
        multipliers = None if combined_weights else matrix
        if not combined_weights:
            matrix = matrix * w[:, None]
        self.data = data
        self.weights_name = weights
        self.weights = w
        self.repweights = matrix
        self.replicate_names = names
        self.type = type
        self.rho = rho
        self.scale, self.rscales = _replicate_scales(type, n_rep, rho, scale, rscales, multipliers)
        self.rscales = self.rscales * _replicate_fpc(type, n_rep, fpc, fpctype)
        self.fpctype = None if fpc is None else fpctype
        self.mse = bool(mse)
        self.domain = np.ones(n, dtype=bool)
        self.adjustments: tuple[tuple[str, str], ...] = ()

    def _post_stratify(self, codes: IntArray, totals: FloatArray, names: list[str]) -> None:
        self._rescale(codes, totals, names)
        self.adjustments = (*self.adjustments, ("Post-strata:", " x ".join(names)))

    def _record_raking(self, steps: list[tuple[IntArray, FloatArray]], label: str) -> None:
        self.adjustments = (*self.adjustments, ("Raked on:", label))

    def _record_adjustment(self, label: tuple[str, str]) -> None:
        self.adjustments = (*self.adjustments, label)

    def _trim(self, trim: Callable[[FloatArray, str], FloatArray]) -> None:
        self.weights = trim(self.weights, "the sample")
        self.repweights = np.column_stack(
            [trim(w, f"replicate {r + 1}") for r, w in enumerate(self.repweights.T)]
        )

    def _rescale(self, codes: IntArray, totals: FloatArray, names: list[str]) -> None:
        size = totals.size
        self.weights = self.weights * (totals / np.bincount(codes, self.weights, size))[codes]
        sums = np.stack([np.bincount(codes, w, size) for w in self.repweights.T], axis=1)
        empty = np.argwhere(sums <= 0)
        if empty.size:
            g, r = empty[0]
            raise DataError(
                f"replicate {r + 1} ({self.replicate_names[r]!r}) has no positive weight in "
                f"post-stratum {g + 1} of {names}, so it cannot be scaled to the population "
                "count there; post-stratify on coarser cells"
            )
        self.repweights = self.repweights * (totals[:, None] / sums)[codes]

    def _calibrate(self, matrix: FloatArray, names: list[str], kind: str, adjust: _Adjust) -> None:
        self.weights = adjust(self.weights, "the sample", True)
        self.repweights = np.column_stack(
            [adjust(w, f"replicate {r + 1}", False) for r, w in enumerate(self.repweights.T)]
        )
        self.adjustments = (*self.adjustments, ("Calibrated on:", ", ".join(names) + kind))

    @property
    def n_replicates(self) -> int:
        """Number of replicates."""
        return int(self.repweights.shape[1])

    def degf(self, rows: IntArray | None = None) -> int:
        """Design degrees of freedom: rank of the replicate weights minus one (R's ``degf``).

        The rank is that of the domain's rows (R's ``subset`` of a replicate
        design recomputes ``degf`` on the rows it keeps).  ``rows`` (the rows a
        fit used) is not read: rows dropped for missing values still count, as
        R's fits keep the design's ``degf`` when they drop them.
        """
        weights = self.repweights if self.domain.all() else self.repweights[self.domain]
        if weights.size == 0:
            return 0
        singular = np.linalg.svd(weights, compute_uv=False)
        return int((singular > 1e-5 * singular[0]).sum()) - 1

    def describe(self) -> list[tuple[str, str]]:
        """Lines of the summary's design block."""
        return [
            ("Design:", f"replicate weights ({self.type})"),
            ("Replicates:", str(self.n_replicates)),
            ("Scale:", f"{self.scale:.6g}"),
            *([("FPC:", f"per replicate ({self.fpctype})")] if self.fpctype else []),
            ("Sum of weights:", f"{self.population_size:.6g}"),
            *self.adjustments,
        ]

    def __repr__(self) -> str:
        return f"ReplicateDesign({len(self.data)} rows, {self.n_replicates} {self.type} replicates)"


def _replicate_fpc(kind: str, n_rep: int, fpc: Any, fpctype: str | None) -> FloatArray:
    """The factor R's ``svrepdesign(fpc=, fpctype=)`` puts on each replicate's rscale."""
    if fpc is None:
        if fpctype is not None:
            raise SpecificationError("fpctype= is given without fpc=")
        return np.ones(n_rep)
    if fpctype not in ("fraction", "correction"):
        raise SpecificationError(
            "fpc= needs fpctype='fraction' (sampling fractions: the variance is scaled by "
            f"1 - fpc) or 'correction' (scaled by fpc), as R; got {fpctype!r}"
        )
    if kind == "bootstrap":
        raise SpecificationError(
            "type='bootstrap' takes no fpc=: the bootstrap's replicates carry their own "
            "correction (R's 'Separate fpc not needed for bootstrap')"
        )
    if kind not in ("JK1", "JKn", "other"):
        raise SpecificationError(
            f"fpc= is not available for type={kind!r}, as R: only for 'JK1', 'JKn' and 'other'"
        )
    values = _numbers(np.atleast_1d(np.asarray(fpc, dtype=object)), "fpc")
    if values.shape != (n_rep,):
        raise SpecificationError(
            f"fpc= needs one value per replicate ({n_rep}); got shape {values.shape}"
        )
    if not np.all((values >= 0) & (values <= 1)):
        raise SpecificationError(
            "fpc values must be in [0, 1]: sampling fractions or corrections, as R"
        )
    return 1.0 - values if fpctype == "fraction" else values


def _real_number(value: Any, name: str, what: str) -> float:
    """``value`` as a float, for a real number (not text, a list or a bool)."""
    if not is_real_number(value):
        raise SpecificationError(f"{name} must be a number, {what}; got {value!r:.40}")
    return float(value)


def _warn_guess(what: str, how: str) -> None:
    """R's warning that svrepdesign guesses a replicate scale (as one over the multiplier)."""
    warnings.warn(
        f"{what} not provided: guessing {how}, as R", OrdstatsWarning, stacklevel=user_stacklevel()
    )


def _replicate_scales(
    kind: str,
    n_rep: int,
    rho: float | None,
    scale: float | None,
    rscales: Any,
    multipliers: FloatArray | None = None,
) -> tuple[float, FloatArray]:
    """``scale`` and ``rscales`` with R's ``svrepdesign`` defaults for each type.

    ``multipliers`` are the replicate weights given without the sampling weights
    (``combined_weights=False``), from which R guesses JK1's ``scale`` and JKn's
    ``rscales`` (``(n - 1)/n`` is one over the largest multiplier); None for
    combined weights.
    """
    rho = None if rho is None else _real_number(rho, "rho", "in [0, 1)")
    scale = None if scale is None else _real_number(scale, "scale", "positive")
    if kind == "Fay":
        if rho is None:
            raise SpecificationError("type='Fay' needs rho= (Fay's coefficient, 0 <= rho < 1)")
        if not 0 <= rho < 1:
            raise SpecificationError(f"rho must be in [0, 1); got {rho!r}")
        scale = 1.0 / (n_rep * (1.0 - rho) ** 2)
    elif kind == "BRR":
        if scale is not None:
            warnings.warn(
                "type='BRR' does not use scale=", OrdstatsWarning, stacklevel=user_stacklevel()
            )
        if rho is not None:
            warnings.warn(
                "type='BRR' does not use rho= (Fay's coefficient): use type='Fay'",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
        scale = 1.0 / n_rep
    elif kind in _FIXED_SCALE:
        if scale is not None or rscales is not None:
            warnings.warn(
                f"type={kind!r} does not use scale= or rscales=: they are ignored, as R",
                OrdstatsWarning,
                stacklevel=user_stacklevel(),
            )
        per_replicates = _FIXED_SCALE[kind]
        scale = 1.0 if per_replicates is None else per_replicates / n_rep
        rscales = None
    elif kind == "other" and (scale is None or rscales is None):
        message = "type='other': scale or rscales not given, set to 1, as R"
        warnings.warn(message, OrdstatsWarning, stacklevel=user_stacklevel())
    elif kind == "bootstrap" and scale is None:
        scale = 1.0 / (n_rep - 1)
    elif kind == "JK1" and scale is None:
        if multipliers is not None:
            how, scale = (
                "from the first replicate's largest multiplier",
                1.0 / multipliers[:, 0].max(),
            )
        else:
            how, scale = "n = number of replicates", (n_rep - 1.0) / n_rep
        _warn_guess("scale (n-1)/n", how)
    if kind == "JKn" and rscales is None and multipliers is not None:
        _warn_guess("rscales (n-1)/n", "from each replicate's largest multiplier")
        rscales = 1.0 / multipliers.max(axis=0)
    elif kind == "JKn" and rscales is None:
        raise SpecificationError(
            "type='JKn' needs rscales= ((n_h - 1)/n_h for the stratum of each replicate); "
            "only replicate weights given as multipliers (combined_weights=False) let them "
            "be guessed, as R"
        )
    try:
        rs = np.ones(n_rep) if rscales is None else np.asarray(rscales, dtype=float)
    except (TypeError, ValueError) as exc:
        raise SpecificationError(
            f"rscales must be numbers, one per replicate ({n_rep}); got {rscales!r:.60}"
        ) from exc
    if rs.ndim == 0:
        rs = np.full(n_rep, float(rs))
    if rs.shape != (n_rep,) or not np.all(np.isfinite(rs)):
        raise SpecificationError(
            f"rscales must have one finite value per replicate ({n_rep}); got shape {rs.shape}"
        )
    if np.any(rs < 0) or not np.any(rs > 0):
        raise SpecificationError(
            "rscales must be non-negative, and one at least positive: they scale each "
            "replicate's squared deviation in the variance ((n_h - 1)/n_h for JKn)"
        )
    if scale is None:
        scale = 1.0
    if not np.isfinite(scale) or scale <= 0:
        raise SpecificationError(f"scale must be positive; got {scale!r}")
    return float(scale), rs
