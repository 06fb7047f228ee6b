r"""Covariance matrices of the estimates, chosen by name.

``"nonrobust"`` is the inverse observed information :math:`H^{-1}` (R's ``vcov``).
The sandwich estimators keep :math:`H^{-1}` as the bread and estimate the
variance of the score from the data (Huber 1967; White 1982):

.. math::

    V = H^{-1} M H^{-1}, \qquad
    M_{\text{robust}} = \sum_i w_i\, s_i s_i^\top, \qquad
    M_{\text{cluster}} = \sum_g S_g S_g^\top, \quad S_g = \sum_{i \in g} w_i s_i,

with :math:`s_i` the gradient of :math:`\log P(Y_i = y_i)` for row ``i`` and
:math:`w_i` its frequency weight (a row of weight ``w`` stands for ``w``
independent observations, so it adds ``w s s'`` to the robust meat; in the
cluster meat the whole row belongs to one cluster).  The matrix products are
statsmodels' (:func:`statsmodels.stats.sandwich_covariance.cov_white_simple`,
:func:`~statsmodels.stats.sandwich_covariance.cov_cluster`), so the
conventions are statsmodels':

* ``"robust"`` (alias ``"HC0"``): no small-sample factor (statsmodels' ``HC0``,
  R's ``sandwich::sandwich``);
* ``"HC1"``: ``robust`` times ``N / (N - k)`` with ``N`` the number of observations;
* ``"cluster"``: by default times ``G / (G - 1)`` with ``G`` clusters, the factor
  Stata uses for maximum-likelihood models and R's ``sandwich::vcovCL`` applies
  to ``clm`` fits; ``use_correction="full"`` multiplies also by
  ``(n - 1) / (n - k)`` with ``n`` rows (statsmodels' ``cov_cluster``), and
  ``use_correction=False`` applies no factor.

The cluster labels (``cov_kwds={"groups": ...}``) are the name of a column of
the data on every fitting path (read from the estimation rows, so rows dropped
for missing values are skipped) or, for data in memory, the labels themselves:
a Series aligned on the data's index or one label per estimation row.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg
from statsmodels.stats.sandwich_covariance import cov_cluster, cov_white_simple

from ordstats._typing import FloatArray
from ordstats.core.linalg import ShiftedBasis, equilibrate
from ordstats.design.core import Design, select_fitted_rows
from ordstats.errors import ConvergenceWarning, DataError, SpecificationError
from ordstats.families.cumulative.banded import BandedCovariance, BandedHessian
from ordstats.families.shifted import ShiftedEvaluation
from ordstats.results.persistence import rows_removed_error
from ordstats.results.state import FittedState
from ordstats.results.values import Covariance

__all__ = [
    "COV_TYPES",
    "Covariance",
    "CovarianceMethods",
    "canonical_cov_type",
    "cluster_groups",
    "condition_number",
    "groups_by_name",
    "in_users_basis",
    "observed_covariance",
    "sandwich_covariance",
    "streamed_sandwich_covariance",
]

#: Accepted names of ``cov_type`` and the kind each produces.
COV_TYPES = {
    "nonrobust": "nonrobust",
    "robust": "robust",
    "hc0": "robust",
    "hc1": "HC1",
    "cluster": "cluster",
    "expected": "expected",
}


#: Reciprocal condition number below which the Hessian counts as singular.
_SINGULAR_RCOND = 1e-13
#: R's ``conv.check``: an eigenvalue of the Hessian below ``sqrt(eps)`` in absolute value
#: makes it "numerically singular" (a rule that depends on the units of the predictors).
_R_ZERO_EIGENVALUE = float(np.sqrt(np.finfo(float).eps))
#: Where R's rule calls the Hessian singular, the reciprocal condition number (units
#: removed) below which ordstats agrees: an exactly singular Hessian has one of about
#: 1e-13 to 1e-11 from rounding alone, a sound fit in awkward units a much larger one.
_R_SINGULAR_RCOND = 1e-10


def _is_singular(eig: np.ndarray, eig_scaled: np.ndarray) -> bool:
    """Whether a Hessian with eigenvalues ``eig`` (equilibrated: ``eig_scaled``) is singular.

    Singular where its reciprocal condition number, units removed, is below
    :data:`_SINGULAR_RCOND`; or where R's rule calls it singular (an
    eigenvalue below ``sqrt(eps)``) and that number is below
    :data:`_R_SINGULAR_RCOND`.  A predictor in units of ``1e-7`` thus keeps its
    standard errors, while a model that is not identified (a column both
    nominal and scale, say) is found as R finds it, however its rounding falls.
    """
    rcond = eig_scaled[0] / eig_scaled[-1] if eig_scaled[-1] > 0 else 0.0
    if rcond <= _SINGULAR_RCOND:
        return True
    return bool(np.min(np.abs(eig)) < _R_ZERO_EIGENVALUE and rcond <= _R_SINGULAR_RCOND)


def observed_covariance(hessian: FloatArray | BandedHessian) -> Covariance | BandedCovariance:
    """Invert the observed information (Hessian of the negative log-likelihood).

    Parameters
    ----------
    hessian : ndarray, shape (k, k), or BandedHessian

    Returns
    -------
    Covariance or BandedCovariance
        The inverse by Cholesky of the equilibrated Hessian ``D^{-1} H D^{-1}``
        (:func:`ordstats.core.linalg.equilibrate`), back-transformed, or NaN if
        it is not positive definite or singular (:func:`_is_singular`: its
        reciprocal condition number below ``1e-13``, or R's rule with that number
        below ``1e-10``); ``cond`` is that of ``H`` itself (R's ``cond.H``); for a
        :class:`~ordstats.families.cumulative.banded.BandedHessian` it is formed only on request.
    """
    if isinstance(hessian, BandedHessian):
        return BandedCovariance(hessian)
    k = hessian.shape[0]
    if k == 0:
        return Covariance(np.empty((0, 0)), 1.0, False)
    if not np.all(np.isfinite(hessian)):
        return Covariance(np.full((k, k), np.nan), np.inf, True)
    eig = np.linalg.eigvalsh(hessian)
    with np.errstate(over="ignore"):  # extreme units: an infinite condition number is honest
        cond = float(eig[-1] / eig[0]) if eig[0] > 0 else np.inf
    # singular or not is decided in the equilibrated basis D^-1 H D^-1, where the
    # units of the predictors do not count (x * 1e7 has the same SEs / 1e7)
    scale = equilibrate(hessian)
    scaled = hessian / np.outer(scale, scale)
    eig_scaled = np.linalg.eigvalsh(scaled)
    if _is_singular(eig, eig_scaled):
        return Covariance(np.full((k, k), np.nan), cond, True)
    factor = linalg.cho_factor(scaled)
    scaled_inverse = linalg.cho_solve(factor, np.eye(k))
    with np.errstate(over="ignore"):  # a variance beyond 1e308 is infinite
        inverse = scaled_inverse / np.outer(scale, scale)
    std_errors = np.sqrt(np.maximum(np.diag(scaled_inverse), 0.0)) / scale
    return Covariance(inverse, cond, False, std_errors=std_errors)


def evaluation_covariance(evaluation: Any) -> Covariance | BandedCovariance:
    """The inverse observed information of a fit's final evaluation.

    For a :class:`~ordstats.families.shifted.ShiftedEvaluation` (centred or
    rescaled columns) the Hessian is inverted in the internal, well-conditioned
    parameters and mapped back, ``cov(p) = T cov(q) T'``; ``cond`` stays that
    of the Hessian in the user's parameters (R's ``cond.H``).
    """
    if not isinstance(evaluation, ShiftedEvaluation):
        return observed_covariance(evaluation.hessian)
    internal = observed_covariance(evaluation.internal.hessian)
    assert isinstance(internal, Covariance)  # dense: the shifted basis is never banded
    basis, k = evaluation.basis, internal.matrix.shape[0]
    if internal.singular:
        return Covariance(np.full((k, k), np.nan), np.inf, True)
    with np.errstate(all="ignore"):  # x * 1e200: the Hessian in p overflows, cond is inf
        hessian = evaluation.hessian
    return in_users_basis(internal, basis, condition_number(hessian))


def condition_number(hessian: FloatArray) -> float:
    """``lambda_max / lambda_min`` of a Hessian (R's ``cond.H``).

    Parameters
    ----------
    hessian : ndarray, shape (k, k)

    Returns
    -------
    float
        ``inf`` unless the Hessian is finite and positive definite.
    """
    with np.errstate(all="ignore"):
        eig = np.linalg.eigvalsh(hessian) if np.isfinite(hessian).all() else None
        return float(eig[-1] / eig[0]) if eig is not None and eig[0] > 0 else np.inf


def canonical_cov_type(cov_type: str) -> str:
    """Return the kind of covariance that ``cov_type`` names.

    Parameters
    ----------
    cov_type : str
        ``"nonrobust"``, ``"robust"`` (or ``"HC0"``), ``"HC1"``, ``"cluster"`` or
        ``"expected"`` (case-insensitive).

    Returns
    -------
    str
        ``"nonrobust"``, ``"robust"``, ``"HC1"``, ``"cluster"`` or ``"expected"``.

    Raises
    ------
    SpecificationError
        For any other name.

    Examples
    --------
    >>> canonical_cov_type("HC0")
    'robust'
    """
    key = cov_type.lower() if isinstance(cov_type, str) else None
    if key not in COV_TYPES:
        raise SpecificationError(
            f"unknown cov_type {cov_type!r}; choose 'nonrobust' (inverse observed "
            "information), 'robust' (sandwich, alias 'HC0'), 'HC1', 'cluster' "
            "(with cov_kwds={'groups': ...}) or 'expected' (inverse expected information, "
            "as VGAM reports)"
        )
    return COV_TYPES[key]


def cluster_groups(groups: Any, row_index: pd.Index) -> np.ndarray:
    """Integer cluster codes for the rows used in a fit.

    Parameters
    ----------
    groups : pandas.Series or array-like
        Cluster labels: a Series is aligned on the index of the data the model
        was built from (rows dropped for missing values are skipped); an array
        must have one label per row used in the fit.
    row_index : pandas.Index
        Labels of the rows used in the fit.

    Returns
    -------
    ndarray of int, shape (n_rows,)

    Raises
    ------
    DataError
        Missing labels, labels for the wrong rows, or fewer than two clusters.
    """
    if groups is None:
        raise DataError(
            "cov_type='cluster' needs cov_kwds={'groups': <column name or one label per row>}"
        )
    if isinstance(groups, str):
        raise DataError(
            f"groups={groups!r} is a name; pass the column itself, e.g. "
            f"cov_kwds={{'groups': data[{groups!r}]}}"
        )
    if isinstance(groups, pd.Series):
        if not groups.index.is_unique:
            raise DataError(
                "the groups Series has duplicated index labels, so it cannot be aligned on "
                "the rows used in the fit; give the data a unique index "
                "(data.reset_index(drop=True)) or pass one label per row used as an array"
            )
        missing = row_index.difference(groups.index)
        if len(missing):
            raise DataError(
                f"the groups Series has no label for {len(missing)} of the rows used in the "
                "fit; index it like the data frame the model was built from"
            )
        labels = groups.loc[row_index]
    else:
        arr = np.asarray(groups)
        if arr.ndim != 1 or arr.shape[0] != len(row_index):
            raise DataError(
                f"groups must have one label per row used in the fit ({len(row_index)}); "
                f"got shape {arr.shape}. Pass a pandas Series indexed like the data to "
                "align it on the rows the fit kept"
            )
        labels = pd.Series(arr, index=row_index)
    if labels.isna().any():
        raise _missing_cluster_labels(int(labels.isna().sum()), getattr(groups, "name", None))
    codes, uniques = pd.factorize(labels, sort=True)
    if len(uniques) < 2:
        raise DataError("cluster-robust covariance needs at least two clusters")
    return codes.astype(np.intp)


def _cluster_factor(use_correction: Any, n_groups: int, n_rows: int, k: int) -> float:
    """Small-sample factor of the cluster covariance (see the module docstring)."""
    if use_correction is False or use_correction is None:
        return 1.0
    if use_correction is True:
        return n_groups / (n_groups - 1.0)
    if use_correction == "full":
        return n_groups / (n_groups - 1.0) * (n_rows - 1.0) / (n_rows - k)
    raise SpecificationError(
        f"use_correction must be True, False or 'full'; got {use_correction!r}"
    )


def _checked_cov_kwds_type(cov_kwds: object) -> None:
    """Refuse ``cov_kwds`` that is not a mapping (a list of groups, a column name)."""
    if cov_kwds is not None and not isinstance(cov_kwds, Mapping):
        raise SpecificationError(
            f"cov_kwds must be a dict, e.g. cov_kwds={{'groups': 'judge'}}; got {cov_kwds!r:.60}"
        )


def _checked_cov_kwds(kind: str, cov_kwds: Mapping[str, Any] | None) -> dict[str, Any]:
    """``cov_kwds`` as a dict, refusing keys that ``kind`` does not take."""
    _checked_cov_kwds_type(cov_kwds)
    kwds = dict(cov_kwds or {})
    allowed = {"groups", "use_correction"} if kind == "cluster" else set()
    unknown = sorted(set(kwds) - allowed)
    if unknown:
        raise SpecificationError(
            f"cov_kwds {unknown} not understood for cov_type={kind!r}"
            + ("; it takes 'groups' and 'use_correction'" if kind == "cluster" else "")
        )
    return kwds


def _nan_covariance(nonrobust: Covariance | BandedCovariance, kind: str) -> Covariance:
    """The sandwich of a singular bread: NaN, with the bread's condition number."""
    k = nonrobust.matrix.shape[0]
    return Covariance(np.full((k, k), np.nan), nonrobust.cond, nonrobust.singular, kind)


def streamed_sandwich_covariance(
    nonrobust: Covariance | BandedCovariance,
    evaluator: Any,
    params: FloatArray,
    kind: str,
    cov_kwds: Mapping[str, Any] | None = None,
) -> Covariance:
    """Sandwich covariance of a fit whose rows are read in chunks (one pass over them).

    The meat is accumulated chunk by chunk (:mod:`ordstats.data.scores`):
    ``sum_i w_i s_i s_i'`` for ``"robust"``/``"HC1"``, the per-cluster score
    sums ``S_g`` keyed by cluster label for ``"cluster"`` (a cluster may span
    chunks); the numbers are those of :func:`sandwich_covariance` on the same rows.

    Parameters
    ----------
    nonrobust : Covariance
        The inverse observed information (the bread).
    evaluator : ChunkedEvaluator
        Where the rows are read from (its ``score_sums`` method makes the pass).
    params : ndarray
        The estimates.
    kind : {"robust", "HC1", "cluster"}
    cov_kwds : mapping, optional
        For ``"cluster"``: ``groups``, the *name* of the column of cluster
        labels, and ``use_correction`` as in :func:`sandwich_covariance`.

    Returns
    -------
    Covariance

    Raises
    ------
    DataError
        ``groups`` is not a column name of the data, labels are missing among
        the rows used, or there are fewer than two clusters.
    """
    kwds = _checked_cov_kwds(kind, cov_kwds)
    groups = _groups_column(kwds.get("groups"), evaluator) if kind == "cluster" else None
    bread = nonrobust.matrix
    k = bread.shape[0]
    if nonrobust.singular or k == 0:
        return _nan_covariance(nonrobust, kind)
    sums = evaluator.score_sums(params, groups)
    if kind == "cluster":
        if sums.n_missing_labels:
            raise _missing_cluster_labels(sums.n_missing_labels, groups)
        if sums.n_groups < 2:
            raise DataError("cluster-robust covariance needs at least two clusters")
        meat = sums.cluster_meat()
        factor = _cluster_factor(kwds.get("use_correction", True), sums.n_groups, sums.n_rows, k)
    else:
        meat = sums.meat
        nobs = float(evaluator.nobs)
        factor = nobs / (nobs - k) if kind == "HC1" else 1.0
    matrix = bread @ meat @ bread * factor
    return Covariance(0.5 * (matrix + matrix.T), nonrobust.cond, False, kind)


def in_users_basis(internal: Covariance, basis: ShiftedBasis, cond: float) -> Covariance:
    """A covariance in a shifted basis's internal parameters, mapped to the user's.

    ``cond`` is that of the Hessian in the user's parameters (R's ``cond.H``).
    """
    return replace(
        internal,
        matrix=basis.covariance(internal.matrix),
        cond=cond,
        std_errors=basis.standard_errors(internal.matrix),
    )


def _groups_column(groups: Any, evaluator: Any) -> str:
    """The column of cluster labels of data read in chunks, checked."""
    if groups is None:
        raise DataError(
            "cov_type='cluster' needs cov_kwds={'groups': <column name>}; with data read in "
            "chunks, name the column of the data that holds the cluster labels"
        )
    if not isinstance(groups, str):
        raise DataError(
            "with data read in chunks, cov_kwds['groups'] must name a column of the data "
            f"(e.g. {{'groups': 'school'}}); got {type(groups).__name__}, whose labels "
            "cannot be aligned with rows that are not in memory"
        )
    columns = list(getattr(evaluator.source, "columns", None) or [])
    if evaluator.source is not None:
        _check_groups_column(groups, columns)
    return groups


def _check_groups_column(name: str, columns: list[Any]) -> None:
    """Refuse a groups name that is not one of ``columns``, with the close names."""
    if name not in columns:
        close = difflib.get_close_matches(name, [str(c) for c in columns], n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise DataError(f"the groups column {name!r} is not a column of the data{hint}")


def groups_by_name(name: str, data: Any, design: Design) -> Any:
    """The cluster labels of the column ``name`` of the DataFrame a model was fitted on.

    Parameters
    ----------
    name : str
        A column of ``data``.
    data : pandas.DataFrame or None
        The data the model was built from (None: not kept, e.g. after pickling).
    design : Design
        The model's design (its estimation rows).

    Returns
    -------
    pandas.Series or ndarray
        The column (aligned on the index by :func:`cluster_groups`), or its
        values on the estimation rows when the index repeats labels.

    Raises
    ------
    DataError
        No DataFrame is kept, ``name`` is not one of its columns, or its index
        repeats labels and the rows used cannot be matched to it.
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError(
            f"groups={name!r} names a column, but the DataFrame this model was fitted on is "
            "not kept (it was built from arrays, or pickled); pass the labels themselves, "
            f"e.g. cov_kwds={{'groups': data[{name!r}]}}"
        )
    _check_groups_column(name, list(data.columns))
    column = data[name]
    if isinstance(column, pd.DataFrame):  # a repeated column name
        raise DataError(f"the data have several columns named {name!r}; rename them")
    if column.index.is_unique:
        return column
    if len(column) == len(design.row_index) or design.row_positions is not None:
        return select_fitted_rows(column.to_frame(), design)[name].to_numpy()
    raise DataError(
        f"the data's index repeats labels and {design.n_dropped} row(s) were dropped for "
        f"missing values, so the column {name!r} cannot be matched to the rows used; give "
        "the data a unique index (data.reset_index(drop=True)) before building the model"
    )


def sandwich_covariance(
    nonrobust: Covariance | BandedCovariance,
    scores: FloatArray,
    weights: FloatArray,
    kind: str,
    cov_kwds: Mapping[str, Any] | None = None,
    row_index: pd.Index | None = None,
) -> Covariance:
    """Sandwich covariance ``H^{-1} M H^{-1}`` from per-row scores.

    Parameters
    ----------
    nonrobust : Covariance
        The inverse observed information (the bread); its condition number and
        singularity carry over.
    scores : ndarray, shape (n, k)
        Per-row gradients of ``log P_i`` (unweighted).
    weights : ndarray, shape (n,)
        Frequency weights.
    kind : {"robust", "HC1", "cluster"}
        As returned by :func:`canonical_cov_type`.
    cov_kwds : mapping, optional
        For ``"cluster"``: ``groups`` (required, see :func:`cluster_groups`) and
        ``use_correction``: True (default, ``G/(G-1)``), ``"full"``
        (``G/(G-1) (n-1)/(n-k)``) or False.
    row_index : pandas.Index, optional
        Labels of the rows, to align a ``groups`` Series.

    Returns
    -------
    Covariance
        With ``kind`` set; NaN if the bread is singular.
    """
    kwds = _checked_cov_kwds(kind, cov_kwds)
    bread = nonrobust.matrix
    k = bread.shape[0]
    if nonrobust.singular or k == 0:
        return _nan_covariance(nonrobust, kind)
    if kind == "cluster":
        index = row_index if row_index is not None else pd.RangeIndex(scores.shape[0])
        groups = cluster_groups(kwds.get("groups"), index)
        matrix = cov_cluster((weights[:, None] * scores, bread), groups, use_correction=False)
        n_groups = int(groups.max()) + 1
        matrix = matrix * _cluster_factor(
            kwds.get("use_correction", True), n_groups, groups.shape[0], k
        )
    else:
        # sqrt(w) s: the meat sum_i w_i s_i s_i' counts row i as w_i observations
        matrix = cov_white_simple((np.sqrt(weights)[:, None] * scores, bread), use_correction=False)
        if kind == "HC1":
            nobs = float(weights.sum())
            matrix = matrix * nobs / (nobs - k)
    return Covariance(0.5 * (matrix + matrix.T), nonrobust.cond, False, kind)


class CovarianceMethods(FittedState):
    """Choose the covariance behind ``bse``, the tests and the summary."""

    @property
    def cov_type(self) -> str:
        """Which covariance the standard errors use (``covariance.kind``)."""
        return self.covariance.kind

    def get_robustcov_results(
        self, cov_type: str = "robust", cov_kwds: Mapping[str, Any] | None = None
    ) -> Any:
        """Return the same fit with a sandwich covariance behind ``bse``, tests and summary.

        Parameters
        ----------
        cov_type : {"robust", "HC0", "HC1", "cluster", "nonrobust", "expected"}
            See :mod:`ordstats.results.covariance`; ``"expected"`` is the inverse
            expected (Fisher) information, VGAM's covariance (see
            ``expected_covariance``).
        cov_kwds : mapping, optional
            ``{"groups": ..., "use_correction": True}`` for ``"cluster"``:
            ``groups`` is the name of the column of labels (any data; for data
            read in chunks or from Dask the meat is summed in one pass over
            them) or, for a DataFrame in memory, the labels (a Series aligned
            on the data's index, or one label per row used).

        Returns
        -------
        OrdinalResults
            A new results object; this one is unchanged.
        """
        kind = canonical_cov_type(cov_type)
        _checked_cov_kwds_type(cov_kwds)
        ev = self._evaluation  # type: ignore[attr-defined]
        if kind == "nonrobust":
            covariance = self.nonrobust_covariance
        elif kind == "expected":
            if cov_kwds:
                raise SpecificationError("cov_type='expected' takes no cov_kwds")
            # cond(H) stays the observed Hessian's, as for the sandwich covariances
            covariance = replace(
                self.expected_covariance,  # type: ignore[attr-defined]
                cond=self.nonrobust_covariance.cond,
            )
        elif self.data_removed:
            raise rows_removed_error(f"a sandwich covariance (cov_type={cov_type!r})")
        elif not self.model.evaluator.keeps_rows:  # rows read in chunks: one pass of sums
            shifted = isinstance(ev, ShiftedEvaluation)
            # with a shifted basis, the evaluator's score sums are in its internal basis
            covariance = streamed_sandwich_covariance(
                observed_covariance(ev.internal.hessian) if shifted else self.nonrobust_covariance,
                self.model.evaluator,
                self.params.to_numpy(),
                kind,
                cov_kwds,
            )
            if shifted:
                covariance = in_users_basis(covariance, ev.basis, self.nonrobust_covariance.cond)
        elif isinstance(ev, ShiftedEvaluation):
            cov_kwds = self._groups_labels(kind, cov_kwds)
            # bread and meat in the well-conditioned internal basis, then mapped back
            internal = sandwich_covariance(
                observed_covariance(ev.internal.hessian),
                ev.internal.observation_scores(),
                self.model.data.weights,
                kind,
                cov_kwds,
                self.model.design.row_index,
            )
            covariance = in_users_basis(internal, ev.basis, self.nonrobust_covariance.cond)
        else:
            cov_kwds = self._groups_labels(kind, cov_kwds)
            covariance = sandwich_covariance(
                self.nonrobust_covariance,
                ev.observation_scores(),
                self.model.data.weights,
                kind,
                cov_kwds,
                self.model.design.row_index,
            )
        with warnings.catch_warnings():  # a singular Hessian was reported by this fit
            warnings.simplefilter("ignore", ConvergenceWarning)
            info = self.fit_info
            return type(self)(  # type: ignore[call-arg]
                self.model, self.params.to_numpy(), ev, info, covariance=covariance
            )

    def _groups_labels(
        self, kind: str, cov_kwds: Mapping[str, Any] | None
    ) -> Mapping[str, Any] | None:
        """``cov_kwds`` with a groups column name replaced by the column (data in memory)."""
        name = (cov_kwds or {}).get("groups")
        if kind != "cluster" or not isinstance(name, str):
            return cov_kwds
        design = self.model.design
        source = getattr(self.model, "_formula_source", None)
        labels = groups_by_name(name, getattr(source, "data", None), design)
        return {**dict(cov_kwds or {}), "groups": labels}


def _missing_cluster_labels(n_missing: int, column: object) -> DataError:
    """The error for cluster labels missing on rows the fit used (``column``: their name)."""
    which = f" (the column {column!r})" if isinstance(column, str) else ""
    return DataError(
        f"the cluster labels, cov_kwds['groups']{which}, have {n_missing} missing values "
        "among the rows used; fill them in, or drop those rows before fitting"
    )
