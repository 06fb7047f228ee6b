"""Finite-difference checks of the Bayesian targets' derivatives (shared by tests/bayes/)."""

from __future__ import annotations

from typing import Any

import numpy as np


def fd_gradient(f: Any, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of a scalar function."""
    return np.array([(f(x + e) - f(x - e)) / (2 * h) for e in np.eye(x.size) * h])


def assert_target_derivatives(target: Any, x: np.ndarray) -> None:
    """The negative log posterior's gradient and Hessian at ``x`` against differences."""
    ev = target.negative_log_posterior(x)
    grad = fd_gradient(lambda v: target.negative_log_posterior(v).nll, x)
    np.testing.assert_allclose(ev.gradient, grad, atol=1e-6)
    hess = np.array(
        [
            fd_gradient(lambda v, j=j: target.negative_log_posterior(v).gradient[j], x)
            for j in range(x.size)
        ]
    )
    np.testing.assert_allclose(ev.hessian, hess, atol=1e-5)
