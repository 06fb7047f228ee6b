"""The suite on a busy machine: single-threaded, no clocks; the caller's settings come back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from threadpoolctl import threadpool_info

from tests.conftest import SINGLE_THREAD

REPO = Path(__file__).resolve().parents[1]


def test_the_tests_run_single_threaded():
    assert {name: os.environ.get(name) for name in SINGLE_THREAD} == SINGLE_THREAD
    assert all(pool["num_threads"] == 1 for pool in threadpool_info())


def test_pytest_main_gives_the_caller_its_thread_settings_back():
    # pytest.main() in a notebook or an IDE's process: the process goes on after the
    # tests, with the settings it had (the conftest once left them at one thread)
    script = """
import json, os, sys
import numpy as np
import pytest
from threadpoolctl import threadpool_info

names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
def state():
    return {"env": {n: os.environ.get(n) for n in names},
            "threads": sorted({p["num_threads"] for p in threadpool_info()})}
before = state()
code = pytest.main(["-q", "-p", "no:cacheprovider",
                    "tests/test_thread_settings.py::test_the_tests_run_single_threaded"])
print(json.dumps({"code": int(code), "before": before, "after": state()}))
"""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}
    env.pop("MKL_NUM_THREADS", None)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, env=env
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stdout  # single-threaded inside
    assert report["before"]["threads"] == [2]
    assert report["after"] == report["before"]


#: a clock read or a time limit in a test: on a busy machine it fails for no fault of the code
TIMING = re.compile(r"\b(perf_counter|monotonic|process_time)\s*\(|\btime\.time\s*\(|\btimeout\s*=")


def test_no_test_reads_a_clock_or_sets_a_timeout():
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        if path.name != Path(__file__).name
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TIMING.search(line)
    ]
    assert not found, "tests must not time anything (BRIEF, issue 29):\n" + "\n".join(found)
