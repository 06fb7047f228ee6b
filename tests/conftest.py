"""Test-wide settings and shared fixtures.

* Hypothesis profiles: reproducible property tests under CI.
* The bundled data sets ``wine``, ``housing`` and ``soup``, loaded once per
  session; a test that changes a frame takes a ``.copy()`` (or ``.assign``) first,
  and the session fails at teardown if a shared frame was changed in place.
* ``wine_res`` and ``housing_res``: the standard fits of those data (one per module).
* Random likelihood problems: ``random_clm_data``, ``cumulative_problem`` and
  ``step_problem`` return builders (callables), so that Hypothesis tests can
  draw a new problem per example from a seed.

* One BLAS and OpenMP thread for the session and every process it starts; the
  caller's settings are restored when the session ends.

Finite-difference helpers are plain functions in :mod:`tests._numdiff`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

import ordstats
from ordstats.core.links import get_link
from ordstats.core.thresholds import threshold_jacobian
from ordstats.families import get_family
from ordstats.families.cumulative.likelihood import CLMData, prepare

# -- one BLAS/OpenMP thread --------------------------------------------------------
# On a machine whose cores are busy (CI beside other jobs, a laptop), BLAS and
# OpenMP threads wait for cores that other processes hold: fits ran 25-70x slower
# and the suite took an hour on a loaded 2-core machine (issue 29). The tests time
# nothing, so they run single-threaded: threadpoolctl limits the pools already
# loaded in this process, and the variables reach every process the tests start
# (vignettes, the command line, the docs build, mypy, Dask workers). The session
# ends by giving the caller's process its own settings back: after pytest.main()
# in a notebook or an IDE the process goes on (tests/test_thread_settings.py).
SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_CALLERS_THREADS = pytest.StashKey[tuple[dict[str, "str | None"], threadpool_limits]]()


def pytest_configure(config: pytest.Config) -> None:
    """One BLAS/OpenMP thread for the session (see above), the caller's settings kept."""
    callers = {name: os.environ.get(name) for name in SINGLE_THREAD}
    os.environ.update(SINGLE_THREAD)
    config.stash[_CALLERS_THREADS] = (callers, threadpool_limits(limits=1))


def pytest_unconfigure(config: pytest.Config) -> None:
    """The caller's thread settings back, as they were before the session."""
    if _CALLERS_THREADS not in config.stash:
        return
    callers, limits = config.stash[_CALLERS_THREADS]
    limits.restore_original_limits()
    for name, value in callers.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# Developers get fresh random examples on every run (that is how property tests
# find bugs); CI (.ci/run sets CI=1) uses a fixed seed so a red build is
# reproducible and never depends on luck.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


# -- bundled data sets ----------------------------------------------------------


def _bundled_dataset(name: str, description: str):
    """A session fixture ``name``: the bundled data set, loaded once.

    At teardown the frame must still equal a fresh load: a test that changes a
    shared frame in place fails the session instead of leaking into later tests.
    """

    @pytest.fixture(scope="session", name=name)
    def fixture() -> Iterator[pd.DataFrame]:
        frame = ordstats.datasets.load(name)
        yield frame
        pd.testing.assert_frame_equal(
            frame,
            ordstats.datasets.load(name),
            obj=f"the session's {name!r} frame (a test changed it in place; take a .copy())",
        )

    fixture.__doc__ = f"{description}, shared by the session: do not change it in place."
    return fixture


wine = _bundled_dataset("wine", "R's ``ordinal::wine`` (72 rows)")
housing = _bundled_dataset("housing", "MASS's ``housing`` (72 rows, frequency weights ``Freq``)")
soup = _bundled_dataset("soup", "R's ``ordinal::soup``")


@pytest.fixture(scope="module")
def wine_res(wine: pd.DataFrame) -> ordstats.OrdinalResults:
    """``rating ~ temp + contact`` on ``wine``; one fit per test module."""
    return ordstats.OrdinalModel.from_formula("rating ~ temp + contact", wine).fit()


@pytest.fixture(scope="module")
def housing_res(housing: pd.DataFrame) -> ordstats.OrdinalResults:
    """``Sat ~ Infl + Type + Cont`` on ``housing`` weighted by ``Freq``; one fit per module."""
    return ordstats.OrdinalModel.from_formula(
        "Sat ~ Infl + Type + Cont", housing, weights="Freq"
    ).fit()


# -- random likelihood problems --------------------------------------------------


def _random_clm_data(
    rng: np.random.Generator,
    *,
    n: int,
    n_levels: int,
    link: object,
    jacobian: np.ndarray,
    X: np.ndarray | None = None,
    offset: bool = True,
    nominal: int = 0,
    scale: int = 0,
    scale_sd: float = 0.5,
) -> CLMData:
    """Random arrays of a likelihood problem, drawn from ``rng`` in a fixed order.

    Every level occurs (the first ``n_levels`` rows); then, unless ``X`` is given,
    two standard normal covariates; weights in (0.5, 2); an offset with sd 0.3
    (zeros when ``offset=False``); ``nominal`` standard normal nominal columns
    and ``scale`` scale columns with sd ``scale_sd``.
    """
    y = rng.integers(0, n_levels, size=n)
    y[:n_levels] = np.arange(n_levels)
    return CLMData(
        y=y.astype(np.intp),
        n_levels=n_levels,
        X=rng.normal(size=(n, 2)) if X is None else X,
        weights=rng.uniform(0.5, 2.0, size=n),
        offset=rng.normal(scale=0.3, size=n) if offset else np.zeros(n),
        link=link,
        threshold_jacobian=jacobian,
        nominal=rng.normal(size=(n, nominal)) if nominal else np.empty((0, 0)),
        scale=rng.normal(scale=scale_sd, size=(n, scale)) if scale else np.empty((0, 0)),
    )


@pytest.fixture(scope="session")
def random_clm_data() -> Callable[..., CLMData]:
    """Builder ``(rng, *, n, n_levels, link, jacobian, ...) -> CLMData`` of random arrays."""
    return _random_clm_data


def _cumulative_problem(
    seed: int,
    link: str,
    structure: str = "flexible",
    *,
    n_levels: int = 4,
    nominal: int = 0,
    scale: int = 0,
    n: int = 60,
):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    data = _random_clm_data(
        rng,
        n=n,
        n_levels=n_levels,
        link=get_link(link),
        jacobian=threshold_jacobian(structure, n_levels - 1),
        X=X,
        nominal=nominal,
        scale=scale,
    )
    problem = prepare(data)
    lay = problem.layout
    params = rng.normal(scale=0.3, size=lay.n_params)
    theta = np.linspace(-1.5, 1.5, n_levels - 1)
    params[lay.alpha] = np.linalg.lstsq(data.threshold_jacobian, theta, rcond=None)[0]
    params[lay.nominal] *= 0.1  # keep theta_j(w) ordered for every row
    if lay.n_lambda:
        low, high = (0.2, 2.5) if link == "aranda-ordaz" else (-1.5, 1.5)
        params[lay.lam] = rng.uniform(low, high)
    return problem, params


@pytest.fixture(scope="session")
def cumulative_problem() -> Callable[..., tuple]:
    """Builder ``(seed, link, structure="flexible", *, n_levels=4, nominal=0, scale=0, n=60)``
    of a random cumulative link problem and parameters with ordered cut-points:
    returns ``(problem, params)``."""
    return _cumulative_problem


def _step_problem(
    seed: int,
    family: str,
    link: str,
    reverse: bool,
    *,
    nominal: int = 0,
    n_levels: int = 4,
    n: int = 50,
):
    rng = np.random.default_rng(seed)
    fam = get_family(family, link=link, reverse=reverse)
    data = _random_clm_data(
        rng,
        n=n,
        n_levels=n_levels,
        link=fam.link,
        jacobian=np.eye(n_levels - 1),
        nominal=nominal,
    )
    problem = fam.prepare(data)
    params = rng.normal(scale=0.4, size=problem.layout.n_params)
    return fam, problem, params


@pytest.fixture(scope="session")
def step_problem() -> Callable[..., tuple]:
    """Builder ``(seed, family, link, reverse, *, nominal=0, n_levels=4, n=50)`` of a
    random sequential or adjacent-category problem: returns ``(family, problem, params)``."""
    return _step_problem
