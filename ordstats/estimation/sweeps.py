"""The sweeps of an ordinal factorisation, run in this process, in threads or on Dask.

:class:`Sweeper` takes the alternating Newton steps of
:class:`~ordstats.estimation.factorization.OrdinalFactorization` part by part
(:mod:`ordstats.families.cumulative.sides`): each side is cut into parts of
whole blocks once per fit, and every step maps the same pure functions over
the parts,

* one after another (``n_jobs=1``, one part per side),
* in a thread pool (``n_jobs > 1``: NumPy releases the GIL in the large array
  operations, so the parts run side by side), or
* on a ``dask.distributed`` cluster (``client=``): the parts are scattered to
  the workers once, and each step sends only the coefficients and thresholds.

The numbers agree between the three up to the order of floating-point sums.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.links import Link
from ordstats.errors import SpecificationError
from ordstats.families.cumulative.blocks import _solve
from ordstats.families.cumulative.sides import (
    SidePart,
    part_nll,
    part_step,
    part_threshold_terms,
)

__all__ = ["PartRunner", "Sweeper"]

#: Arrays larger than this are scattered to Dask workers once per call, not per task.
_SCATTER_BYTES = 1 << 16


class PartRunner:
    """Maps a function over the parts of one side: serially, in threads or on Dask.

    Parameters
    ----------
    sides : dict
        ``{"row": [SidePart, ...], "column": [...]}``.
    n_jobs : int
        Threads (1: this thread).
    client : dask.distributed.Client, optional
        Run the parts on its workers instead (the parts are scattered once).
    """

    def __init__(
        self, sides: dict[str, list[SidePart]], n_jobs: int = 1, client: Any = None
    ) -> None:
        self.sides = sides
        self.client = client
        self._pool: ThreadPoolExecutor | None = None
        self._remote: dict[str, list[Any]] = {}
        if client is not None:
            self._remote = {
                side: client.scatter(parts, hash=False) for side, parts in sides.items()
            }
        elif n_jobs > 1:
            self._pool = ThreadPoolExecutor(max_workers=int(n_jobs))

    def map(
        self, func: Callable[..., Any], side: str, per_part: Sequence[tuple[Any, ...]], *shared: Any
    ) -> list[Any]:
        """``[func(part, *per_part[k], *shared) for each part k of side]``."""
        parts = self.sides[side]
        if self.client is not None:
            client = self.client
            sent = [
                client.scatter(a, broadcast=True, hash=False)
                if isinstance(a, np.ndarray) and a.nbytes > _SCATTER_BYTES
                else a
                for a in shared
            ]
            futures = [
                client.submit(func, remote, *own, *sent, pure=False)
                for remote, own in zip(self._remote[side], per_part, strict=True)
            ]
            return list(client.gather(futures))
        if self._pool is not None:
            return list(
                self._pool.map(lambda k: func(parts[k], *per_part[k], *shared), range(len(parts)))
            )
        return [func(part, *own, *shared) for part, own in zip(parts, per_part, strict=True)]

    def close(self) -> None:
        """Release the threads and the scattered parts."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        if self.client is not None:
            for futures in self._remote.values():
                self.client.cancel(futures)
            self._remote = {}


def _step_part(
    part: SidePart,
    own: FloatArray,
    thresholds: FloatArray,
    other: FloatArray,
    link: Link,
    penalty: FloatArray,
    owns: bool,
    threshold_penalty: float,
    center: FloatArray | None,
    max_halvings: int,
    keep_hessian: bool,
) -> tuple[FloatArray, FloatArray | None, float, FloatArray | None]:
    """:func:`part_step`, returning only what the sweep needs back."""
    step = part_step(
        part, link, own, other, thresholds, penalty, owns, threshold_penalty, center, max_halvings
    )
    return (
        step.coef,
        step.thresholds if owns else None,
        float(step.nll.sum()),
        step.hessian if keep_hessian else None,
    )


def _nll_part(
    part: SidePart, own: FloatArray, thresholds: FloatArray, other: FloatArray, link: Link
) -> float:
    return float(part_nll(part, link, own, other, thresholds).sum())


def _threshold_part(
    part: SidePart, own: FloatArray, other: FloatArray, link: Link, thresholds: FloatArray
) -> tuple[FloatArray, FloatArray, float]:
    return part_threshold_terms(part, link, own, other, thresholds)


class Sweeper:
    """The steps of a fit, over the parts that a :class:`PartRunner` holds.

    Parameters
    ----------
    runner : PartRunner
    link : Link
    sharing : {"global", "row", "column"}
    penalties : dict
        Ridge penalty vectors of the ``"row"`` and ``"column"`` coefficients.
    threshold_penalty : float
    """

    def __init__(
        self,
        runner: PartRunner,
        link: Link,
        sharing: str,
        penalties: dict[str, FloatArray],
        threshold_penalty: float,
    ) -> None:
        if sharing not in ("global", "row", "column"):
            raise SpecificationError(f"unknown threshold sharing {sharing!r}")
        self.runner = runner
        self.link = link
        self.sharing = sharing
        self.penalties = penalties
        self.threshold_penalty = threshold_penalty

    def side_step(
        self,
        side: str,
        own: FloatArray,
        other: FloatArray,
        table: FloatArray,
        center: FloatArray,
        *,
        max_halvings: int = 30,
        keep_hessian: bool = False,
    ) -> tuple[FloatArray, FloatArray, float, FloatArray | None]:
        """Newton step of every block of ``side`` (the other side fixed).

        Returns
        -------
        coef : ndarray
            The side's new coefficients.
        table : ndarray
            The threshold table (new rows where the side owns it).
        nll : float
            Negative log-likelihood of all ratings after the step.
        hessian : ndarray or None
            Per-block Hessians at the old parameters (``keep_hessian``).
        """
        parts = self.runner.sides[side]
        owns = self.sharing == side
        per_part = [(own[p.ids], table[p.ids] if owns else table) for p in parts]
        results = self.runner.map(
            _step_part,
            side,
            per_part,
            other,
            self.link,
            self.penalties[side],
            owns,
            self.threshold_penalty,
            center,
            max_halvings,
            keep_hessian,
        )
        coef, new_table = own.copy(), table.copy()
        hessian = None
        nll = 0.0
        for part, (part_coef, part_table, part_nll_sum, part_hessian) in zip(
            parts, results, strict=True
        ):
            coef[part.ids] = part_coef
            if owns:
                new_table[part.ids] = part_table
            nll += part_nll_sum
            if keep_hessian:
                if hessian is None:
                    hessian = np.zeros((own.shape[0], *part_hessian.shape[1:]))
                hessian[part.ids] = part_hessian
        return coef, new_table, nll, hessian

    def nll(self, row_coef: FloatArray, col_coef: FloatArray, table: FloatArray) -> float:
        """Negative log-likelihood of all ratings (one pass over the row parts)."""
        parts = self.runner.sides["row"]
        # a row part that owns its thresholds indexes its own rows of the table
        owns = self.sharing == "row"
        per_part = [(row_coef[p.ids], table[p.ids] if owns else table) for p in parts]
        return float(sum(self.runner.map(_nll_part, "row", per_part, col_coef, self.link)))

    def global_thresholds(
        self,
        row_coef: FloatArray,
        col_coef: FloatArray,
        table: FloatArray,
        max_halvings: int = 30,
    ) -> tuple[FloatArray, float]:
        """Newton step on the global thresholds, halved until the NLL does not rise.

        Returns the thresholds (shape ``(1, K - 1)``) and the NLL there.
        """
        parts = self.runner.sides["row"]
        per_part = [(row_coef[p.ids],) for p in parts]
        terms = self.runner.map(_threshold_part, "row", per_part, col_coef, self.link, table)
        gradient = sum(t[0] for t in terms)
        hessian = sum(t[1] for t in terms)
        nll_old = float(sum(t[2] for t in terms))
        step = -_solve(hessian[None], gradient[None])[0]
        alpha = 1.0
        for _ in range(max_halvings + 1):
            trial = table + alpha * step
            if np.all(np.diff(trial, axis=1) > 0):
                nll = self.nll(row_coef, col_coef, trial)
                if nll <= nll_old:
                    return trial, nll
            alpha *= 0.5
        return table, nll_old
