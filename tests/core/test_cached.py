"""The lock-free cached property of the likelihood's objects (ordstats.core.cached)."""

from __future__ import annotations

import threading

import pytest

from ordstats.core.cached import cached_property
from ordstats.families.cumulative import likelihood


class _Counted:
    calls = 0

    @cached_property
    def value(self) -> int:
        """The doc of the value."""
        type(self).calls += 1
        return 42


def test_value_is_computed_once_and_kept_in_the_object():
    obj = _Counted()
    assert obj.value == 42 and obj.value == 42
    assert _Counted.calls == 1
    assert obj.__dict__["value"] == 42
    assert isinstance(_Counted.value, cached_property)
    assert _Counted.value.__doc__ == "The doc of the value."
    del obj.value  # recomputed after deletion, as functools' does
    assert obj.value == 42 and _Counted.calls == 2


def test_a_value_is_computed_while_another_object_computes_its_own():
    """functools.cached_property of Python 3.11 holds one lock per property of a class.
    Here a getter, while it runs, has another thread compute the same property of another
    object to the end (it would wait for the first getter's lock there). No clock: a
    descriptor with a lock fails the check before the getter, which would wait for ever."""
    order: list[str] = []

    class Nested:
        def __init__(self, inner: bool) -> None:
            self.inner = inner

        @cached_property
        def value(self) -> int:
            if not self.inner:
                return 2
            other = threading.Thread(target=lambda: order.append(f"other {Nested(False).value}"))
            other.start()
            other.join()
            order.append("first")
            return 1

    # a descriptor with a class-wide lock would make the getter below wait for ever
    assert not hasattr(Nested.__dict__["value"], "lock")
    assert Nested(True).value == 1
    assert order == ["other 2", "first"]


def test_the_descriptors_hold_no_lock():
    """The lock functools' descriptor keeps (3.8-3.11) is what the threads queued at."""
    for name in ("_level_order", "_rows_by_level", "level_designs"):
        assert not hasattr(likelihood.CLMProblem.__dict__[name], "lock")


def test_one_descriptor_cannot_take_two_names():
    def getter(self):
        return 1

    shared = cached_property(getter)
    # Python 3.11 wraps the error of __set_name__ in a RuntimeError, 3.12 does not
    with pytest.raises((TypeError, RuntimeError)) as raised:
        type("Twice", (), {"a": shared, "b": shared})
    error = raised.value
    assert "two names" in str(error.__cause__ if error.__cause__ is not None else error)


@pytest.mark.parametrize("name", ["_level_order", "_rows_by_level", "level_designs"])
def test_the_likelihood_caches_without_a_lock(name):
    assert isinstance(likelihood.CLMProblem.__dict__[name], cached_property)
