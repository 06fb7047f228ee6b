"""The Newton solver on problems with known answers."""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np
import pytest
from scipy import special

from ordstats.core.solver import NewtonOptions, newton
from ordstats.errors import OrdstatsError


class Quadratic:
    """f(x) = 1/2 (x - c)' A (x - c)."""

    A = np.array([[4.0, 1.0], [1.0, 3.0]])
    c = np.array([1.0, -2.0])

    def __init__(self, x):
        d = x - self.c
        self.nll = 0.5 * d @ self.A @ d
        self.gradient = self.A @ d
        self.hessian = self.A


class Rosenbrock:
    def __init__(self, x):
        a, b = x
        self.nll = (1 - a) ** 2 + 100 * (b - a * a) ** 2
        self.gradient = np.array([-2 * (1 - a) - 400 * a * (b - a * a), 200 * (b - a * a)])
        self.hessian = np.array([[2 - 400 * b + 1200 * a * a, -400 * a], [-400 * a, 200.0]])


class Unbounded:
    """f(x) = log(1 + exp(-x)): decreasing for ever, gradient -> 0."""

    def __init__(self, x):
        self.nll = float(np.logaddexp(0, -x[0]))
        p = 1 / (1 + np.exp(x[0]))
        self.gradient = np.array([-p])
        self.hessian = np.array([[p * (1 - p)]])


class Hyperbola:
    """f(x) = sqrt(1 + x^2): the full Newton step x (1 + x^2) overshoots far from 0."""

    def __init__(self, x):
        r = np.sqrt(1 + x[0] ** 2)
        self.nll = float(r)
        self.gradient = np.array([x[0] / r])
        self.hessian = np.array([[r**-3]])


def test_quadratic_converges_in_one_step():
    res = newton(Quadratic, np.zeros(2))
    np.testing.assert_allclose(res.x, Quadratic.c, atol=1e-12)
    assert res.converged and res.n_iter == 1 and res.code == 0


def test_rosenbrock_needs_halving_and_hessian_modification():
    res = newton(Rosenbrock, np.array([-1.2, 1.0]))
    assert res.converged
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-8)
    assert res.n_halvings > 0
    # the objective never increased along the way
    values = [t[1] for t in res.trace]
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(values))


def test_non_positive_definite_start_is_modified():
    # at (0, 1) the Rosenbrock Hessian has a negative eigenvalue
    assert np.linalg.eigvalsh(Rosenbrock(np.array([0.0, 1.0])).hessian)[0] < 0
    res = newton(Rosenbrock, np.array([0.0, 1.0]))
    assert res.converged


def test_unbounded_minimum_reports_code_1():
    res = newton(Unbounded, np.array([0.0]))
    assert not res.converged
    assert res.code == 1
    assert "unbounded" in res.message


def test_iteration_limit():
    res = newton(Rosenbrock, np.array([-1.2, 1.0]), NewtonOptions(max_iter=2))
    assert res.code == 2 and not res.converged
    assert res.n_iter == 2


def test_callback_sees_every_iteration():
    seen = []
    newton(Quadratic, np.zeros(2), callback=lambda i, f, g: seen.append((i, f, g)))
    assert [s[0] for s in seen] == [0, 1]
    assert seen[-1][2] < 1e-10


def test_non_finite_start():
    class Bad(Quadratic):
        def __init__(self, x):
            super().__init__(x)
            self.nll = np.inf

    with pytest.raises(OrdstatsError, match="not finite at the starting values"):
        newton(Bad, np.zeros(2))


# -- an approximate Hessian for the first step -----------------------------------


class CountingRosenbrock(Rosenbrock):
    """Rosenbrock that counts the points where its Hessian was read."""

    reads: ClassVar[list[np.ndarray]] = []

    @property
    def hessian(self):
        CountingRosenbrock.reads.append(self.point.copy())
        return self._hessian

    @hessian.setter
    def hessian(self, value):
        self._hessian = value

    def __init__(self, x):
        self.point = np.asarray(x, dtype=float)
        super().__init__(x)


def test_initial_hessian_replaces_the_hessian_at_the_start_only():
    start = np.array([0.9, 0.8])
    exact = newton(Rosenbrock, start)
    CountingRosenbrock.reads = []
    approximate = Rosenbrock(start).hessian * 1.05  # 5% off, positive definite
    res = newton(CountingRosenbrock, start, initial_hessian=approximate)
    assert res.converged
    np.testing.assert_allclose(res.x, exact.x, atol=1e-6)  # both within grad_tol of (1, 1)
    assert not any(np.array_equal(p, start) for p in CountingRosenbrock.reads)
    # the first step is the quasi-Newton step from the approximation
    step = np.linalg.solve(approximate, Rosenbrock(start).gradient)
    first_step = newton(Rosenbrock, start, NewtonOptions(max_iter=1), initial_hessian=approximate)
    np.testing.assert_allclose(first_step.x, start - step, rtol=1e-12)


def test_initial_hessian_is_not_used_for_convergence_or_when_indefinite():
    CountingRosenbrock.reads = []
    at_optimum = np.array([1.0, 1.0])
    res = newton(CountingRosenbrock, at_optimum, initial_hessian=-np.eye(2))
    assert res.converged and res.n_iter == 0  # decided on the objective's own Hessian
    assert any(np.array_equal(p, at_optimum) for p in CountingRosenbrock.reads)
    CountingRosenbrock.reads = []
    start = np.array([0.9, 0.8])
    res = newton(CountingRosenbrock, start, initial_hessian=-np.eye(2))  # not PD: exact used
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-6)
    np.testing.assert_array_equal(CountingRosenbrock.reads[0], start)


class CountingSmooth:
    """f(x) = sum(exp(x) - 2 x) + x'Ax / 2: convex, well conditioned; counts Hessian reads."""

    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    reads: ClassVar[list[np.ndarray]] = []

    def __init__(self, x):
        self.point = np.asarray(x, dtype=float)
        self.nll = float(np.sum(np.exp(x) - 2 * x) + 0.5 * x @ self.A @ x)
        self.gradient = np.exp(x) - 2 + self.A @ x

    @property
    def hessian(self):
        CountingSmooth.reads.append(self.point.copy())
        return np.diag(np.exp(self.point)) + self.A


def test_without_the_final_hessian_convergence_is_judged_with_the_previous_one():
    # from here the last Newton step (~1e-10) is below _POLISH of rel_tol: not taken
    start = np.array([1.0, -0.5])
    CountingSmooth.reads = []
    exact = newton(CountingSmooth, start)
    assert any(np.array_equal(p, exact.x) for p in CountingSmooth.reads)
    CountingSmooth.reads = []
    res = newton(CountingSmooth, start, NewtonOptions(final_hessian=False))
    assert res.converged and res.code == 0 and res.n_iter == exact.n_iter
    np.testing.assert_array_equal(res.x, exact.x)
    # the Hessian was read at every iterate but the last
    assert not any(np.array_equal(p, res.x) for p in CountingSmooth.reads)
    assert len({tuple(p) for p in CountingSmooth.reads}) == res.n_iter


class SteepSmooth(CountingSmooth):
    """1000 times :class:`CountingSmooth`: the same Newton steps, gradients 1000 times larger."""

    def __init__(self, x):
        super().__init__(x)
        self.nll *= 1000.0
        self.gradient = 1000.0 * self.gradient

    @property
    def hessian(self):
        return 1000.0 * super().hessian


def test_a_step_near_the_tolerance_reuses_the_last_steps_hessian():
    # the steps shrink 5e-4 -> 2.6e-8 (below SMALL_MOVE = 1e-3) and max|g| is then
    # 2.6e-5, between grad_tol and grad_tol / SMALL_MOVE: a chord step from there
    CountingSmooth.reads = []
    res = newton(SteepSmooth, np.array([1.5, -1.0]))
    assert res.converged and res.code == 0
    points = {tuple(p) for p in CountingSmooth.reads}
    assert len(points) == res.n_iter  # one iterate of n_iter + 1 without its Hessian
    assert tuple(res.x) in points  # convergence is judged with the Hessian at the estimate
    assert np.max(np.abs(SteepSmooth(res.x).gradient)) < 1e-6
    CountingSmooth.reads = []
    exact = newton(CountingSmooth, np.array([1.5, -1.0]), NewtonOptions(grad_tol=1e-9))
    np.testing.assert_allclose(res.x, exact.x, rtol=1e-12)


def test_without_the_final_hessian_a_chord_step_is_judged_with_the_hessian_it_used():
    # the chord step from the iterate with max|g| = 2.6e-5 used the Hessian of the
    # step before; the point it reaches is judged with that Hessian, not its own
    CountingSmooth.reads = []
    exact = newton(SteepSmooth, np.array([1.5, -1.0]))
    CountingSmooth.reads = []
    res = newton(SteepSmooth, np.array([1.5, -1.0]), NewtonOptions(final_hessian=False))
    assert res.converged and res.code == 0 and res.n_iter == exact.n_iter
    np.testing.assert_array_equal(res.x, exact.x)
    points = {tuple(p) for p in CountingSmooth.reads}
    assert len(points) == res.n_iter - 1 and tuple(res.x) not in points


def test_without_the_final_hessian_a_large_or_uncertain_last_step_still_reads_it():
    """From one big step the last move is not small, and on Rosenbrock the previous
    Hessian cannot vouch for a step below rel_tol: the final Hessian decides."""
    CountingSmooth.reads = []
    quadratic = newton(Quadratic, np.zeros(2), NewtonOptions(final_hessian=False))
    assert quadratic.converged and quadratic.n_iter == 1  # one step of size ~2
    CountingRosenbrock.reads = []
    start = np.array([0.9, 0.8])
    res = newton(CountingRosenbrock, start, NewtonOptions(final_hessian=False))
    np.testing.assert_array_equal(res.x, newton(Rosenbrock, start).x)
    # read at every iterate, the last one judged included (the estimate is one
    # polishing step beyond it, _POLISH)
    assert len({tuple(p) for p in CountingRosenbrock.reads}) == res.n_iter + 1


def test_a_halved_step_after_the_gradient_criterion_is_followed_by_another():
    # |g| < 1 everywhere, so the gradient criterion holds from the start; the first
    # step needs two halvings: R (and ordstats before) stopped there at x = 2, code 1
    res = newton(Hyperbola, np.array([2.0]), NewtonOptions(grad_tol=1.0))
    assert res.converged and abs(res.x[0]) < 1e-6
    assert res.trace[1][1] < res.trace[0][1]


def test_two_halved_steps_in_a_row_after_the_gradient_criterion_stop_with_code_1():
    res = newton(Hyperbola, np.array([50.0]), NewtonOptions(grad_tol=1.0))
    assert res.code == 1 and res.n_iter == 1
    assert res.evaluation.nll < Hyperbola(np.array([50.0])).nll


class CountingEvaluations(CountingSmooth):
    """:class:`CountingSmooth` that records every point evaluated."""

    points: ClassVar[list[np.ndarray]] = []

    def __init__(self, x):
        super().__init__(x)
        CountingEvaluations.points.append(np.asarray(x, dtype=float).copy())


def test_decrement_tol_stops_before_the_newton_point_it_would_evaluate():
    start = np.array([1.5, -1.0])
    CountingEvaluations.points = []
    full = newton(CountingEvaluations, start)
    every = list(CountingEvaluations.points)
    CountingEvaluations.points = []
    early = newton(CountingEvaluations, start, NewtonOptions(decrement_tol=1e-6))
    assert early.converged and early.code == 0 and early.pending_step is not None
    # the same iterates, one evaluation fewer: the pending step leads to the next one
    assert len(CountingEvaluations.points) < len(every)
    for got, want in zip(CountingEvaluations.points, every, strict=False):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(early.x, CountingEvaluations.points[-1])
    following = every[len(CountingEvaluations.points)]
    np.testing.assert_array_equal(early.x - early.pending_step, following)
    g = early.evaluation.gradient
    assert 0.5 * g @ early.pending_step <= 1e-6
    # full.x is one more (polishing) step on, 1.1e-8 away (_POLISH)
    np.testing.assert_allclose(following, full.x, rtol=1e-7)
    assert full.pending_step is None


def test_decrement_tol_does_not_stop_where_the_objective_flattens_out():
    # log(1 + e^-x) decreases for ever: the predicted decrease vanishes, the steps do not
    res = newton(Unbounded, np.array([0.0]), NewtonOptions(decrement_tol=1e-6))
    assert res.code == 1 and res.pending_step is None


def test_the_step_that_meets_the_step_criterion_is_taken_when_not_negligible():
    """R stops without the Newton step that meets ``rel_tol``; here it is taken.

    From ``(1.5, -1)`` the steps shrink 1.9e-4 -> 1.1e-8: R's rule stopped 1.1e-8
    short of the minimum; with that step taken the estimates are the minimum's.
    """
    start = np.array([1.5, -1.0])
    res = newton(CountingSmooth, start)
    tight = newton(CountingSmooth, start, NewtonOptions(grad_tol=1e-14, rel_tol=1e-14))
    assert res.converged and res.n_iter == 4
    np.testing.assert_allclose(res.x, tight.x, rtol=1e-14, atol=1e-15)
    assert np.max(np.abs(res.evaluation.gradient)) < 1e-14


class FarFromItsMinimum:
    """f(x) = log(1 + e^-x) + log(1 + e^(x - 1)), minimum at 1/2.

    Far to the left ``f`` is linear to rounding: at ``x = -800`` its curvature
    ``e^x`` underflows to zero (a singular Hessian), at ``x = -300`` it is
    ``5e-131`` (positive definite, with a Newton step of ``2e130``).
    """

    def __init__(self, x):
        t = x[0]
        self.nll = float(np.logaddexp(0, -t) + np.logaddexp(0, t - 1))
        self.gradient = np.array([-special.expit(-t) + special.expit(t - 1)])
        curvature = special.expit(t) * special.expit(-t)
        curvature += special.expit(t - 1) * special.expit(1 - t)
        self.hessian = np.array([[curvature]])


@pytest.mark.parametrize("start", [-800.0, -300.0])
def test_a_start_where_the_objective_is_linear_to_rounding_reaches_the_minimum(start):
    """Offsets of +-1000 put every row of a logit fit in a tail, where the objective
    is linear to rounding.  With a singular Hessian the modified steps moved one unit
    each and the fit stopped with code 4; with a tiny positive one the Newton step
    (2e130) failed every halving (code 3).  Modified steps are now doubled while they
    decrease the objective, and a failed Newton step is retried modified."""
    result = newton(FarFromItsMinimum, np.array([start]))
    assert result.code == 0
    assert result.x[0] == pytest.approx(0.5, abs=1e-8)
