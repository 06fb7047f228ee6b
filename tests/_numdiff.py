"""Finite differences for checking analytic derivatives in tests.

All helpers use central differences, whose truncation error is ``O(h^2)`` and
rounding error ``O(eps / h)``. The step sizes the tests use:

* ``h = 1e-6`` for first derivatives of a log-likelihood or of probabilities
  (gradients, prediction gradients): error around ``1e-9`` relative;
* ``h = 1e-5`` for a Hessian from differences of an analytic gradient, and for
  scores and Hessians differenced from the log-likelihood itself
  (:func:`second_difference_hessian`, error around ``1e-6`` absolute);
* ``h = 1e-5`` for the derivatives of a link's distribution function in ``x``
  and ``h = 1e-4`` for those in a flexible link's ``lambda``.

Each helper computes exactly the textbook formula (the step vector holds ``h``
in one coordinate and zeros elsewhere), so a test's numbers do not depend on
which helper it calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def central_derivative(fun: Callable[[float], Any], x: float, h: float) -> Any:
    """``(fun(x + h) - fun(x - h)) / (2 h)`` for a scalar argument."""
    return (fun(x + h) - fun(x - h)) / (2 * h)


def central_jacobian(fun: Callable[[np.ndarray], Any], x: np.ndarray, h: float) -> np.ndarray:
    """Central-difference derivative of ``fun`` in each coordinate of ``x``.

    ``result[..., k] = (fun(x + h e_k) - fun(x - h e_k)) / (2 h)``: the gradient
    (shape ``(n,)``) of a scalar function, the Jacobian (shape ``(m, n)``) of a
    vector one -- a Hessian when ``fun`` is a gradient -- and the derivative
    along the last axis of an array-valued one.
    """
    columns = []
    for k in range(x.size):
        step = np.zeros_like(x)
        step[k] = h
        columns.append((np.asarray(fun(x + step)) - np.asarray(fun(x - step))) / (2 * h))
    return np.stack(columns, axis=-1)


def second_difference_hessian(
    fun: Callable[[np.ndarray], float], x: np.ndarray, h: float
) -> np.ndarray:
    """Hessian of a scalar function from its values alone (four-point mixed differences).

    ``H[a, b] = (f(x + h e_a + h e_b) - f(x + h e_a - h e_b) - f(x - h e_a + h e_b)
    + f(x - h e_a - h e_b)) / (4 h^2)``.
    """
    steps = h * np.eye(x.size)
    return np.array(
        [
            [
                (fun(x + a + b) - fun(x + a - b) - fun(x - a + b) + fun(x - a - b)) / (4 * h * h)
                for b in steps
            ]
            for a in steps
        ]
    )
