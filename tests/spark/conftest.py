"""One local Spark session for every Spark test of the run.

``local[2]``, the Spark UI off, two shuffle partitions, 1 GB for the driver: a
session costs about 10 s to start, so the tests share one, started by the first
test that needs it and stopped when the run ends.  A test that stops it (the
stopped-session test) gets a fresh one for any test after it.

Without pyspark or without a Java runtime the Spark tests are skipped, with the
reason and what to install (``.ci/run`` installs Debian's
``default-jre-headless`` where ``java`` is missing, so CI runs them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _start_session():
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'ordstats[spark]'")
    from ordstats.data.spark import java_runtime, local_session

    if java_runtime() is None:
        pytest.skip(
            "no Java runtime for Spark: install one (Debian/Ubuntu: apt-get install "
            "default-jre-headless) or set JAVA_HOME"
        )
    # the Python workers import this checkout of ordstats
    path = os.environ.get("PYTHONPATH", "")
    if str(REPO) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), path) if p)
    return local_session(cores=2, memory="1g", name="ordstats-tests")


def _is_stopped(session) -> bool:
    return session.sparkContext._jsc is None


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Callable[[], object]]:
    """A function returning the run's live Spark session (started on first use)."""
    holder: list[object] = []

    def live():
        if not holder or _is_stopped(holder[0]):
            holder[:] = [_start_session()]
        return holder[0]

    yield live
    if holder and not _is_stopped(holder[0]):
        holder[0].stop()


@pytest.fixture
def spark(spark_session):
    """The run's live Spark session."""
    return spark_session()
