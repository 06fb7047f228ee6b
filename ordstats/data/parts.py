"""Adding up the per-chunk results of a pass (sums that skip empty chunks)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

__all__ = ["add_parts", "sum_parts"]


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
