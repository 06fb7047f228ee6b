r"""Marginal effects of the regressors on each level's probability (``get_margeff``).

statsmodels' ``get_margeff(at=, method=, atexog=, dummy=, count=)`` with its
meanings.  For regressor ``x_k`` and level ``j`` the effect at a row is

* ``method="dydx"``: :math:`\partial P(Y = j \mid x) / \partial x_k`;
* ``"eyex"``: the elasticity :math:`\partial \log P / \partial \log x_k
  = (\partial P / \partial x_k)\, x_k / P`;
* ``"dyex"``: :math:`(\partial P / \partial x_k)\, x_k`;
* ``"eydx"``: :math:`(\partial P / \partial x_k) / P`;

and ``at`` says where: ``"overall"`` averages the effects of the rows (with
their frequency weights), ``"mean"``, ``"median"`` and ``"zero"`` give the
effect at one row with every regressor (and the offset) at its weighted mean,
weighted median or zero, ``"all"`` gives every row's effect (no standard
errors, as statsmodels).  ``atexog={name or index: value}`` first sets
regressors to given values.

With ``dummy=True`` a 0/1 column is changed from 0 to 1 instead of
differentiated (``P(Y = j | x_k = 1) - P(Y = j | x_k = 0)``; with ``"eydx"``
the difference of the log-probabilities).  The indicator columns of one
factor (the 0/1 columns of one formula term, at most one of them 1 in any row)
change together: the effect of level ``l`` is that of moving from the reference
level (all the factor's columns 0) to ``l``, so no row is given two levels at
once (statsmodels sets one column alone).  With ``count=True`` a column of
non-negative integers (not 0/1) gets ``(P(x_k + 1) - P(x_k - 1)) / 2``, as
statsmodels.  A regressor that also enters the nominal or scale design (the
same column name) moves those parts too.

In the cumulative model with location effects only,
:math:`\partial P(Y=j)/\partial x_k = -\beta_k\,[f(\theta_j - \eta) -
f(\theta_{j-1} - \eta)]`, so the effects on the levels sum to zero.  The
effects and their Jacobians in the parameters are computed by the margins code
(:mod:`ordstats.results.margins`): derivatives in ``x`` analytic through the
link (a unit change of the regressor's columns as the design direction), the
Jacobians analytic (second derivatives), so the standard errors are the exact
delta method (on fits read in chunks, the sums over rows stream over the data:
:mod:`ordstats.results.effect_rows`),
:math:`\mathrm{SE} = \sqrt{\operatorname{diag}(G V G^\top)}` with
``G`` the Jacobian of the effects in the parameters and ``V`` the covariance in
use.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
from scipy import stats

from ordstats._typing import FloatArray
from ordstats.core.threads import numeric_threads
from ordstats.design import term_columns
from ordstats.errors import OrdstatsError, SpecificationError, is_real_number
from ordstats.results.arguments import check_alpha, normal_quantile
from ordstats.results.effect_rows import (
    ColumnSummary,
    EffectRows,
    column_summary,
    rows_of,
    weighted_medians,
)
from ordstats.results.margins.protocol import DesignRows, MarginsFit
from ordstats.results.margins.verbs import relative_slope
from ordstats.results.state import FittedState
from ordstats.results.values import after_selection, warn_after_selection

if TYPE_CHECKING:
    from statsmodels.iolib.summary import Summary

__all__ = ["MarginalEffects", "MarginalEffectsMethods"]

_AT = ("overall", "mean", "median", "zero", "all")
#: statsmodels' column names of the four kinds of effect
_METHODS = {"dydx": "dy/dx", "eyex": "d(lny)/d(lnx)", "dyex": "dy/d(lnx)", "eydx": "d(lny)/dx"}


@dataclass(frozen=True)
class _Regressor:
    """A regressor: its name, where it sits in each design, how it changes."""

    name: str
    positions: tuple[int, ...]  # its column in X, W and Z (-1: absent)
    kind: str  # "continuous", "dummy", "count"
    column: int  # its first column in EffectRows.stacked()
    #: the positions of the factor's indicator columns, this one included (dummy=True)
    group: tuple[tuple[int, ...], ...] = ()

    def values(self, rows: EffectRows) -> FloatArray:
        design, position = next(
            (d, p) for d, p in zip(rows.designs(), self.positions, strict=True) if p >= 0
        )
        return design[:, position]


def _with_values(
    rows: EffectRows, positions: tuple[int, ...], values: FloatArray | float
) -> EffectRows:
    """``rows`` with a regressor's column set to ``values`` in every design holding it."""
    designs = []
    for design, position in zip(rows.designs(), positions, strict=True):
        if position >= 0:
            design = design.copy()
            design[:, position] = values
        designs.append(design)
    return replace(rows, X=designs[0], W=designs[1], Z=designs[2])


@dataclass(frozen=True)
class MarginalEffects:
    """Marginal effects with delta-method standard errors (statsmodels' ``DiscreteMargins``).

    Attributes
    ----------
    margeff : pandas.DataFrame
        One row per regressor, one column per response level; for
        ``at="all"`` one row per (fitted row, regressor).
    margeff_se : pandas.DataFrame or None
        Their standard errors (same shape; None for ``at="all"``).
    margeff_cov : pandas.DataFrame or None
        Covariance of all the effects, indexed by (regressor, level).
    margeff_options : dict
        ``at``, ``method``, ``dummy``, ``count`` as given.
    endog_name : str
        The response's name (for the summary).
    """

    margeff: pd.DataFrame
    margeff_se: pd.DataFrame | None
    margeff_cov: pd.DataFrame | None
    margeff_options: dict[str, Any]
    endog_name: str = "y"
    #: remarks for the summary (e.g. 0/1 columns differentiated as if continuous)
    notes: tuple[str, ...] = ()

    def _inference(self) -> pd.DataFrame:
        if self.margeff_se is None:
            raise OrdstatsError(
                "at='all' gives each row's effects without standard errors (as statsmodels); "
                "use at='overall', 'mean', 'median' or 'zero' for tests and intervals"
            )
        return self.margeff_se

    @property
    def tvalues(self) -> pd.DataFrame:
        """The z statistics, ``margeff / margeff_se``."""
        return self.margeff / self._inference()

    @property
    def pvalues(self) -> pd.DataFrame:
        """Two-sided p-values of the z statistics."""
        return 2.0 * stats.norm.sf(np.abs(self.tvalues))

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Wald intervals, one row per (regressor, level): columns ``lower``, ``upper``."""
        half = normal_quantile(alpha) * self._inference().stack()
        effect = self.margeff.stack()
        frame = pd.DataFrame({"lower": effect - half, "upper": effect + half})
        frame.index.names = ["regressor", "level"]
        return frame

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """One row per (regressor, level): the effect, ``std err``, ``z``, ``P>|z|``, interval.

        The first column is named as statsmodels names the method (``dy/dx``,
        ``d(lny)/d(lnx)``, ``dy/d(lnx)``, ``d(lny)/dx``).
        """
        alpha = check_alpha(alpha)
        ci = self.conf_int(alpha)
        effect = self.margeff.stack()
        se = self._inference().stack()
        z = effect / se
        frame = pd.DataFrame(
            {
                _METHODS[self.margeff_options["method"]]: effect,
                "std err": se,
                "z": z,
                "P>|z|": 2.0 * stats.norm.sf(np.abs(z)),
                f"[{alpha / 2:g}": ci["lower"],
                f"{1 - alpha / 2:g}]": ci["upper"],
            }
        )
        frame.index.names = ["regressor", "level"]
        return frame

    def summary(self, alpha: float = 0.05) -> Summary:
        """A summary as statsmodels' margins print it: options, then a table per level.

        Each table has a row per regressor with the effect, its standard error,
        z, ``P>|z|`` and the ``1 - alpha`` interval, as statsmodels'
        ``DiscreteMargins.summary`` for a multinomial model.
        """
        from statsmodels.iolib.summary import Summary, summary_params, table_extend

        alpha = check_alpha(alpha)
        se = self._inference()
        options = self.margeff_options
        name = _METHODS[options["method"]]
        smry = Summary()
        left = [
            ("Dep. Variable:", [self.endog_name]),
            ("Method:", [options["method"]]),
            ("At:", [options["at"]]),
        ]
        discrete = [k for k in ("dummy", "count") if options.get(k)]
        if discrete:
            left.append(("Discrete:", [", ".join(discrete)]))
        smry.add_table_2cols(
            self, gleft=left, gright=[], yname=self.endog_name, xname=[], title=_TITLE
        )
        regressors = list(self.margeff.index)
        tables = []
        z = self.margeff / se
        for level in self.margeff.columns:
            effect, error = self.margeff[level].to_numpy(), se[level].to_numpy()
            half = normal_quantile(alpha) * error
            table = summary_params(
                (
                    None,
                    effect,
                    error,
                    z[level].to_numpy(),
                    2.0 * stats.norm.sf(np.abs(z[level].to_numpy())),
                    np.column_stack([effect - half, effect + half]),
                ),
                yname=self.endog_name,
                xname=regressors,
                alpha=alpha,
                use_t=False,
                skip_header=True,
            )
            bounds = [f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"]
            table.title = f"{self.endog_name}={level}"  # table_extend puts it in the header
            table.insert_header_row(0, ["", name, "std err", "z", "P>|z|", *bounds])
            tables.append(table)
        smry.tables.append(table_extend(tables, keep_headers=True))
        if self.notes:
            smry.add_extra_txt(list(self.notes))
        return smry

    def __str__(self) -> str:
        options = self.margeff_options
        if self.margeff_se is None:
            return f"Marginal effects {_METHODS[options['method']]} of each row\n" + (
                self.margeff.to_string(float_format=lambda v: f"{v:.4g}")
            )
        where = {
            "overall": "Average marginal effects",
            "mean": "Marginal effects at the means",
            "median": "Marginal effects at the medians",
            "zero": "Marginal effects at zero",
        }[options["at"]]
        return (
            f"{where} {_METHODS[options['method']]} on P(Y = level) "
            "(delta-method standard errors)\n"
            + self.summary_frame().to_string(float_format=lambda v: f"{v:.4g}")
            + "".join(f"\n{note}" for note in self.notes)
        )


_TITLE = "OrdinalModel Marginal Effects"


class MarginalEffectsMethods(FittedState):
    """``get_margeff``: marginal effects on each level's probability."""

    def get_margeff(
        self,
        at: str = "overall",
        method: str = "dydx",
        atexog: Any = None,
        dummy: bool = False,
        count: bool = False,
    ) -> MarginalEffects:
        """Marginal effects of each regressor on each level's probability (statsmodels' names).

        See :mod:`ordstats.results.marginal_effects` for the definitions and
        the delta-method standard errors.  On a fit read in chunks (files,
        Dask, ``chunksize=``) the effects stream over the data with the
        in-memory numbers: one pass summarises the columns, ``"overall"``
        adds one pass for the effects and ``"median"`` one or a few for the
        exact weighted medians; ``"all"`` (every row's effects) needs the rows
        in memory.

        Parameters
        ----------
        at : {"overall", "mean", "median", "zero", "all"}
            The average of the rows' effects, the effect at the (weighted)
            means, medians or zeros of the regressors, or every row's effect.
        method : {"dydx", "eyex", "dyex", "eydx"}
            Derivative, elasticity or semi-elasticities.
        atexog : dict, optional
            ``{regressor name or position: value}`` set before ``at`` applies.
        dummy : bool
            Treat 0/1 columns as discrete changes from 0 to 1 (a factor's
            indicators from its reference level to each level).
        count : bool
            Treat columns of non-negative integers as discrete changes of +-1.

        Returns
        -------
        MarginalEffects
            ``margeff``, ``margeff_se``, ``summary()``, ``summary_frame()``,
            ``conf_int()``.
        """
        with numeric_threads():  # thin products, as in the fit
            options = _check_options(at, method, dummy, count)
            model = self.model
            if self.data_removed:
                from ordstats.results.persistence import rows_removed_error

                raise rows_removed_error("get_margeff()")
            if model.design.scale_offset_name is not None:
                raise SpecificationError(
                    "get_margeff() does not take an offset in the scale formula (R's "
                    "offset() term) yet; slopes() and avg_slopes() do"
                )
            at = options["at"]
            if at == "all" and not model.evaluator.keeps_rows:
                raise SpecificationError(
                    "get_margeff(at='all') gives every fitted row's effects, and a model read in "
                    "chunks (files, Dask, chunksize=) does not keep its rows in memory; use "
                    "at='overall' (which streams over the chunks), or predictions()/slopes() "
                    "with the rows you want as newdata"
                )
            columns = _Columns.of(model)
            summary: ColumnSummary = model.evaluator.reduce_rows(
                column_summary, [block for _, block in columns.blocks]
            )
            regressors = _regressors(columns, summary, options["dummy"], options["count"])
            fixed = _atexog_values(regressors, atexog)
            names = [r.name for r in regressors]
            levels = model.levels
            params = self.params.to_numpy()
            fit = cast(MarginsFit, self)
            notes = _continuous_dummy_note(regressors, summary)
            margins = dict(options, atexog=atexog)
            if at == "all":
                rows = _set_atexog(rows_of(model.data), fixed)
                values, _ = _row_effects_all(fit, params, regressors, rows, options["method"])
                index = pd.MultiIndex.from_product(
                    [list(model.design.row_index), names], names=["row", "regressor"]
                )
                frame = pd.DataFrame(values.reshape(-1, len(levels)), index=index, columns=levels)
                return MarginalEffects(frame, None, None, margins, model.endog_name, notes)
            if at == "overall":
                sums = model.evaluator.reduce_rows(
                    _effect_sums, fit, params, regressors, options["method"], fixed
                )
                values, jac = _unflatten(sums / summary.total, params.size)
            else:
                row = _representative_row(model.evaluator, summary, at, fixed, columns)
                values, jac = _unflatten(
                    _weighted_effects(fit, params, regressors, row, options["method"]), params.size
                )
            cov = self.covariance.matrix
            warn_after_selection(self.covariance.kind, "marginal effects")
            if not np.all(np.isfinite(cov)) and not after_selection(self.covariance.kind):
                raise OrdstatsError(
                    "the covariance of the estimates is not available (a singular Hessian), so "
                    "the marginal effects have no standard errors; refit with fewer parameters, "
                    "or with a ridge penalty (L1_wt=0)"
                )
            effect_cov = jac @ cov @ jac.T
            se = np.sqrt(np.maximum(np.diag(effect_cov), 0.0))
            shape = (len(names), len(levels))
            stacked = pd.MultiIndex.from_product([names, levels], names=["regressor", "level"])
            return MarginalEffects(
                pd.DataFrame(values.reshape(shape), index=names, columns=levels),
                pd.DataFrame(se.reshape(shape), index=names, columns=levels),
                pd.DataFrame(effect_cov, index=stacked, columns=stacked),
                margins,
                model.endog_name,
                notes,
            )


def _continuous_dummy_note(regressors: list[_Regressor], summary: ColumnSummary) -> tuple[str, ...]:
    """A remark when 0/1 columns were differentiated as continuous (``dummy=False``)."""
    binary = [r.name for r in regressors if r.kind == "continuous" and summary.is_dummy(r.column)]
    if not binary:
        return ()
    return (
        f"The 0/1 column(s) {', '.join(binary)} were differentiated as if continuous (as "
        "statsmodels with dummy=False); dummy=True gives their discrete changes 0 -> 1, and "
        "avg_comparisons() the contrasts of factors.",
    )


def _check_options(at: Any, method: Any, dummy: Any, count: Any) -> dict[str, Any]:
    at = at.lower() if isinstance(at, str) else at
    method = method.lower() if isinstance(method, str) else method
    if at not in _AT:
        raise SpecificationError(f"at must be one of {', '.join(map(repr, _AT))}; got {at!r}")
    if method not in _METHODS:
        raise SpecificationError(
            f"method must be one of {', '.join(map(repr, _METHODS))}; got {method!r}"
        )
    for name, flag in (("dummy", dummy), ("count", count)):
        if not isinstance(flag, (bool, np.bool_)):
            raise SpecificationError(f"{name} must be True or False; got {flag!r}")
    if dummy or count:  # statsmodels' rule for discrete changes
        if method in ("eyex", "dyex"):
            raise SpecificationError(
                f"method={method!r} (an elasticity in x) has no meaning for a discrete change; "
                "use 'dydx' or 'eydx' with dummy=True or count=True"
            )
        if at in ("median", "zero"):
            raise SpecificationError(
                f"at={at!r} is not available with dummy=True or count=True (as in "
                "statsmodels); use 'overall', 'mean' or 'all'"
            )
    return {"at": at, "method": method, "dummy": bool(dummy), "count": bool(count)}


@dataclass(frozen=True)
class _Columns:
    """The regressors' names in the three designs and the formula terms' column blocks.

    Columns are numbered as in :meth:`EffectRows.stacked`: the location design,
    then the nominal and scale designs, then the offset.
    """

    parts: tuple[list[str], list[str], list[str]]
    #: each formula term (location, nominal, scale in turn): its column names and positions
    blocks: list[tuple[list[str], list[int]]]

    @classmethod
    def of(cls, model: Any) -> _Columns:
        parts = (list(model.exog_names), list(model.nominal_names), list(model.scale_names))
        starts = np.cumsum([0, *map(len, parts)])
        blocks = []
        for terms, names, start in zip(
            (model.design.location, model.design.nominal, model.design.scale),
            parts,
            starts[:3],
            strict=True,
        ):
            if terms is None:
                continue
            position = {name: int(start) + k for k, name in enumerate(names)}
            for members in term_columns(terms).values():
                blocks.append((list(members), [position[m] for m in members]))
        return cls(parts, blocks)

    @property
    def n_columns(self) -> int:
        """Columns of the designs and the offset."""
        return sum(map(len, self.parts)) + 1

    def positions(self, name: str) -> tuple[int, ...]:
        """The column of ``name`` in each design (-1: absent)."""
        return tuple(cols.index(name) if name in cols else -1 for cols in self.parts)

    def stacked(self, name: str) -> int:
        """The first stacked column holding ``name``."""
        start = 0
        for cols in self.parts:
            if name in cols:
                return start + cols.index(name)
            start += len(cols)
        raise KeyError(name)


def _factor_groups(columns: _Columns, summary: ColumnSummary) -> dict[str, list[str]]:
    """Each indicator column of a factor to the factor's columns (one formula term).

    A term's columns form a factor when all are 0/1 and no row has two of them
    at 1; any other 0/1 column is a group of its own.  The terms of the
    location, nominal and scale formulas are read in that order (a factor in
    the nominal or scale formula only has its indicators there).
    """
    groups: dict[str, list[str]] = {}
    for (members, block), exclusive in zip(columns.blocks, summary.exclusive, strict=True):
        if any(member in groups for member in members):
            continue  # grouped by an earlier formula
        if exclusive and all(summary.is_dummy(k) for k in block):
            groups.update({member: members for member in members})
    return groups


def _regressors(
    columns: _Columns, summary: ColumnSummary, dummy: bool, count: bool
) -> list[_Regressor]:
    """The regressors: location columns, then nominal and scale columns not among them."""
    names = list(columns.parts[0])
    for other in columns.parts[1:]:
        names += [n for n in other if n not in names]
    groups = _factor_groups(columns, summary) if dummy else {}
    out = []
    for name in names:
        column = columns.stacked(name)
        regressor = _Regressor(name, columns.positions(name), "continuous", column)
        if dummy and summary.is_dummy(column):
            group = tuple(columns.positions(member) for member in groups.get(name, [name]))
            regressor = replace(regressor, kind="dummy", group=group)
        elif count and summary.is_count(column):
            regressor = replace(regressor, kind="count")
        out.append(regressor)
    return out


def _atexog_values(regressors: list[_Regressor], atexog: Any) -> list[tuple[_Regressor, float]]:
    """The checked ``atexog``: each regressor it names with its value."""
    if atexog is None:
        return []
    if not isinstance(atexog, dict):
        raise SpecificationError(
            "atexog must be a dict {regressor name or position: value}; got "
            f"{type(atexog).__name__}"
        )
    by_name = {r.name: r for r in regressors}
    out = []
    for key, value in atexog.items():
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < len(regressors):
                raise SpecificationError(
                    f"atexog position {key} is outside 0..{len(regressors) - 1}"
                )
            regressor = regressors[int(key)]
        elif key in by_name:
            regressor = by_name[key]
        else:
            raise SpecificationError(
                f"atexog names {key!r}, which is not a regressor; regressors are "
                f"{', '.join(map(repr, by_name))}"
            )
        if not (is_real_number(value) and np.isfinite(float(value))):
            raise SpecificationError(f"atexog[{key!r}] must be a finite number; got {value!r}")
        out.append((regressor, float(value)))
    return out


def _set_atexog(rows: EffectRows, fixed: list[tuple[_Regressor, float]]) -> EffectRows:
    for regressor, value in fixed:
        rows = _with_values(rows, regressor.positions, value)
    return rows


def _representative_row(
    evaluator: Any,
    summary: ColumnSummary,
    at: str,
    fixed: list[tuple[_Regressor, float]],
    columns: _Columns,
) -> EffectRows:
    """The one row of ``at="mean"``, ``"median"`` or ``"zero"`` (atexog's values set).

    A regressor set by ``atexog`` has that value at every row, so it is its
    mean and median too; the medians of the other columns take passes over
    the rows (:func:`~ordstats.results.effect_rows.weighted_medians`).
    """
    if at == "zero":
        values = np.zeros(columns.n_columns)
    elif at == "mean":
        values = summary.means()
    else:
        wanted = set(range(columns.n_columns)) - {columns.stacked(r.name) for r, _ in fixed}
        medians = weighted_medians(evaluator.reduce_rows, sorted(wanted), summary)
        values = np.array([medians.get(c, 0.0) for c in range(columns.n_columns)])
    sizes = (len(columns.parts[0]), len(columns.parts[1]), len(columns.parts[2]))
    return _set_atexog(EffectRows.from_stacked(values[None, :], sizes), fixed)


def _design(rows: EffectRows) -> DesignRows:
    """The rows as the margins protocol's design rows."""
    arrays = {"X": rows.X, "W": rows.W, "Z": rows.Z, "offset": rows.offset}
    return DesignRows(arrays, pd.RangeIndex(len(rows.offset)))


def _unit_direction(rows: EffectRows, positions: tuple[int, ...]) -> DesignRows:
    """The design's derivative in a regressor: 1 in its columns, 0 elsewhere."""
    zero = replace(
        rows,
        X=np.zeros_like(rows.X),
        W=np.zeros_like(rows.W),
        Z=np.zeros_like(rows.Z),
        offset=np.zeros_like(rows.offset),
    )
    return _design(_with_values(zero, positions, 1.0))


def _row_effects(
    fit: MarginsFit, params: FloatArray, regressor: _Regressor, rows: EffectRows, method: str
) -> tuple[FloatArray, FloatArray]:
    """Each row's effect of one regressor on each level (rows by levels) and its Jacobian."""
    log_scale = method in ("eydx", "eyex")
    if regressor.kind == "continuous":
        design = _design(rows)
        slope = fit.margins_slope(
            params, design, _unit_direction(rows, regressor.positions), "prob"
        )
        assert slope.jacobian is not None
        x = regressor.values(rows)[:, None]
        effect, jac = slope.values, slope.jacobian
        if log_scale:
            level = fit.margins_predict(params, design, "prob")
            assert level.jacobian is not None
            effect, jac = relative_slope(effect, jac, level.values, level.jacobian)
        if method in ("eyex", "dyex"):
            effect, jac = effect * x, jac * x[:, :, None]
        return effect, jac
    if regressor.kind == "count":
        x = regressor.values(rows)
        high_rows = _with_values(rows, regressor.positions, x + 1.0)
        low_rows = _with_values(rows, regressor.positions, x - 1.0)
        scale = 0.5
    else:  # a dummy: from the factor's reference level (all its indicators 0) to 1
        low_rows = rows
        for member in regressor.group:
            low_rows = _with_values(low_rows, member, 0.0)
        high_rows = _with_values(low_rows, regressor.positions, 1.0)
        scale = 1.0
    high = fit.margins_predict(params, _design(high_rows), "prob")
    low = fit.margins_predict(params, _design(low_rows), "prob")
    assert high.jacobian is not None and low.jacobian is not None
    if log_scale:
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = np.log(high.values) - np.log(low.values)
            jac = high.jacobian / high.values[:, :, None] - low.jacobian / low.values[:, :, None]
        return scale * effect, scale * jac
    return scale * (high.values - low.values), scale * (high.jacobian - low.jacobian)


def _row_effects_all(
    fit: MarginsFit,
    params: FloatArray,
    regressors: list[_Regressor],
    rows: EffectRows,
    method: str,
) -> tuple[FloatArray, FloatArray]:
    """Every row's effects, flattened rows first (rows by regressors by levels), and Jacobian."""
    pieces = [_row_effects(fit, params, r, rows, method) for r in regressors]
    if not pieces:
        return np.zeros(0), np.zeros((0, params.size))
    effects = np.stack([e for e, _ in pieces], axis=1)  # rows x regressors x levels
    jacobians = np.stack([j for _, j in pieces], axis=1)  # ... x parameters
    return effects.reshape(-1), jacobians.reshape(-1, params.size)


def _weighted_effects(
    fit: MarginsFit,
    params: FloatArray,
    regressors: list[_Regressor],
    rows: EffectRows,
    method: str,
) -> FloatArray:
    """The weighted sums of the rows' effects and of their Jacobians, as one flat vector.

    The effects (regressors by levels) come first, then their Jacobian (one
    row per effect) row-major: a vector, so that the sums of chunks add up
    (:func:`_unflatten` splits it).  One regressor at a time, so memory stays
    at one regressor's rows by levels by parameters.
    """
    weights = rows.weights
    values, jacobians = [], []
    for regressor in regressors:
        effect, jac = _row_effects(fit, params, regressor, rows, method)
        values.append(weights @ effect)
        jacobians.append(np.einsum("i,ijp->jp", weights, jac))
    if not values:
        return np.zeros(0)
    return np.concatenate([np.concatenate(values), np.concatenate(jacobians).reshape(-1)])


def _effect_sums(
    data: Any,
    fit: MarginsFit,
    params: FloatArray,
    regressors: list[_Regressor],
    method: str,
    fixed: list[tuple[_Regressor, float]],
) -> FloatArray:
    """:func:`_weighted_effects` of one chunk's rows (of all rows in memory), atexog set."""
    return _weighted_effects(fit, params, regressors, _set_atexog(rows_of(data), fixed), method)


def _unflatten(flat: FloatArray, n_params: int) -> tuple[FloatArray, FloatArray]:
    """The effects and their Jacobian from :func:`_weighted_effects`' vector."""
    n_effects = flat.size // (n_params + 1)
    return flat[:n_effects], flat[n_effects:].reshape(n_effects, n_params)
