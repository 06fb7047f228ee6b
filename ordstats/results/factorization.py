r"""What an ordinal matrix factorisation returns: factors, thresholds, predictions.

The fitted model (:mod:`ordstats.families.cumulative.blocks`, equation 1) is

.. math::

    P(r_{uv} \le j) = F\big(\theta_{t,j} - b_u - b_v - p_u^\top q_v\big),

``t`` the global, row's or column's threshold vector.
:class:`FactorizationResults` holds the estimates and predicts for any
(row, column) pairs, recommends unrated columns, reports row scores with
approximate standard errors, and folds in new rows (cold start).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ordstats._typing import FloatArray, IntArray
from ordstats.core.links import Link
from ordstats.design.response import format_level
from ordstats.errors import DataError, PredictionError, SpecificationError, is_real_number
from ordstats.families.cumulative.blocks import BlockData, block_newton_step
from ordstats.families.cumulative.likelihood import interval_probabilities

__all__ = ["FactorizationResults", "check_whole", "nonnegative_number"]


def _real(value: object) -> float | None:
    """``value`` as a float if it is a real number (not a bool), else ``None``."""
    if is_real_number(value):
        return float(value)
    return None


def check_whole(name: str, value: object, minimum: int) -> int:
    """``value`` as an ``int``, or a :class:`SpecificationError` saying what ``name`` must be.

    Parameters
    ----------
    name : str
        The argument's name (for the message).
    value : object
        A whole number (``3`` or ``3.0``); not a bool, text or ``None``.
    minimum : int

    Returns
    -------
    int
    """
    number = _real(value)
    if number is None or not np.isfinite(number) or not number.is_integer() or number < minimum:
        raise SpecificationError(f"{name} must be a whole number >= {minimum}, not {value!r}")
    return int(number)


def nonnegative_number(name: str, value: object) -> float:
    """``value`` as a finite ``float >= 0`` (a penalty, a tolerance), or an error naming ``name``.

    Text, ``None``, bools, NaN, infinities and negative numbers raise a
    :class:`SpecificationError`.
    """
    number = _real(value)
    if number is None or not np.isfinite(number) or number < 0:
        raise SpecificationError(f"{name} must be a finite number >= 0, not {value!r}")
    return number


@dataclass(frozen=True, eq=False)
class FactorizationResults:
    """A fitted ordinal matrix factorisation.

    Attributes
    ----------
    link : Link
    levels : list
        Rating levels, lowest first.
    row_labels, col_labels : pandas.Index
    rank : int
    row_coef, col_coef : ndarray
        Per row (column): ``[bias, factors...]`` (no bias on a side that owns
        the thresholds or whose bias is switched off).
    row_has_bias, col_has_bias : bool
    threshold_table : ndarray, shape (m, K - 1)
    sharing : {"global", "row", "column"}
    threshold_center : ndarray, shape (K - 1,)
    row_covariance : ndarray, shape (n_rows, D, D)
        Inverse block Hessians of the row parameters (columns held fixed).
    objective_trace : ndarray
        MAP objective (negative log posterior up to a constant) after each sweep.
    converged : bool
    penalties : dict
        The ridge penalties used.
    rated : scipy.sparse.csr_array
        Pattern of rated (row, column) pairs (for recommendations).
    """

    link: Link
    levels: list[object]
    row_labels: pd.Index
    col_labels: pd.Index
    rank: int
    row_coef: FloatArray
    col_coef: FloatArray
    row_has_bias: bool
    col_has_bias: bool
    threshold_table: FloatArray
    sharing: str
    threshold_center: FloatArray
    row_covariance: FloatArray
    objective_trace: FloatArray
    converged: bool
    penalties: dict[str, float]
    rated: object

    # ----------------------------------------------------------------- estimates
    @property
    def n_sweeps(self) -> int:
        """Number of alternating sweeps run."""
        return len(self.objective_trace) - 1

    @property
    def objective(self) -> float:
        """The final MAP objective."""
        return float(self.objective_trace[-1])

    @property
    def row_factors(self) -> pd.DataFrame:
        """``p_u``, one row per row label."""
        return pd.DataFrame(
            self.row_coef[:, int(self.row_has_bias) :],
            index=self.row_labels,
            columns=[f"f{k + 1}" for k in range(self.rank)],
        )

    @property
    def col_factors(self) -> pd.DataFrame:
        """``q_v``, one row per column label."""
        return pd.DataFrame(
            self.col_coef[:, int(self.col_has_bias) :],
            index=self.col_labels,
            columns=[f"f{k + 1}" for k in range(self.rank)],
        )

    @property
    def row_bias(self) -> pd.Series:
        """``b_u`` (zero when the rows have no bias)."""
        b = self.row_coef[:, 0] if self.row_has_bias else np.zeros(len(self.row_labels))
        return pd.Series(b, index=self.row_labels, name="row_bias")

    @property
    def col_bias(self) -> pd.Series:
        """``b_v`` (zero when the columns have no bias)."""
        b = self.col_coef[:, 0] if self.col_has_bias else np.zeros(len(self.col_labels))
        return pd.Series(b, index=self.col_labels, name="col_bias")

    @property
    def threshold_names(self) -> list[str]:
        """``"1|2"``, ``"2|3"``, ... as in R's ``clm``."""
        return [f"{a}|{b}" for a, b in zip(self.levels[:-1], self.levels[1:], strict=True)]

    @property
    def thresholds(self) -> pd.DataFrame:
        """Threshold table: one row ``"global"`` or one per row/column label."""
        index = {"global": pd.Index(["global"]), "row": self.row_labels}.get(
            self.sharing, self.col_labels
        )
        return pd.DataFrame(self.threshold_table, index=index, columns=self.threshold_names)

    def row_scores(self) -> pd.DataFrame:
        """Row factors (a respondent's latent traits) with approximate standard errors.

        The SEs are square roots of the diagonal of the inverse Hessian of each
        row's MAP objective (equation 2 of :mod:`ordstats.families.cumulative.blocks`)
        with the columns held at their estimates, so they ignore the columns'
        uncertainty.

        Returns
        -------
        pandas.DataFrame
            Columns ``f1..fk`` and ``se_f1..se_fk`` (and ``bias``, ``se_bias``).
        """
        se = np.sqrt(np.clip(np.diagonal(self.row_covariance, axis1=1, axis2=2), 0, None))
        out = {}
        start = int(self.row_has_bias)
        if self.row_has_bias:
            out["bias"], out["se_bias"] = self.row_coef[:, 0], se[:, 0]
        for k in range(self.rank):
            out[f"f{k + 1}"] = self.row_coef[:, start + k]
            out[f"se_f{k + 1}"] = se[:, start + k]
        return pd.DataFrame(out, index=self.row_labels)

    # --------------------------------------------------------------- prediction
    def _codes(self, labels: object, index: pd.Index, what: str) -> IntArray:
        values = pd.Index(np.atleast_1d(np.asarray(labels, dtype=object)))
        codes = index.get_indexer(values)
        if (codes < 0).any():
            missing = list(values[codes < 0][:5])
            hint = (
                "fold new rows in with fold_in() first"
                if what == "row"
                else "the columns are those of the fit; refit with the new columns' ratings"
            )
            raise PredictionError(f"unknown {what} label(s) {missing}; {hint}")
        return codes

    def _eta_and_theta(self, r: IntArray, c: IntArray) -> tuple[FloatArray, FloatArray]:
        rb, cb = int(self.row_has_bias), int(self.col_has_bias)
        eta = np.einsum("ij,ij->i", self.row_coef[r, rb:], self.col_coef[c, cb:])
        if rb:
            eta = eta + self.row_coef[r, 0]
        if cb:
            eta = eta + self.col_coef[c, 0]
        tidx = {"global": np.zeros_like(r), "row": r}.get(self.sharing, c)
        return eta, self.threshold_table[tidx]

    def predict_proba(self, rows: object, cols: object) -> pd.DataFrame:
        """``P(r_uv = j)`` for each pair ``(rows[i], cols[i])``.

        Parameters
        ----------
        rows, cols : array-like of labels, same length

        Returns
        -------
        pandas.DataFrame, shape (n, K)
            Columns are the levels.
        """
        return pd.DataFrame(self._proba(rows, cols), columns=pd.Index(self.levels))

    def _proba(self, rows: object, cols: object) -> FloatArray:
        r = self._codes(rows, self.row_labels, "row")
        c = self._codes(cols, self.col_labels, "column")
        if r.shape != c.shape:
            raise PredictionError("rows and cols must have the same length")
        eta, theta = self._eta_and_theta(r, c)
        return _probabilities(self.link, eta, theta)

    def level_scores(self) -> FloatArray:
        """Numeric value of each level: the levels if numeric, else ``1..K``."""
        try:
            return np.asarray(self.levels, dtype=float)
        except (TypeError, ValueError):
            return np.arange(1.0, len(self.levels) + 1)

    def expected_rating(self, rows: object, cols: object) -> FloatArray:
        """``E[r_uv] = sum_j s_j P(r_uv = j)`` with :meth:`level_scores` ``s``."""
        return self._proba(rows, cols) @ self.level_scores()

    def most_probable(self, rows: object, cols: object) -> np.ndarray:
        """The level with the highest probability for each pair."""
        return np.asarray(self.levels, dtype=object)[self._proba(rows, cols).argmax(axis=1)]

    def recommend(self, n: int = 10, rows: object = None, chunk_rows: int = 512) -> pd.DataFrame:
        """Top-``n`` unrated columns per row by expected rating.

        Parameters
        ----------
        n : int
            Columns per row (at least 1; fewer when a row has fewer unrated).
        rows : array-like of labels, optional
            Default all rows.
        chunk_rows : int
            Rows scored at once (memory ``chunk_rows x n_cols x K``).

        Returns
        -------
        pandas.DataFrame
            Columns ``row``, ``rank`` (1 = best), ``col``, ``expected``.
        """
        n = min(check_whole("n", n, 1), len(self.col_labels))
        chunk_rows = check_whole("chunk_rows", chunk_rows, 1)
        r_all = (
            np.arange(len(self.row_labels))
            if rows is None
            else self._codes(rows, self.row_labels, "row")
        )
        n_cols = len(self.col_labels)
        scores = self.level_scores()
        out = [pd.DataFrame({"row": [], "rank": [], "col": [], "expected": []})]
        for start in range(0, len(r_all), chunk_rows):
            r = r_all[start : start + chunk_rows]
            rr = np.repeat(r, n_cols)
            cc = np.tile(np.arange(n_cols), len(r))
            eta, theta = self._eta_and_theta(rr, cc)
            expected = (_probabilities(self.link, eta, theta) @ scores).reshape(len(r), n_cols)
            rated = self.rated[r].toarray() != 0  # type: ignore[index]
            expected[rated] = -np.inf
            top = np.argsort(-expected, axis=1, kind="stable")[:, :n]
            value = np.take_along_axis(expected, top, axis=1)
            keep = np.isfinite(value)
            out.append(
                pd.DataFrame(
                    {
                        "row": np.asarray(self.row_labels)[np.repeat(r, n)][keep.ravel()],
                        "rank": np.tile(np.arange(1, n + 1), len(r))[keep.ravel()],
                        "col": np.asarray(self.col_labels)[top.ravel()][keep.ravel()],
                        "expected": value.ravel()[keep.ravel()],
                    }
                )
            )
        return pd.concat(out[1:] or out, ignore_index=True)

    # ---------------------------------------------------------------- cold start
    def _fold_in_ratings(self, ratings: object) -> tuple[IntArray, IntArray]:
        """Column codes and level codes of a new row's ratings (levels matched as text)."""
        series = _check_fold_in_ratings(ratings)
        c = self._codes(series.index, self.col_labels, "column")
        level_index = {format_level(lev): k for k, lev in enumerate(self.levels)}
        codes = [level_index.get(format_level(v), -1) for v in series.to_numpy()]
        unknown = [v for v, k in zip(series.to_numpy(), codes, strict=True) if k < 0]
        if unknown:
            raise DataError(f"rating {unknown[0]!r} is not one of the levels {self.levels}")
        return c, np.asarray(codes, dtype=np.intp)

    def fold_in(
        self,
        label: object,
        ratings: Mapping[object, object] | pd.Series,
        *,
        max_iter: int = 100,
        tol: float = 1e-10,
    ) -> FactorizationResults:
        """Add a new row from a few ratings by one per-row Newton fit (cold start).

        The columns, global or column thresholds and penalties stay fixed; the new
        row's bias, factors (and thresholds, shrunk to their centre, when the rows
        own them) maximise its posterior, equation (2) of
        :mod:`ordstats.families.cumulative.blocks`.

        Parameters
        ----------
        label : hashable
            Label of the new row (must be new).
        ratings : mapping or Series
            Column label -> rating level (matched with the levels as text, as
            ``levels=`` at fit time: ``5.0`` is the level ``5``).
        max_iter : int
        tol : float
            Stop when the objective decreases by less than this.

        Returns
        -------
        FactorizationResults
            These results with the new row appended (predict and recommend for it).
        """
        if not isinstance(label, Hashable):
            raise DataError(
                f"the new row's label must be hashable (a name or number), not {label!r}"
            )
        if label in self.row_labels:
            raise DataError(f"row {label!r} is already in the model; use a new label")
        max_iter = check_whole("max_iter", max_iter, 1)
        tol = nonnegative_number("tol", tol)
        c, y = self._fold_in_ratings(ratings)
        cb = int(self.col_has_bias)
        cov = self.col_coef[c, cb:]
        if self.row_has_bias:
            cov = np.column_stack([np.ones(len(c)), cov])
        offset = self.col_coef[c, 0] if cb else np.zeros(len(c))
        owns = self.sharing == "row"
        if owns:
            table, tidx = self.threshold_center[None, :].copy(), np.zeros(len(c), dtype=np.intp)
        elif self.sharing == "column":
            table, tidx = self.threshold_table, c
        else:
            table, tidx = self.threshold_table, np.zeros(len(c), dtype=np.intp)
        data = BlockData(
            y,
            np.ones(len(c)),
            np.zeros(len(c), dtype=np.intp),
            1,
            cov,
            offset,
            tidx,
            len(self.levels),
        )
        penalty = _row_penalty(self.penalties, self.row_has_bias, self.rank)
        coef = np.zeros((1, cov.shape[1]))
        f_old = np.inf
        for _ in range(max_iter):
            step = block_newton_step(
                self.link,
                data,
                coef,
                table,
                penalty,
                owns_thresholds=owns,
                threshold_penalty=self.penalties["thresholds"],
                threshold_center=self.threshold_center,
            )
            coef, table = step.coef, step.thresholds
            if f_old - step.objective[0] < tol:
                break
            f_old = step.objective[0]
        cov_new = np.linalg.inv(step.hessian[0] + 1e-12 * np.eye(step.hessian.shape[1]))
        dim = self.row_covariance.shape[1]
        rated = _append_row(self.rated, c)
        return replace(
            self,
            row_labels=self.row_labels.append(pd.Index([label])),
            row_coef=np.vstack([self.row_coef, coef]),
            threshold_table=np.vstack([self.threshold_table, table])
            if owns
            else self.threshold_table,
            row_covariance=np.concatenate([self.row_covariance, cov_new[None, :dim, :dim]]),
            rated=rated,
        )


def _check_fold_in_ratings(ratings: object) -> pd.Series:
    """The new row's ratings as a Series indexed by column label, one per column."""
    if not isinstance(ratings, (Mapping, pd.Series)):
        raise DataError(
            "ratings must map column labels to ratings (a dict or a pandas Series), e.g. "
            f"{{'item3': 5, 'item9': 2}}; got {type(ratings).__name__}"
        )
    series = pd.Series(ratings, dtype=object)
    if series.empty:
        raise DataError("fold_in needs at least one rating")
    if series.index.has_duplicates:
        twice = list(series.index[series.index.duplicated()].unique()[:5])
        raise DataError(f"columns {twice} are rated more than once; give one rating per column")
    return series


def _append_row(rated: Any, cols: IntArray) -> Any:
    import scipy.sparse as sp

    new = sp.csr_array(
        (np.ones(len(cols)), (np.zeros(len(cols), dtype=np.intp), cols)),
        shape=(1, rated.shape[1]),
    )
    return sp.csr_array(sp.vstack([rated, new], format="csr"))


def _row_penalty(penalties: Mapping[str, float], has_bias: bool, rank: int) -> FloatArray:
    head = [penalties["bias"]] if has_bias else []
    return np.array(head + [penalties["factors"]] * rank, dtype=float)


def _probabilities(link: Link, eta: FloatArray, theta: FloatArray) -> FloatArray:
    """``P(r = j)`` for rows with linear predictor ``eta`` and thresholds ``theta`` (n, K-1)."""
    n = eta.shape[0]
    bounds = np.column_stack([np.full(n, -np.inf), theta, np.full(n, np.inf)]) - eta[:, None]
    return interval_probabilities(link, bounds[:, 1:], bounds[:, :-1])
