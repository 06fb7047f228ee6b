"""The vendored R data sets and reference cases of tests/r/parity_sweep.R."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import ordstats

HERE = Path(__file__).parent
PARITY = HERE / "data" / "reference" / "parity"
R_DATASETS = HERE / "data" / "r_datasets"


@cache
def _dataset(name: str) -> pd.DataFrame:
    if name == "soup":
        return ordstats.datasets.load("soup")
    meta = json.loads((R_DATASETS / f"{name}.levels.json").read_text())
    factors = {**meta["ordered"], **meta["factors"]}
    # as R's read.csv: only NA is missing (pandas would also read the level "None" as NaN)
    path = R_DATASETS / f"{name}.csv"
    if not path.exists():  # the larger data sets are vendored gzip-compressed
        path = R_DATASETS / f"{name}.csv.gz"
    frame = pd.read_csv(
        path,
        dtype={c: str for c in factors},
        keep_default_na=False,
        na_values=["NA"],
    )
    for col, order in meta["ordered"].items():
        frame[col] = pd.Categorical(frame[col], categories=order, ordered=True)
    for col, order in meta["factors"].items():
        frame[col] = pd.Categorical(frame[col], categories=order)
    return frame


def dataset(name: str) -> pd.DataFrame:
    """A vendored R data set with R's level orders (a fresh copy)."""
    return _dataset(name).copy()


@cache
def load(case: str) -> dict[str, Any]:
    with open(PARITY / f"{case}.json") as handle:
        return json.load(handle, parse_constant=float)


def assert_slices_match(res: Any, positions: list[int], r_slices: list[dict]) -> None:
    """``res.slice(positions, lambda_=2, grid=5)`` against R's ``slice()`` of those parameters."""
    table = res.slice(positions, lambda_=2, grid=5)
    for position, r in zip(positions, r_slices, strict=True):
        rows = table[table["parameter"] == res.params.index[position]]
        np.testing.assert_allclose(rows["value"], r["value"], rtol=1e-9)
        np.testing.assert_allclose(rows["logLik"], r["logLik"], atol=1e-6)
