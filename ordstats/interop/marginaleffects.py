"""An ordstats fit as a pymarginaleffects model (``pip install ordstats[marginaleffects]``).

:func:`adapt` wraps a fit so that pymarginaleffects' functions
(``predictions``, ``avg_predictions``, ``comparisons``, ``avg_comparisons``,
``slopes``, ``avg_slopes``, ``hypotheses``, ``datagrid``, the ``plot_*``)
accept it::

    import marginaleffects as me
    from ordstats.interop.marginaleffects import adapt

    me.avg_predictions(adapt(res), by="temp")

The adapter gives pymarginaleffects the fit's parameters, their covariance,
the estimation rows (as a polars DataFrame, factors as ``Enum`` in the fit's
level order) and a prediction function of the parameters and new rows (the
fit's own, with ``type`` fixed when adapting).  pymarginaleffects then does
its own arithmetic, so its numbers differ from ordstats' verbs
(:meth:`~ordstats.OrdinalResults.predictions` and friends) as follows:

* **Estimates** agree to rounding for predictions and comparisons, and to
  about 1e-11 relative for slopes (pymarginaleffects differences in ``x``,
  ordstats differentiates analytically).
* **Standard errors** are pymarginaleffects' forward differences in the
  parameters, where ordstats' Jacobians are analytic: measured on wine
  (``rating ~ temp * contact + x + n``) they agree to 1e-7 relative for
  average predictions, 1e-5 for average comparisons, and 2e-3 for average
  slopes (a difference in the parameters of a difference in ``x``).
* **Intervals** are ``estimate +- z se`` here: the adapter reports infinite
  residual degrees of freedom, so pymarginaleffects uses the normal
  distribution as R does (it uses a t distribution for statsmodels fits).
  ordstats' verbs by default form probability intervals on the logit scale;
  ``conf_type="wald"`` gives the intervals pymarginaleffects reports.
* pymarginaleffects labels the response levels in its ``group`` column as
  text and sorts its rows its own way; join on the labels to compare.
* With polars 2, pymarginaleffects 0.6 itself fails on contrasts of factor
  predictors (``avg_comparisons(variables="temp")``: its ``upcast`` calls
  ``cat.get_categories``, which polars 2 removed); predictions by factors
  and comparisons and slopes of numeric predictors work.  The
  ``marginaleffects`` extra therefore installs polars < 2, with which every
  verb works (tested).  ordstats' own verbs have no such limit.  The adapter
  classifies the columns itself (pymarginaleffects 0.6's classification
  fails on float columns under polars 2).
"""

from __future__ import annotations

import builtins
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ordstats.errors import OrdstatsError
from ordstats.results.margins.grid import factor_levels, is_factor
from ordstats.results.margins.protocol import DesignRows, MarginsFit, check_type

__all__ = ["adapt"]

_INSTALL = "pip install 'ordstats[marginaleffects]'"


def _import() -> tuple[Any, Any]:
    try:
        import marginaleffects
        import polars
    except ImportError as error:
        raise OrdstatsError(
            f"the marginaleffects adapter needs pymarginaleffects and polars: {_INSTALL}"
        ) from error
    return marginaleffects, polars


def adapt(res: Any, *, type: str = "prob", data: pd.DataFrame | None = None) -> Any:
    """Wrap a fit for pymarginaleffects' functions.

    Parameters
    ----------
    res : OrdinalResults
        A fit (any fit with the margins verbs).
    type : str
        The prediction pymarginaleffects sees: ``"prob"`` (one ``group`` per
        response level), ``"cumprob"``, ``"exceedance"``, ``"expected"``,
        ``"linear"`` or ``"latent"``.
    data : pandas.DataFrame, optional
        The estimation rows with the predictors and the response (default:
        the fit's own rows; needed for fits whose rows are not in memory,
        e.g. read in chunks from files).

    Returns
    -------
    marginaleffects.classes.ModelAbstract
        A pymarginaleffects model; attributes it does not define are those of
        ``res``.

    Raises
    ------
    OrdstatsError
        If pymarginaleffects is not installed, ``res`` is not an ordstats fit,
        or ``type`` has no meaning for the fit.
    """
    if not isinstance(res, MarginsFit):
        raise OrdstatsError(
            "adapt() wraps an ordstats fit with predictions (OrdinalModel.from_formula(...)"
            f".fit()); {builtins.type(res).__name__} has none"
        )
    check_type(type, [t for t in res.margins_types() if t != "class"], "this fit")
    _, polars = _import()
    frame = _model_frame(res, data)
    return _adapter_class()(res, frame, type, polars)


def _model_frame(fit: MarginsFit, data: pd.DataFrame | None) -> pd.DataFrame:
    """The response and the predictors of the estimation rows, factors as categoricals."""
    response = _response_name(fit)
    variables = fit.margins_variables()
    groups = [c for c in _group_columns(fit) if c not in variables]
    if data is None:
        frame = _estimation_rows(fit)[[*variables, *groups]].copy()
        frame.insert(0, response, _fitted_response(fit, len(frame)))
    elif not isinstance(data, pd.DataFrame):
        raise OrdstatsError(f"data must be a pandas DataFrame; got {type(data).__name__}")
    else:
        missing = [c for c in [response, *variables, *groups] if c not in data.columns]
        if missing:
            raise OrdstatsError(
                f"data has no column(s) {', '.join(map(repr, missing))}; pass the estimation "
                "rows with the response, every predictor and every grouping column"
            )
        frame = data[[response, *variables, *groups]].copy()
    levels = fit.margins_levels()
    frame[response] = pd.Categorical(frame[response].astype(str), categories=levels)
    for name in variables:
        column = frame[name]
        if is_factor(column) and not pd.api.types.is_bool_dtype(column):
            frame[name] = pd.Categorical(column, categories=factor_levels(column))
    return frame.reset_index(drop=True)


def _estimation_rows(fit: MarginsFit) -> pd.DataFrame:
    try:
        return fit.margins_data()
    except OrdstatsError as error:
        raise OrdstatsError(
            f"adapt() needs the estimation rows, which this fit does not hold ({error}); pass "
            "them, with the response, as data="
        ) from error


def _group_columns(fit: MarginsFit) -> list[str]:
    """A mixed model's grouping columns (kept beside the predictors, never varied)."""
    terms = getattr(getattr(fit, "model", None), "terms", None) or ()
    columns: list[str] = []
    for term in terms:
        columns += [str(c) for c in getattr(term, "group_columns", ()) if c not in columns]
    return columns


def _response_name(fit: MarginsFit) -> str:
    model = getattr(fit, "model", None)
    name = getattr(model, "endog_name", None)
    if name is None:  # a mixed model names it in its fixed design
        name = getattr(
            getattr(getattr(model, "design", None), "fixed", None), "response_name", None
        )
    return str(name if name is not None else "response")


def _fitted_response(fit: MarginsFit, n_rows: int) -> pd.Categorical:
    model = getattr(fit, "model", None)
    holder = getattr(model, "data", None)
    if holder is None:  # a mixed model keeps its response in its problem
        holder = getattr(model, "problem", None)
    codes = getattr(holder, "y", None)
    if codes is None or len(codes) != n_rows:
        raise OrdstatsError(
            "the fitted response is not in memory (the rows were read in chunks): pass the "
            "estimation rows with the response as data="
        )
    return pd.Categorical.from_codes(np.asarray(codes), categories=fit.margins_levels())


@functools.cache
def _adapter_class() -> Any:
    """The adapter class, defined on first use (pymarginaleffects is optional)."""
    _import()
    from marginaleffects.classes import ModelAbstract, ModelVault

    class OrdstatsModel(ModelAbstract):
        """An ordstats fit as a pymarginaleffects model (see :func:`adapt`)."""

        #: infinite residual degrees of freedom: pymarginaleffects then uses z, as R
        df_resid = float("inf")

        def __init__(self, res: Any, frame: pd.DataFrame, type: str, polars: Any) -> None:
            fit: MarginsFit = res
            self._fit, self._type, self._pl = fit, type, polars
            response = str(frame.columns[0])
            groups = _group_columns(fit)  # in the rows, but no variable to vary
            predictors = [str(c) for c in frame.columns[1:] if str(c) not in groups]
            names = getattr(res, "params", None)
            coefnames = list(names.index) if isinstance(names, pd.Series) else None
            vault = ModelVault(
                coef=np.asarray(fit.margins_params(), dtype=float),
                coefnames=None if coefnames is None else np.array(coefnames),
                formula=f"{response} ~ {' + '.join(predictors) or '1'}",
                modeldata=polars.from_pandas(frame),
                package="ordstats",
                variable_names=[response, *predictors],
                pandas_categorical_orders={
                    str(c): [str(v) for v in frame[c].cat.categories]
                    for c in frame.columns
                    if isinstance(frame[c].dtype, pd.CategoricalDtype)
                },
            )
            super().__init__(res, vault)

        def validation(self) -> None:
            # pymarginaleffects' own type detection fails on float columns under polars 2
            # ('is_in' of Float64 in a list of ints); the same classification, in numpy
            self.validate_coef()
            self.validate_response_name()
            self.validate_formula()
            self.vault.variables_type = _variable_types(self._pl, self.get_modeldata())
            self.validate_modeldata()

        def get_vcov(self, vcov: Any = True) -> Any:
            if vcov is False:
                return None
            if vcov is True:
                return np.asarray(self._fit.margins_covariance(), dtype=float)
            raise OrdstatsError(
                "vcov= takes True or False (or a covariance matrix) for an ordstats fit; fit "
                "with cov_type= for robust standard errors"
            )

        def get_df(self) -> float:
            return float("inf")

        def get_exog(self, newdata: Any) -> _Exog:
            frame = newdata.to_pandas() if hasattr(newdata, "to_pandas") else newdata
            return _Exog(self._fit.margins_rows(frame.reset_index(drop=True)))

        def get_predict(self, params: Any, newdata: Any) -> Any:
            exog = newdata if isinstance(newdata, _Exog) else self.get_exog(newdata)
            rows = exog.rows
            predicted = self._fit.margins_predict(
                np.asarray(params, dtype=float).ravel(), rows, self._type
            )
            return _long(self._pl, predicted.values, predicted.groups)

    return OrdstatsModel


@dataclass(frozen=True)
class _Exog:
    """The design rows pymarginaleffects passes back to ``get_predict`` (it slices them)."""

    rows: DesignRows

    def __getitem__(self, key: slice) -> _Exog:
        return _Exog(self.rows.take(list(range(self.rows.n_rows))[key]))

    def __len__(self) -> int:
        return self.rows.n_rows

    @property
    def shape(self) -> tuple[int]:
        """``(rows,)``."""
        return (self.rows.n_rows,)


def _variable_types(polars: Any, modeldata: Any) -> dict[str, str]:
    """The kinds of columns pymarginaleffects knows: binary, integer, numeric, character, ..."""
    types = {}
    for name, column in zip(modeldata.columns, modeldata.iter_columns(), strict=True):
        dtype = column.dtype
        if dtype.is_integer() or dtype.is_float():
            values = column.to_numpy()
            zero_one = bool(np.isin(values, [0, 1]).all())
            kind = "integer" if dtype.is_integer() else "numeric"
            types[name] = "binary" if zero_one else kind
        elif dtype == polars.Boolean:
            types[name] = "boolean"
        elif dtype in (polars.String, polars.Categorical) or isinstance(dtype, polars.Enum):
            types[name] = "character"
        else:
            types[name] = "unknown"
    return types


def _long(polars: Any, values: np.ndarray, groups: list[str]) -> Any:
    """The prediction frame pymarginaleffects reads: rowid, (group,) estimate; group-major."""
    m, g = values.shape
    rowid = polars.Series("rowid", np.tile(np.arange(m), g), dtype=polars.Int32)
    if g == 1:
        return polars.DataFrame([rowid, polars.Series("estimate", values[:, 0])])
    group = polars.Series("group", np.repeat(np.asarray(groups, dtype=str), m))
    return polars.DataFrame([rowid, group, polars.Series("estimate", values.T.reshape(-1))])
