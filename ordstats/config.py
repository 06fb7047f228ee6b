"""Process-wide settings of ordstats: :func:`set_options` and :func:`get_options`.

Two settings: ``threads``, the most threads any pool that ordstats starts or
uses may run (BLAS inside the fits, the factorisation's parts, the threads of
LightGBM or XGBoost inside the ordinal boosters), and ``chunk_cache``, whether
fits of data read in chunks keep the decoded chunks between passes
(:mod:`ordstats.data.spill`).  The numerical core reads them
(:mod:`ordstats.core.threads`), so this module sits at the bottom of the layers
and imports nothing of ordstats but its errors.

>>> import ordstats
>>> ordstats.get_options()
{'threads': None, 'chunk_cache': True}
>>> with ordstats.set_options(threads=1):
...     ordstats.get_options()["threads"]
1
>>> ordstats.get_options()["threads"] is None
True
"""

from __future__ import annotations

import numbers
import os
import sys
import threading
from types import TracebackType

from ordstats.errors import SpecificationError

__all__ = ["get_options", "is_interactive", "resolve_threads", "set_options", "usable_cores"]

_LOCK = threading.Lock()
_OPTIONS: dict[str, int | bool | str | None] = {"threads": None, "chunk_cache": True}


def usable_cores() -> int:
    """The number of cores this process may run on (its CPU affinity where known)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def check_threads(value: object, name: str = "threads") -> int | None:
    """Validate a thread count as scikit-learn's ``n_jobs``: ``None``, ``k >= 1`` or ``-k``.

    Parameters
    ----------
    value : object
        ``None`` (ordstats decides), a positive whole number (at most that many
        threads) or a negative one (``-1``: every usable core, ``-2``: all but
        one, ...).
    name : str
        The argument's name in the error message.

    Returns
    -------
    int or None
        ``value`` as an ``int`` (``None`` unchanged).

    Raises
    ------
    SpecificationError
        If ``value`` is 0, not a whole number, or a boolean.
    """
    if value is None:
        return None
    whole = isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole:
        raise SpecificationError(
            f"{name} must be None, a positive whole number of threads, or -1 for every "
            f"core (-2: all but one, ...); got {value!r}"
        )
    assert isinstance(value, (numbers.Integral, float))  # for mypy: whole numbers only here
    if int(value) == 0:
        raise SpecificationError(
            f"{name}=0 is not a number of threads: use a positive number, or -1 for every "
            "core (-2: all but one, ...)"
        )
    return int(value)


def resolve_threads(value: object = None, name: str = "threads") -> int:
    """The number of threads ``value`` stands for (``None``: the ``threads`` option).

    ``None`` takes the process-wide option (:func:`set_options`), and when that
    is ``None`` too, every usable core.  A negative ``-k`` means all usable
    cores but ``k - 1``, never fewer than one (scikit-learn's ``n_jobs``).

    Parameters
    ----------
    value : int or None
    name : str
        The argument's name in error messages.

    Returns
    -------
    int
        At least 1.
    """
    threads = check_threads(value, name)
    if threads is None:
        option = _OPTIONS["threads"]
        threads = option if isinstance(option, int) else None
    if threads is None:
        return usable_cores()
    if threads < 0:
        return max(1, usable_cores() + 1 + threads)
    return threads


def check_chunk_cache(value: object) -> bool | str:
    """Validate the ``chunk_cache`` option: ``True``, ``False`` or an existing directory.

    Parameters
    ----------
    value : object

    Returns
    -------
    bool or str
        The setting (a directory as a ``str``).

    Raises
    ------
    SpecificationError
        For anything else, or a directory that does not exist.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if isinstance(path, str) and os.path.isdir(path):
            return path
        raise SpecificationError(
            f"chunk_cache={value!r} is not an existing directory: create it, or pass True "
            "(the system's temporary directory) or False (read the data at every pass)"
        )
    raise SpecificationError(
        f"chunk_cache must be True, False or a directory to keep the decoded chunks in; got "
        f"{value!r}"
    )


def get_options() -> dict[str, int | bool | str | None]:
    """The current process-wide options.

    Returns
    -------
    dict
        ``{"threads": ..., "chunk_cache": ...}``: see :func:`set_options`.
    """
    with _LOCK:
        return dict(_OPTIONS)


class set_options:  # a function to users, a class to be a context manager
    """Set process-wide options, for the rest of the session or inside a ``with`` block.

    Parameters
    ----------
    threads : int or None
        The most threads any pool ordstats starts or uses may run: the BLAS
        library inside fits (ordstats keeps thin products on one thread and
        lets only large ones use up to this many; see
        :mod:`ordstats.core.threads`), the parts of
        :meth:`OrdinalFactorization.fit <ordstats.OrdinalFactorization.fit>`
        (its ``n_jobs`` is capped by it), and LightGBM's or XGBoost's threads in
        the ordinal boosters when their ``n_jobs`` is not given.  ``None`` (the
        default): every usable core, but BLAS never beyond the caller's own
        setting (``OPENBLAS_NUM_THREADS``, ``threadpoolctl``).  ``-1`` means
        every usable core, ``-2`` all but one, as scikit-learn's ``n_jobs``.
    chunk_cache : bool or str
        Whether a fit of data read in chunks keeps each chunk's decoded
        arrays (response codes, design, weights) after the first pass that
        builds them, so that its Newton passes neither decode the files nor
        evaluate the formula again.  ``True`` (the default): files and
        DataFrames read in chunks keep them in memory while they take at
        most a quarter of the memory available when the fit begins, and the
        chunks beyond that in binary files in the system's temporary
        directory (only while they take at most half the free space there);
        a Dask DataFrame on a ``dask.distributed`` cluster keeps them in the
        workers' memory (if they take at most a quarter of it).  Either way
        they are released when the model is deleted.  A directory (``str``
        or path): every chunk goes to files there, none is held in memory;
        ``False``: every pass reads the data again.

    Raises
    ------
    SpecificationError
        For ``threads=0``, a non-integer, a ``chunk_cache`` that is neither a
        boolean nor an existing directory, or an unknown option name.

    Examples
    --------
    >>> import ordstats
    >>> with ordstats.set_options(threads=1):  # one thread inside the block
    ...     ordstats.get_options()["threads"]
    1
    >>> ordstats.get_options()["threads"] is None  # restored on leaving it
    True

    Called without ``with``, the setting stays until changed again:
    ``ordstats.set_options(threads=2)``.
    """

    def __init__(self, **options: object) -> None:
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise SpecificationError(
                f"unknown option(s) {unknown}; the options are {sorted(_OPTIONS)}"
            )
        new: dict[str, int | bool | str | None] = {}
        if "threads" in options:
            new["threads"] = check_threads(options["threads"])
        if "chunk_cache" in options:
            new["chunk_cache"] = check_chunk_cache(options["chunk_cache"])
        with _LOCK:
            self._previous = {key: _OPTIONS[key] for key in new}
            _OPTIONS.update(new)

    def __enter__(self) -> set_options:
        """Enter the block; the options are already set."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Put back the options as they were before this call."""
        with _LOCK:
            _OPTIONS.update(self._previous)


def is_interactive() -> bool:
    """Tell whether a terminal or a notebook is watching (progress bars are shown then).

    Returns
    -------
    bool
        True in a Jupyter kernel or when standard error is a terminal.
    """
    if "ipykernel" in sys.modules:
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())
