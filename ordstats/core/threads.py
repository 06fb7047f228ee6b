"""How many threads the numerical core lets BLAS use: one, except for large products.

A fit is thousands of thin BLAS calls (``X @ beta``, ``X' v``, the per-level sums
``(2 x m)(m x p)``, the Cholesky of a 25 x 25 Hessian), each taking micro- to
milliseconds.  A multi-threaded BLAS splits every such call over its threads and
waits for all of them; when other programs hold the cores, each wait lasts until
the scheduler gives the last thread a core again, a few milliseconds, far longer
than the call.  Issue 24 measured fits 25-70x slower on a busy machine than
with one thread; beside two busy loops on this 2-core machine a clm at 10^5 x 20
took 0.248 s with two BLAS threads and 0.173 s with one (``X @ beta`` alone: 8.0
ms against 0.66 ms), and threads gained nothing on a quiet machine at the sizes
ordstats fits (``p`` of tens).  So, inside every fit (:func:`numeric_threads`, entered by the solver
and the model's fitting methods), and in predictions, posterior draws, the margins
verbs, emmeans, ``get_margeff`` and Brant's test (thin ``X @ beta`` products as well):

* BLAS runs on **one thread**: thin products, matrix-vector products, small
  factorisations;
* only a product whose work is at least :data:`THREADED_WORK` multiply-adds and
  whose narrower output side is at least :data:`THREADED_WIDTH`
  (:func:`product_threads`; the location block ``X' diag(w) X`` of a wide design)
  may use more, up to the allowed number: the ``threads`` option
  (:func:`ordstats.set_options`, or an estimator's ``n_jobs``), never more than
  the caller's own BLAS setting when the fit began (``OPENBLAS_NUM_THREADS``,
  ``threadpoolctl.threadpool_limits``), and only while one fit runs in the
  process (fits in several threads of one process share BLAS' setting, so
  each keeps one thread);
* on leaving the outermost scope the caller's settings come back exactly, also
  when the fit raised.

pyarrow, reading Parquet, CSV or Arrow files in chunks, gets the same bound
(:func:`pool_threads`, applied by ``ordstats.data.sources``): its CPU pool is
capped at the allowed count for each pass over the files (``pyarrow.set_cpu_count``,
the caller's count restored after the pass) and not used at all for one thread.

The chunks of a pass over data read in chunks are independent: a pass evaluates
them on a small pool of threads (:func:`for_each_in_order`; NumPy releases the GIL
in its loops and BLAS calls), one BLAS thread in each, and takes their results in
the chunks' order, so that sums over the chunks are those of one thread bit for bit.

The limits are set with ``threadpoolctl`` on the BLAS libraries loaded in the
process (numpy's and scipy's OpenBLAS or MKL) and are process-wide, so the
threads of a Dask threaded scheduler or of the factorisation's thread pool run
single-threaded BLAS too; scopes are counted across threads, and the settings
are restored only when the last one ends.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from threadpoolctl import ThreadpoolController

from ordstats.config import resolve_threads, usable_cores
from ordstats.core.memory import heap_for_passes

__all__ = [
    "THREADED_WIDTH",
    "THREADED_WORK",
    "allowed_threads",
    "for_each_in_order",
    "numeric_threads",
    "pass_threads",
    "pool_threads",
    "product_threads",
    "single_threaded_call",
]

T = TypeVar("T")
R = TypeVar("R")

#: Least multiply-adds (``n p q`` for an ``(n x p)' (n x q)`` product) of a
#: product that may use several BLAS threads.  Measured on the 2-core machine
#: at load average ~1.4 (``weighted_gram``, medians of 15, one vs two threads):
#: 10^5 x 20 5.2 vs 5.1 ms, 10^6 x 20 (4e8) 56.5 vs 58.2 ms, 10^5 x 100 (1e9)
#: 35.0 vs 37.3 ms: no gain; 10^5 x 300 (9e9) 196 vs 156 ms.  Thin products lose
#: 10x and more under contention (``X @ b`` at 10^5 x 20 beside two busy loops:
#: 0.66 ms on one thread, 8.0 ms on two).  ``bench/bench_contention.py
#: --products`` repeats the Gram measurement quiet and busy.
THREADED_WORK = 2e9
#: Least width of the narrower side of a product's output that may use threads:
#: BLAS splits the output among its threads, and thin outputs split badly.
THREADED_WIDTH = 128


class _Scope:
    """The process-wide state of the scopes: who is inside, what to restore."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.depth: dict[int, int] = {}  # thread id -> nested scopes
        self.saved: list[tuple[Any, int]] = []  # (library controller, caller's threads)
        self.allowed = 1
        self.requested = 1  # the outermost scope's thread count (before the BLAS cap)
        self._controller: Any = None
        self._modules = -1

    def controller(self) -> Any:
        """The BLAS libraries of the process (scanned again when new modules were imported)."""
        if self._controller is None or len(sys.modules) != self._modules:
            self._modules = len(sys.modules)
            self._controller = ThreadpoolController().select(user_api="blas")
        return self._controller

    def enter(self, threads: object) -> None:
        requested = resolve_threads(threads)  # validated before anything changes
        ident = threading.get_ident()
        with self.lock:
            if not self.depth:
                libraries = list(self.controller().lib_controllers)
                self.saved = [(lib, int(lib.get_num_threads())) for lib in libraries]
                callers = max((count for _, count in self.saved), default=1)
                self.requested = requested
                self.allowed = max(1, min(requested, callers))
                self._set(1)
            elif ident not in self.depth:
                self._set(1)  # a second fit in this process: nobody may raise the threads
            self.depth[ident] = self.depth.get(ident, 0) + 1

    def leave(self) -> None:
        ident = threading.get_ident()
        with self.lock:
            self.depth[ident] -= 1
            if not self.depth[ident]:
                del self.depth[ident]
            if not self.depth:
                for lib, count in self.saved:
                    lib.set_num_threads(count)
                self.saved = []

    def _set(self, count: int) -> None:
        for lib, _ in self.saved:
            lib.set_num_threads(count)

    def may_raise(self) -> bool:
        return self.allowed > 1 and len(self.depth) == 1

    def raise_to_allowed(self) -> bool:
        with self.lock:
            if not self.may_raise():
                return False
            self._set(self.allowed)
            return True

    def lower(self) -> None:
        with self.lock:
            if self.depth:
                self._set(1)


_SCOPE = _Scope()


@contextmanager
def numeric_threads(threads: object = None) -> Iterator[None]:
    """Run the block with one BLAS thread (large products excepted); restore on exit.

    Usable as a decorator (``@numeric_threads()``).  Scopes nest and may be
    entered from several threads: the outermost one in the process reads the
    caller's settings and the allowed threads, the last one out restores them.

    Parameters
    ----------
    threads : int or None
        The most threads a large product may use (as ``n_jobs``: ``-1`` all
        cores); ``None`` takes the ``threads`` option.  Only the outermost
        scope's value counts.

    Raises
    ------
    SpecificationError
        If ``threads`` is not a valid thread count.
    """
    _SCOPE.enter(threads)
    try:
        yield
    finally:
        _SCOPE.leave()


def allowed_threads() -> int:
    """Threads a large product may use now (1 outside a fit or while several run)."""
    with _SCOPE.lock:
        return _SCOPE.allowed if _SCOPE.depth and _SCOPE.may_raise() else 1


def pool_threads() -> int:
    """Threads a pool other than BLAS may use now (pyarrow's, reading files in chunks).

    Inside a fit: the outermost scope's thread count (the ``threads`` option or
    an estimator's ``n_jobs``), or 1 while several fits run in the process (the
    workers of a thread pool each read on one thread).  Outside a fit: the
    ``threads`` option (every usable core by default).
    """
    with _SCOPE.lock:
        if not _SCOPE.depth:
            return resolve_threads(None)
        return _SCOPE.requested if len(_SCOPE.depth) == 1 else 1


def is_large(work: float, width: int) -> bool:
    """Whether a product of ``work`` multiply-adds and output side ``width`` gains from threads."""
    return work >= THREADED_WORK and width >= THREADED_WIDTH


@contextmanager
def product_threads(work: float, width: int) -> Iterator[None]:
    """Let one large product use the allowed threads (:func:`is_large`); else change nothing.

    Outside :func:`numeric_threads` it changes nothing either: the caller's
    settings apply.

    Parameters
    ----------
    work : float
        Multiply-adds of the product (``n p q``).
    width : int
        The narrower side of its output.
    """
    raised = is_large(work, width) and _SCOPE.raise_to_allowed()
    try:
        yield
    finally:
        if raised:
            _SCOPE.lower()


def single_threaded_call(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` inside :func:`numeric_threads` (and :func:`heap_for_passes`): for tasks.

    A partial of this function pickles (module-level), so a ``dask.distributed``
    worker process runs the task with one BLAS thread too, and gets its own
    settings back afterwards.
    """
    with numeric_threads(), heap_for_passes():
        return func(*args)


#: Chunks of fewer rows are evaluated in the calling thread: their work is
#: mostly Python that holds the GIL, so two threads took about twice as long
#: (144 chunks of 100 rows: a fit 0.76 s on two threads, 0.36 s on one).
POOL_MIN_ROWS = 20_000


def pass_threads(rows_per_chunk: int | None = None) -> int:
    """Threads a pass over chunks may evaluate them on: :func:`pool_threads`, at most the cores.

    Parameters
    ----------
    rows_per_chunk : int, optional
        The chunks' size; below :data:`POOL_MIN_ROWS` a pass uses one thread.

    Returns
    -------
    int
        At least 1 (1 while several fits run in the process).
    """
    if rows_per_chunk is not None and rows_per_chunk < POOL_MIN_ROWS:
        return 1
    return max(1, min(pool_threads(), usable_cores()))


def for_each_in_order(
    func: Callable[[T], R],
    items: Iterable[T],
    consume: Callable[[R], None],
    threads: int | None = None,
) -> None:
    """``consume(func(item))`` for each item, ``func`` on a pool, ``consume`` in the items' order.

    ``func`` runs on up to ``threads`` threads (default :func:`pass_threads`),
    each call with one BLAS thread (:func:`single_threaded_call`, inside a
    :func:`numeric_threads` scope of the calling thread) and in a copy
    of the caller's context (NumPy's ``errstate``); ``consume`` runs in the
    calling thread, on the results in the order of ``items``, so a sum it
    builds is the one-thread sum bit for bit.  The items are taken from
    ``items`` in the calling thread (reading the next chunk while the pool
    evaluates the last ones) and at most ``threads + 1`` wait or run at once.
    The first error, in the items' order, is raised once the calls under way
    have ended; the items not yet started are dropped.

    Parameters
    ----------
    func : callable
        Thread-safe: a pure function of one item.
    items : iterable
    consume : callable
        Takes each result, in order.
    threads : int, optional
    """
    count = pass_threads() if threads is None else max(1, int(threads))
    if count == 1:
        for item in items:
            consume(func(item))
        return
    pending: deque[Future[R]] = deque()
    # BLAS' thread count is set from the calling thread (OpenBLAS ignores it from others)
    with numeric_threads(), ThreadPoolExecutor(count, thread_name_prefix="ordstats-pass") as pool:
        try:
            for item in items:
                context = contextvars.copy_context()
                pending.append(pool.submit(context.run, single_threaded_call, func, item))
                while len(pending) > count:
                    consume(pending.popleft().result())
            while pending:
                consume(pending.popleft().result())
        finally:
            for future in pending:
                future.cancel()
