r"""Ordinal matrix factorisation fitted by exact alternating Newton (MAP).

Ratings ``r_{uv}`` (users x items, respondents x Likert items) follow

.. math::

    P(r_{uv} \le j) = F\big(\theta_{t,j} - (b_u + b_v + p_u^\top q_v)\big), \tag{1}

with thresholds ``theta_t`` shared globally, per row or per column, Gaussian
priors ``p_u, q_v ~ N(0, I / lambda_f)``, ``b ~ N(0, 1 / lambda_b)`` and, for
row or column thresholds, ``theta_t ~ N(bar theta, I / lambda_theta)``.  The
negative log posterior is minimised by sweeps of

1. one Newton step for every row at once (columns fixed: a cumulative link model
   with covariates ``(1, q_v)`` and offset ``b_v`` per row),
2. the same for every column,
3. one Newton step on global thresholds, or the closed-form centre ``bar theta``,

each halved per block so the objective decreases monotonically
(:func:`ordstats.families.cumulative.blocks.block_newton_step`).  A side that
owns the thresholds has no bias (it would be confounded with them).  Blocks do
not interact within a step, so each side is cut into parts of whole blocks
(:mod:`ordstats.families.cumulative.sides`) stepped serially, in threads or on
a Dask cluster (:mod:`ordstats.estimation.sweeps`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ordstats._typing import FloatArray, IntArray
from ordstats.config import resolve_threads
from ordstats.core.links import Link, fixed_shape_link
from ordstats.core.threads import numeric_threads
from ordstats.design.core import _check_weights
from ordstats.design.response import encode_response, format_level
from ordstats.errors import ConvergenceWarning, DataError, SpecificationError, user_stacklevel
from ordstats.estimation.sweeps import PartRunner, Sweeper
from ordstats.families.cumulative.sides import SidePart, split_side
from ordstats.results.arguments import check_flag
from ordstats.results.factorization import (
    FactorizationResults,
    _row_penalty,
    check_whole,
    nonnegative_number,
)

__all__ = ["BIAS_PENALTY", "FACTOR_PENALTY", "THRESHOLD_PENALTY", "OrdinalFactorization"]

#: Default ridge penalties (prior precisions), chosen on held-out ratings: see the
#: ``Notes`` of :class:`OrdinalFactorization`.
FACTOR_PENALTY = 5.0
BIAS_PENALTY = 2.0
THRESHOLD_PENALTY = 10.0

_SHARING = ("global", "row", "column")
# extrapolation of the sweeps: first factor, growth after a success, cap
_EXTRAPOLATION_START = 1.0
_EXTRAPOLATION_GROWTH = 1.5
_EXTRAPOLATION_MAX = 8.0


@dataclass(frozen=True, eq=False)
class _Ratings:
    y: IntArray
    row: IntArray
    col: IntArray
    weights: FloatArray
    levels: list[object]
    row_labels: pd.Index
    col_labels: pd.Index


class OrdinalFactorization:
    """Ordinal matrix factorisation: a low-rank cumulative link model for ratings.

    Parameters
    ----------
    data : pandas.DataFrame or scipy.sparse matrix
        Long data with one rating per (row, column) pair, or a sparse matrix
        (rows x columns) whose *stored* entries are the ratings: unstored cells
        are missing, and a stored (explicit) zero is a rating of 0.  scipy drops
        zeros in many operations (a matrix built from a dense array keeps only
        its non-zero entries), so a sparse matrix needs ``levels=``, and a scale
        that includes 0 must store every 0 answer explicitly (long data avoids
        the question).  A cell stored twice in a COO matrix is an error (CSR and
        CSC constructors add duplicated cells up before ordstats sees them).
    row, col, rating : str
        Column names in a DataFrame.
    weights : str, optional
        Column of non-negative numeric case weights.
    levels : sequence, optional
        The rating levels, lowest first; compared with the ratings as text, as
        ``OrdinalModel``'s ``levels=`` (``[1, 2, 3]`` also matches ratings
        ``1.0``).  Required for text ratings (unless the column is an ordered
        Categorical, whose order is used) and for a sparse matrix; numbers and
        booleans default to their sorted distinct values.  A declared level
        without ratings is dropped with a :class:`~ordstats.errors.LevelsWarning`,
        as ``OrdinalModel`` does (its thresholds would not be estimable).
    many_levels : bool
        Accept more than 50 distinct ratings (usually a continuous column passed
        by mistake).
    rank : int
        Number of latent factors ``k`` (0: biases only), at most the number of
        rows and of columns.
    factor_penalty, bias_penalty : float
        Ridge penalties ``lambda_f`` and ``lambda_b`` (prior precisions: a prior
        SD of ``1 / sqrt(lambda)`` on the scale of the linear predictor).
    thresholds : {"global", "row", "column"}
        Threshold sharing.
    threshold_penalty : float
        ``lambda_theta``, shrinkage of per-row/column thresholds to their centre.
    link : str or Link
        A link without a free parameter: ``"logit"``, ``"probit"``,
        ``"cloglog"``, ``"loglog"``, ``"cauchit"``, a :class:`Link` or a frozen
        scipy distribution.  The flexible families (``"aranda-ordaz"``,
        ``"log-gamma"``) are refused: their shape parameter is not estimated here.
    row_bias, col_bias : bool
        Include ``b_u`` / ``b_v`` (dropped on a side that owns the thresholds).

    Raises
    ------
    DataError
        Data that cannot be fitted as given (the message says what to change).
    SpecificationError
        An option outside its allowed values.

    Notes
    -----
    The default penalties (``factor_penalty=5``, ``bias_penalty=2``,
    ``threshold_penalty=10``) were chosen on held-out ratings of two simulated
    data sets, ``psych::bfi`` and MovieLens, at rank 2 and 5, by RPS and
    log-loss on held-out entries of fitted rows and on rows folded in from 3
    ratings (cold start): they came close to each data set's best grid value.
    The earlier nearly flat ``bias_penalty=0.01`` (with ``factor_penalty=1``)
    let the bias of a row with a few top ratings run off, predicting the top
    rating almost surely for every column, and ``threshold_penalty=1`` let the
    per-row thresholds of rows with few ratings run off, which multiplied their
    held-out log-loss.  The defaults are starting points: choose rank and
    penalties on a validation split of your own data, as
    ``vignettes/factorization.py`` does.

    With per-row (per-column) thresholds, a row that never uses a level between
    levels it does use gains by closing the two thresholds around it; when
    ``threshold_penalty`` is too weak to hold them apart they meet at the MAP
    (the fit then gives that level probability 0 in that row) and move on
    tied, so the row's other parameters still reach their optimum.  Raise
    ``threshold_penalty`` (or share the thresholds) where that is unwanted.

    Examples
    --------
    >>> import pandas as pd
    >>> from ordstats import OrdinalFactorization, simulate_ratings
    >>> sim = simulate_ratings(50, 20, rank=1, density=0.5, seed=0)
    >>> frame = pd.DataFrame({"row": sim.row, "col": sim.col, "rating": sim.y + 1})
    >>> res = OrdinalFactorization(frame, rank=1).fit()
    >>> res.predict_proba([0], [1]).shape
    (1, 5)
    """

    def __init__(
        self,
        data: pd.DataFrame | sp.sparray | sp.spmatrix,
        *,
        row: str = "row",
        col: str = "col",
        rating: str = "rating",
        weights: str | None = None,
        levels: Sequence[object] | None = None,
        many_levels: bool = False,
        rank: int = 2,
        factor_penalty: float = FACTOR_PENALTY,
        bias_penalty: float = BIAS_PENALTY,
        thresholds: str = "global",
        threshold_penalty: float = THRESHOLD_PENALTY,
        link: str | Link = "logit",
        row_bias: bool = True,
        col_bias: bool = True,
    ) -> None:
        if not (isinstance(thresholds, str) and thresholds in _SHARING):
            raise SpecificationError(f"thresholds must be one of {_SHARING}, not {thresholds!r}")
        self.rank = check_whole("rank", rank, 0)
        self.sharing = thresholds
        self.link = _factorization_link(link)
        self.penalties = {
            "factors": nonnegative_number("factor_penalty", factor_penalty),
            "bias": nonnegative_number("bias_penalty", bias_penalty),
            "thresholds": nonnegative_number("threshold_penalty", threshold_penalty),
        }
        self.row_bias = check_flag("row_bias", row_bias) and thresholds != "row"
        self.col_bias = check_flag("col_bias", col_bias) and thresholds != "column"
        many = check_flag("many_levels", many_levels)
        if isinstance(data, pd.DataFrame):
            self.ratings = _from_frame(data, row, col, rating, weights, levels, many)
        elif sp.issparse(data):
            self.ratings = _from_sparse(data, levels, many)
        else:
            raise DataError(
                "data must be a pandas DataFrame (long format: row, column, rating) or a "
                f"scipy.sparse matrix, not {type(data).__name__}; for a dense array, build "
                "the long frame of its rated cells"
            )
        largest = min(self.n_rows, self.n_cols)
        if self.rank > largest:
            raise SpecificationError(
                f"rank {self.rank} exceeds the smaller dimension of the ratings "
                f"({self.n_rows} rows x {self.n_cols} columns): choose rank <= {largest}"
            )

    @property
    def n_rows(self) -> int:
        """Number of rows (users, respondents)."""
        return len(self.ratings.row_labels)

    @property
    def n_cols(self) -> int:
        """Number of columns (items)."""
        return len(self.ratings.col_labels)

    @property
    def n_levels(self) -> int:
        """Number of rating levels ``K``."""
        return len(self.ratings.levels)

    # ------------------------------------------------------------------ fitting
    def _start(self, seed: int) -> tuple[FloatArray, FloatArray, FloatArray]:
        rng = np.random.default_rng(seed)
        r = self.ratings
        counts = np.bincount(r.y, weights=r.weights, minlength=self.n_levels)
        cum = np.cumsum(counts)[:-1] / counts.sum()
        theta0 = self.link.ppf(np.clip(cum, 1e-4, 1 - 1e-4))
        theta0 = np.maximum.accumulate(theta0 + 1e-6 * np.arange(len(theta0)))
        m = {"global": 1, "row": self.n_rows, "column": self.n_cols}[self.sharing]
        table = np.tile(theta0, (m, 1))
        row_coef = np.zeros((self.n_rows, int(self.row_bias) + self.rank))
        col_coef = np.zeros((self.n_cols, int(self.col_bias) + self.rank))
        row_coef[:, int(self.row_bias) :] = 0.1 * rng.standard_normal((self.n_rows, self.rank))
        col_coef[:, int(self.col_bias) :] = 0.1 * rng.standard_normal((self.n_cols, self.rank))
        return row_coef, col_coef, table

    def _checked_start(self, start: object) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``start`` as three float arrays of this model's shapes, thresholds increasing."""
        m = {"global": 1, "row": self.n_rows, "column": self.n_cols}[self.sharing]
        shapes = (
            (self.n_rows, int(self.row_bias) + self.rank),
            (self.n_cols, int(self.col_bias) + self.rank),
            (m, self.n_levels - 1),
        )
        wanted = (
            "start must be (row_coef, col_coef, threshold_table) of shapes "
            f"{', '.join(map(str, shapes))} (as a fit of this model stores them)"
        )
        if isinstance(start, (str, bytes)) or not isinstance(start, Sequence) or len(start) != 3:
            raise SpecificationError(f"{wanted}; got {type(start).__name__}")
        try:
            arrays = tuple(np.array(part, dtype=float) for part in start)
        except (TypeError, ValueError):
            raise SpecificationError(f"{wanted}; got values that are not numbers") from None
        got = tuple(a.shape for a in arrays)
        if got != shapes:
            raise SpecificationError(f"{wanted}; got shapes {', '.join(map(str, got))}")
        if not all(np.all(np.isfinite(a)) for a in arrays):
            raise SpecificationError(f"{wanted}, all finite; got non-finite values")
        if np.any(np.diff(arrays[2], axis=1) < 0):
            raise SpecificationError("start thresholds must not decrease along any row")
        return arrays[0], arrays[1], arrays[2]

    def _parts(self, n_parts: int) -> dict[str, list[SidePart]]:
        """Both sides cut into parts of whole blocks (see :func:`split_side`)."""
        r = self.ratings
        tidx = {"global": np.zeros_like(r.row), "row": r.row, "column": r.col}[self.sharing]
        return {
            side: split_side(
                block,
                other,
                r.y,
                r.weights,
                tidx,
                n_blocks,
                self.n_levels,
                own_bias=own_bias,
                other_bias=other_bias,
                owns_thresholds=self.sharing == side,
                n_parts=n_parts,
            )
            for side, block, other, n_blocks, own_bias, other_bias in (
                ("row", r.row, r.col, self.n_rows, self.row_bias, self.col_bias),
                ("column", r.col, r.row, self.n_cols, self.col_bias, self.row_bias),
            )
        }

    def _sweeper(self, n_jobs: int = 1, client: Any = None, n_parts: int | None = None) -> Sweeper:
        if n_parts is None:
            n_parts = _default_parts(n_jobs, client)
        # the pool never exceeds the threads option (default: the usable cores); the
        # parts, and so the numbers, stay as n_jobs asked
        threads = min(n_jobs, resolve_threads(None))
        runner = PartRunner(self._parts(n_parts), n_jobs=threads, client=client)
        penalties = {
            "row": self._penalty(self.row_bias),
            "column": self._penalty(self.col_bias),
        }
        return Sweeper(runner, self.link, self.sharing, penalties, self.penalties["thresholds"])

    def _penalty(self, has_bias: bool) -> FloatArray:
        return _row_penalty(self.penalties, has_bias, self.rank)

    def _objective(
        self,
        row_coef: FloatArray,
        col_coef: FloatArray,
        table: FloatArray,
        center: FloatArray,
        sweeper: Sweeper | None = None,
    ) -> float:
        """The MAP objective (negative log posterior) at the given parameters."""
        if np.any(np.diff(table, axis=1) < 0):  # not a model: no pass over the ratings
            return np.inf
        if sweeper is None:
            sweeper = self._sweeper()
        nll = sweeper.nll(row_coef, col_coef, table)
        return self._posterior(nll, row_coef, col_coef, table, center)

    def _posterior(
        self,
        nll: float,
        row_coef: FloatArray,
        col_coef: FloatArray,
        table: FloatArray,
        center: FloatArray,
    ) -> float:
        """The MAP objective from its negative log-likelihood ``nll`` (ordered thresholds)."""
        total = nll
        for coef, bias in ((row_coef, self.row_bias), (col_coef, self.col_bias)):
            total += 0.5 * float(np.sum(coef**2 @ self._penalty(bias)))
        if self.sharing != "global":
            total += 0.5 * self.penalties["thresholds"] * float(np.sum((table - center) ** 2))
        return total

    def fit(
        self,
        *,
        max_sweeps: int = 200,
        tol: float = 1e-7,
        seed: int = 0,
        progress: bool = False,
        start: tuple[FloatArray, FloatArray, FloatArray] | None = None,
        extrapolate: bool = True,
        n_jobs: int = 1,
        client: Any = None,
        n_parts: int | None = None,
    ) -> FactorizationResults:
        """Fit by alternating exact Newton sweeps until the MAP objective settles.

        Parameters
        ----------
        max_sweeps : int
        tol : float
            Stop when a sweep lowers the objective by less than
            ``tol * (1 + |objective|)``.
        seed : int
            Seed of the random start of the factors (``N(0, 0.1^2)``).
        progress : bool
            Show a tqdm progress bar (if tqdm is installed).
        start : (row_coef, col_coef, threshold_table), optional
            Starting values (as stored in the results).
        extrapolate : bool
            After each sweep, try moving further along the sweep's change of all
            parameters (see Notes); kept only where it lowers the objective.
        n_jobs : int
            Threads that step the parts of each side side by side, at most the
            ``threads`` option (:func:`ordstats.set_options`; default: the usable
            cores); BLAS runs on one thread inside each.
        client : dask.distributed.Client, optional
            Step the parts on this cluster's workers (they receive the ratings
            once; each step sends only coefficients and thresholds).
        n_parts : int, optional
            Parts per side (default: ``n_jobs``, or twice the cluster's worker
            threads); the estimates do not depend on it.

        Returns
        -------
        FactorizationResults

        Notes
        -----
        Alternating steps can crawl along a valley of the objective.  With
        ``extrapolate=True`` each sweep's change of all parameters ``Delta`` is
        tried once more, scaled: ``x + s Delta`` with ``s`` starting at 1,
        growing 1.5-fold after each success (to at most 8) and reset to 1 after a
        failure; the jump is kept only if it lowers the MAP objective, so the
        trace still decreases monotonically (one extra likelihood pass per
        sweep).  On 10^5 simulated ratings at rank 10 it halved the sweeps to a
        given relative change; the optimum reached is the same.
        """
        with numeric_threads():
            max_sweeps = check_whole("max_sweeps", max_sweeps, 1)
            tol = nonnegative_number("tol", tol)
            progress = check_flag("progress", progress)
            extrapolate = check_flag("extrapolate", extrapolate)
            n_jobs = check_whole("n_jobs", n_jobs, 1)
            if n_parts is not None:
                n_parts = check_whole("n_parts", n_parts, 1)
            row_coef, col_coef, table = (
                self._start(check_whole("seed", seed, 0))
                if start is None
                else self._checked_start(start)
            )
            center = table.mean(axis=0)
            r = self.ratings
            if client is not None and not hasattr(client, "scatter"):
                raise SpecificationError(
                    f"client must be a dask.distributed.Client, not {type(client).__name__}"
                )
            sweeper = self._sweeper(n_jobs, client, n_parts)
            try:
                row_coef, col_coef, table, center, trace, converged = self._sweeps(
                    sweeper,
                    (row_coef, col_coef, table, center),
                    max_sweeps=max_sweeps,
                    tol=tol,
                    progress=progress,
                    extrapolate=extrapolate,
                )
                # row covariance at the estimates (columns fixed)
                *_, hess = sweeper.side_step(
                    "row", row_coef, col_coef, table, center, max_halvings=0, keep_hessian=True
                )
            finally:
                sweeper.runner.close()
            if not converged:
                import warnings

                warnings.warn(
                    f"ordinal factorisation did not converge in {max_sweeps} sweeps; "
                    "raise max_sweeps or the penalties",
                    ConvergenceWarning,
                    stacklevel=user_stacklevel(),
                )
            assert hess is not None  # keep_hessian
            d = row_coef.shape[1]
            jitter = 1e-12 * np.eye(hess.shape[1])
            row_cov = np.linalg.inv(hess + jitter)[:, :d, :d] if hess.shape[1] else hess
            rated = sp.csr_array(
                (np.ones(len(r.y)), (r.row, r.col)), shape=(self.n_rows, self.n_cols)
            )
            return FactorizationResults(
                link=self.link,
                levels=list(r.levels),
                row_labels=r.row_labels,
                col_labels=r.col_labels,
                rank=self.rank,
                row_coef=row_coef,
                col_coef=col_coef,
                row_has_bias=self.row_bias,
                col_has_bias=self.col_bias,
                threshold_table=table,
                sharing=self.sharing,
                threshold_center=center,
                row_covariance=np.asarray(row_cov, dtype=np.float64),
                objective_trace=np.asarray(trace),
                converged=converged,
                penalties=dict(self.penalties),
                rated=rated,
            )

    def _sweeps(
        self,
        sweeper: Sweeper,
        state: tuple[FloatArray, FloatArray, FloatArray, FloatArray],
        *,
        max_sweeps: int,
        tol: float,
        progress: bool,
        extrapolate: bool,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, list[float], bool]:
        """Sweep until the objective settles; returns the parameters, trace and convergence."""
        row_coef, col_coef, table, center = state
        trace = [self._objective(row_coef, col_coef, table, center, sweeper)]
        bar: Any = _progress(progress, max_sweeps)
        converged = False
        factor = _EXTRAPOLATION_START
        for _ in range(max_sweeps):
            before = (row_coef, col_coef, table)
            row_coef, col_coef, table, center, objective = self._sweep(
                sweeper, row_coef, col_coef, table, center
            )
            if extrapolate:
                jump = self._extrapolate(sweeper, before, (row_coef, col_coef, table), factor)
                if jump[-1] < objective:
                    row_coef, col_coef, table, center, objective = jump
                    factor = min(factor * _EXTRAPOLATION_GROWTH, _EXTRAPOLATION_MAX)
                else:
                    factor = _EXTRAPOLATION_START
            trace.append(objective)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(objective=f"{trace[-1]:.4f}")
            if trace[-2] - trace[-1] <= tol * (1.0 + abs(trace[-1])):
                converged = True
                break
        if bar is not None:
            bar.close()
        return row_coef, col_coef, table, center, trace, converged

    def _sweep(
        self,
        sweeper: Sweeper,
        row_coef: FloatArray,
        col_coef: FloatArray,
        table: FloatArray,
        center: FloatArray,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, float]:
        """One sweep: rows, columns, then global thresholds or the threshold centre.

        Returns the new parameters and the MAP objective there (from the last
        step's likelihood: no extra pass over the ratings, except for the global
        thresholds' trial).
        """
        row_coef, table, _, _ = sweeper.side_step("row", row_coef, col_coef, table, center)
        col_coef, table, nll, _ = sweeper.side_step("column", col_coef, row_coef, table, center)
        if self.sharing == "global":
            table, nll = sweeper.global_thresholds(row_coef, col_coef, table)
        else:
            center = table.mean(axis=0)
        objective = self._posterior(nll, row_coef, col_coef, table, center)
        return row_coef, col_coef, table, center, objective

    def _extrapolate(
        self,
        sweeper: Sweeper,
        before: tuple[FloatArray, FloatArray, FloatArray],
        after: tuple[FloatArray, FloatArray, FloatArray],
        factor: float,
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, float]:
        """Parameters ``after + factor (after - before)`` and the objective there."""
        row_coef, col_coef, table = (
            a + factor * (a - b) for a, b in zip(after, before, strict=True)
        )
        center = table.mean(axis=0)
        objective = self._objective(row_coef, col_coef, table, center, sweeper)
        return row_coef, col_coef, table, center, objective


def _default_parts(n_jobs: int, client: Any) -> int:
    """Two parts per worker thread on a cluster (load balance), else one per thread."""
    if client is not None:
        return max(2, 2 * sum(client.nthreads().values()))
    return max(1, int(n_jobs))


def _progress(enabled: bool, total: int) -> object:
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is optional
        return None
    return tqdm(total=total, desc="ALS-Newton sweeps", unit="sweep")


def _factorization_link(link: str | Link) -> Link:
    """The link, refusing the flexible families (their parameter is not estimated here)."""
    return fixed_shape_link(link, "ordinal matrix factorisation does not estimate")


def _encode_ratings(
    values: pd.Series, levels: Sequence[object] | None, name: str, many_levels: bool
) -> tuple[IntArray, list[object]]:
    """Codes ``0..K-1`` and the levels, as ``OrdinalModel`` encodes its response.

    Text needs ``levels`` (or an ordered Categorical); declared levels without
    ratings are dropped with a warning.  The levels returned are the declared
    objects (so ``fold_in`` and ``level_scores`` see the user's values).
    """
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        if not np.all(np.isfinite(values.to_numpy(dtype=float))):
            raise DataError(f"the ratings {name!r} hold infinite values; drop those entries")
    declared = _declared_levels(levels)
    encoded = encode_response(values, name=name, levels=declared, many_levels=many_levels)
    if declared is None:
        kept = [_python(v) for v in encoded.values]
    else:
        by_label = {format_level(v): _python(v) for v in declared}
        kept = [by_label[label] for label in encoded.levels]
    return np.asarray(encoded.codes, dtype=np.intp), kept


def _declared_levels(levels: object) -> Any:
    """``levels`` as a list (an iterator is read once); anything else is left for the check."""
    if levels is None or isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable):
        return levels
    return list(levels)


def _python(value: object) -> object:
    """A numpy scalar as the Python number it holds (levels print and compare as usual)."""
    return value.item() if isinstance(value, np.generic) else value


def _column_name(frame: pd.DataFrame, argument: str, name: object) -> None:
    """Raise unless ``name`` (the value of ``argument=``) is a column of ``frame``."""
    if not isinstance(name, Hashable):
        raise DataError(
            f"{argument}= names a column of the long ratings frame, not a {type(name).__name__}"
        )
    if name not in frame.columns:
        raise DataError(
            f"column {name!r} ({argument}=) not in the data (columns: {list(frame.columns)}); "
            f"{argument}= names a column of the long ratings frame"
        )


def _from_frame(
    frame: pd.DataFrame,
    row: str,
    col: str,
    rating: str,
    weights: str | None,
    levels: Sequence[object] | None,
    many_levels: bool,
) -> _Ratings:
    named = {"row": row, "col": col, "rating": rating}
    if weights is not None:
        named["weights"] = weights
    for argument, name in named.items():
        _column_name(frame, argument, name)
    shared = {name for name in named.values() if list(named.values()).count(name) > 1}
    if shared:
        roles = [f"{argument}=" for argument, name in named.items() if name in shared]
        raise SpecificationError(
            f"{' and '.join(roles)} {'both' if len(roles) == 2 else 'all'} name the column "
            f"{sorted(map(str, shared))[0]!r}; the rows, "
            "columns, ratings (and weights) must be different columns"
        )
    if frame.empty:
        raise DataError("the data has no ratings (no rows); pass at least two rated pairs")
    if frame[[row, col, rating]].isna().any().any():
        bad = frame[[row, col, rating]].isna().any()
        raise DataError(
            f"missing values in {list(bad[bad].index)}; drop those entries (a missing rating is "
            "simply an absent (row, column) pair)"
        )
    _check_unique_pairs(frame, row, col, rating)
    y, levels = _encode_ratings(frame[rating], levels, str(rating), many_levels)
    r_codes, r_labels = _factorize(frame[row], "row")
    c_codes, c_labels = _factorize(frame[col], "column")
    w = np.ones(len(frame)) if weights is None else _case_weights(frame[weights], weights)
    _check_weighted_levels(y, w, levels)
    return _Ratings(y, r_codes, c_codes, w, levels, r_labels, c_labels)


def _check_unique_pairs(frame: pd.DataFrame, row: str, col: str, rating: str) -> None:
    """One rating per (row, column) pair: name the first repeated pair and its ratings."""
    dup = frame.duplicated([row, col], keep=False)
    if not dup.any():
        return
    first = frame.loc[dup, [row, col]].iloc[0]
    same = frame[(frame[row] == first[row]) & (frame[col] == first[col])]
    n_pairs = int(frame.loc[dup].drop_duplicates([row, col]).shape[0])
    raise DataError(
        f"{n_pairs} (row, column) pair(s) are rated more than once, e.g. row "
        f"{_python(first[row])!r}, column {_python(first[col])!r} with ratings "
        f"{same[rating].tolist()}; keep one rating per pair "
        "(e.g. the latest, or frame.drop_duplicates([row, col]))"
    )


def _case_weights(values: pd.Series, name: str) -> FloatArray:
    """Non-negative finite numeric weights, not all zero."""
    if not (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
        raise DataError(
            f"the weights column {name!r} holds {values.dtype} values, not numbers; convert "
            f"it first, e.g. data[{name!r}] = pd.to_numeric(data[{name!r}])"
        )
    w = values.to_numpy(dtype=float)
    if not np.all(np.isfinite(w)):
        raise DataError(
            f"the weights column {name!r} has {int((~np.isfinite(w)).sum())} missing or "
            "infinite values; weights must be finite and non-negative"
        )
    checked, _ = _check_weights(pd.Series(w), len(w))
    return checked


def _check_weighted_levels(y: IntArray, weights: FloatArray, levels: list[object]) -> None:
    """Every level needs positive weight, or its thresholds run off to infinity."""
    total = np.bincount(y, weights=weights, minlength=len(levels))
    if (total > 0).all():
        return
    empty = [format_level(levels[k]) for k in np.flatnonzero(total <= 0)]
    raise DataError(
        f"level(s) {empty} have only ratings of weight 0, so their thresholds cannot be "
        "estimated; give those ratings positive weight, or drop them and the level(s)"
    )


def _factorize(values: pd.Series, what: str) -> tuple[IntArray, pd.Index]:
    if isinstance(values.dtype, pd.CategoricalDtype):
        used = np.bincount(values.cat.codes.to_numpy(), minlength=len(values.cat.categories))
        if (used == 0).any():
            empty = list(values.cat.categories[used == 0][:5])
            raise DataError(f"{what}s {empty} have no ratings; remove unused categories")
        return values.cat.codes.to_numpy().astype(np.intp), pd.Index(values.cat.categories)
    try:
        codes, labels = pd.factorize(values, sort=True)
    except TypeError:  # labels of mixed types that do not compare: keep their first-seen order
        codes, labels = pd.factorize(values, sort=False)
    return codes.astype(np.intp), pd.Index(labels)


def _from_sparse(matrix: Any, levels: Sequence[object] | None, many_levels: bool) -> _Ratings:
    if levels is None:
        raise DataError(
            "a sparse ratings matrix needs levels=[...], the rating scale lowest first (e.g. "
            "levels=[1, 2, 3, 4, 5]): scipy does not store zeros, so ordstats cannot tell "
            "from the matrix whether 0 is a rating"
        )
    coo = sp.coo_array(matrix)
    if coo.nnz == 0:
        raise DataError("the sparse matrix stores no ratings")
    _check_unique_cells(coo)
    values = np.asarray(coo.data)
    if np.isnan(values).any():
        raise DataError("NaN ratings in the sparse matrix; leave unrated entries unstored")
    levels = _declared_levels(levels)
    _check_stored_zeros(values, levels)
    y, kept = _encode_ratings(pd.Series(values), levels, "ratings", many_levels)
    n_rows, n_cols = coo.shape
    for counts, what in (
        (np.bincount(coo.row, minlength=n_rows), "row"),
        (np.bincount(coo.col, minlength=n_cols), "column"),
    ):
        if (counts == 0).any():
            empty = np.flatnonzero(counts == 0)[:5].tolist()
            raise DataError(f"{what}s {empty} have no ratings; drop them before fitting")
    return _Ratings(
        y,
        coo.row.astype(np.intp),
        coo.col.astype(np.intp),
        np.ones(len(y)),
        kept,
        pd.RangeIndex(n_rows),
        pd.RangeIndex(n_cols),
    )


def _check_unique_cells(coo: sp.coo_array) -> None:
    """A COO matrix may store a cell twice; scipy would add the two ratings up."""
    order = np.lexsort((coo.col, coo.row))
    r, c = coo.row[order], coo.col[order]
    repeated = (r[1:] == r[:-1]) & (c[1:] == c[:-1])
    if not repeated.any():
        return
    k = int(np.flatnonzero(repeated)[0])
    cell = (coo.row == r[k]) & (coo.col == c[k])
    n_cells = len(np.unique(np.column_stack([r[1:][repeated], c[1:][repeated]]), axis=0))
    raise DataError(
        f"the sparse matrix stores {n_cells} cell(s) more than once, e.g. row {int(r[k])}, "
        f"column {int(c[k])} with ratings {coo.data[cell].tolist()}; scipy would add them "
        "into one (wrong) rating. Keep one rating per cell"
    )


def _check_stored_zeros(values: np.ndarray, levels: Sequence[object]) -> None:
    """Stored zeros are ratings of 0; a declared level 0 must have been stored."""
    if not isinstance(levels, list):
        return  # encode_response explains what levels must be
    zero_declared = "0" in {format_level(v) for v in levels}
    n_zeros = int(np.sum(values == 0))
    if n_zeros and not zero_declared:
        raise DataError(
            f"the sparse matrix stores {n_zeros} explicit zero(s), but 0 is not among "
            f"levels={list(levels)}: if a stored 0 means 'not rated', remove them with "
            "matrix.eliminate_zeros(); if 0 is a rating, add it to levels"
        )
    if zero_declared and not n_zeros:
        raise DataError(
            "levels include 0 but the sparse matrix stores no zeros: scipy drops zeros (a "
            "matrix built from a dense array keeps only the non-zero entries), so answers "
            "of 0 would be lost silently. Store every 0 answer explicitly (build the matrix "
            "from (ratings, (row, col)) triples, which keeps explicit zeros), or pass long "
            "data (a DataFrame of row, column, rating)"
        )
