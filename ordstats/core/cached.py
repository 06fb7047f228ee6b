"""A cached property without a lock, for objects that threads evaluate side by side.

:func:`functools.cached_property` of Python 3.8-3.11 computes every value
under one lock per property of a class, not per object: two threads building
the likelihood of two chunks (:mod:`ordstats.data.chunks`) took turns at each
cached quantity (the level order, the grouped design), and a pass on two
threads ran at 1.05-1.3 times the speed of one.  Python 3.12 removed the
lock; this descriptor behaves as 3.12's on every version.  Two threads reading
the same object's property for the first time may both compute it, which is
harmless for the pure values it is used for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

__all__ = ["cached_property"]

T = TypeVar("T")


class cached_property(Generic[T]):
    """Compute an attribute once per object and keep it in the object's ``__dict__``.

    Parameters
    ----------
    func : callable
        The getter; its value replaces the descriptor for that object (a
        non-data descriptor: the instance's ``__dict__`` wins from then on).
    """

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.attrname: str | None = None
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__

    def __set_name__(self, owner: type, name: str) -> None:
        if self.attrname is not None and name != self.attrname:
            raise TypeError(
                f"one cached attribute cannot have two names ({self.attrname!r} and {name!r})"
            )
        self.attrname = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> cached_property[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> Any:
        if instance is None:
            return self
        if self.attrname is None:
            raise TypeError("a cached attribute needs a name: define it in a class body")
        value = self.func(instance)
        instance.__dict__[self.attrname] = value
        return value
