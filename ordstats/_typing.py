"""Short type aliases shared across ordstats."""

from __future__ import annotations

from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

LinkName = Literal["logit", "probit", "cloglog", "loglog", "cauchit"]
ThresholdName = Literal["flexible", "equidistant", "symmetric", "symmetric2"]
MissingAction = Literal["drop", "raise"]
CollinearAction = Literal["drop", "raise", "keep"]
PredictWhich = Literal["prob", "cumprob", "class", "expected", "linear", "observed"]
