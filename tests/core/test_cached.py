"""The lock-free cached property of the likelihood's objects (ordstats.core.cached)."""

from __future__ import annotations

import threading

import pytest

from ordstats.core.cached import cached_property
from ordstats.families.cumulative import likelihood

#: Generous: the threads only have to start; the old lock made them wait forever.
MEETING_SECONDS = 120.0


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


def test_two_objects_compute_their_values_at_the_same_time():
    """functools.cached_property of Python 3.11 holds one lock per property of a class:
    the second thread would wait for the first, which waits for the second."""
    meeting = threading.Barrier(2, timeout=MEETING_SECONDS)

    class Meets:
        @cached_property
        def value(self) -> int:
            meeting.wait()
            return 1

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(Meets().value)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [1, 1]
    assert not meeting.broken


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
