"""Adding up the per-chunk results of a pass (sums that skip empty chunks)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ordstats.core.threads import for_each_in_order

__all__ = ["InOrder", "add_parts", "sum_in_order", "sum_parts"]


def add_parts(a: Any, b: Any) -> Any:
    """Add two partial results; None (a chunk without usable rows) adds nothing."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def sum_parts(parts: Sequence[Any]) -> Any:
    """Sum partial results, skipping None."""
    return functools.reduce(add_parts, parts, None)


class InOrder:
    """A chunk's result whose last step must run in the chunks' order (writing a spill).

    A pass function that runs on a pool of threads returns one; the pass calls
    :meth:`finish` in the calling thread, chunk after chunk, and adds what it
    returns.

    Parameters
    ----------
    step : callable
        Takes no argument; returns the chunk's result.
    """

    __slots__ = ("step",)

    def __init__(self, step: Callable[[], Any]) -> None:
        self.step = step

    def finish(self) -> Any:
        """Run the step; return the chunk's result."""
        return self.step()


def sum_in_order(
    func: Callable[[Any], Any], items: Iterable[Any], threads: int | None = None
) -> Any:
    """``func(item_1) + func(item_2) + ...``, evaluated on a pool and added in order.

    The sum is that of one thread bit for bit
    (:func:`~ordstats.core.threads.for_each_in_order`); results that are
    :class:`InOrder` are finished in the items' order before they are added;
    None adds nothing (None: no item, or none with a result).

    Parameters
    ----------
    func : callable
        A thread-safe function of one item.
    items : iterable
    threads : int, optional
        Threads of the pool (default :func:`~ordstats.core.threads.pass_threads`).

    Returns
    -------
    object or None
    """
    total: list[Any] = [None]

    def add(part: Any) -> None:
        if isinstance(part, InOrder):
            part = part.finish()
        total[0] = add_parts(total[0], part)

    for_each_in_order(func, items, add, threads)
    return total[0]
