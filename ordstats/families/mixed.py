r"""Cumulative link mixed models (R's ``clmm``): the Laplace and adaptive quadrature objectives.

Model (Christensen 2019; ``ordinal::clmm``): with spherical random effects ``u ~ N(0, I)``,
relative covariance factors ``Lambda = blockdiag_t(I_{L_t} (x) L_t)`` (``L_t`` lower
triangular, ``Sigma_t = L_t L_t'``) and random-effects design ``Z``,

.. math::

    P(Y_i \le j \mid u) = F(\theta_j - x_i^\top\beta - o_i - a_i^\top u), \qquad
    A = Z\Lambda. \tag{1}

The conditional log-density ``h(u) = sum_i w_i log P_i(u) - u'u/2`` is maximised by Newton
(the *conditional modes* ``u^``) with gradient and negative Hessian

.. math::

    \nabla h = A^\top (w \circ d_1) - u, \qquad
    H = A^\top \operatorname{diag}(-w \circ d_2) A + I, \tag{2}

``d_1, d_2`` the per-row first and second derivatives of ``log P`` in ``eta``
(:func:`ordstats.families.cumulative.likelihood.row_derivatives`).  ``H`` is block diagonal
(``q x q`` blocks per level) for one grouping factor and sparse for several.  The Laplace
approximation of the marginal log-likelihood is

.. math::

    \ell_{LA} = h(\hat u) - \tfrac12 \log |H(\hat u)|. \tag{3}

For a single scalar random intercept the adaptive Gauss-Hermite rule with ``K`` nodes
``x_k``, weights ``w_k`` (clmm's ``nAGQ``) sums per group ``l`` with ``D_l = H_ll``:

.. math::

    \ell_{AGQ} = \sum_l \log\Big[\sqrt{2/D_l}\sum_k w_k e^{x_k^2}
        \exp\{h_l(\hat u_l + \sqrt{2/D_l}\,x_k)\}\Big] - \tfrac{L}{2}\log 2\pi, \tag{4}

which equals (3) for ``K = 1``.  The variance parameters are log-Cholesky: per term the
logs of ``diag(L_t)`` followed by its strictly lower entries (column-major), so a scalar
term's parameter is ``log(sigma)`` (R's ``ST1``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.linalg import lapack
from scipy.special import logsumexp

from ordstats._typing import FloatArray, IntArray
from ordstats.core.cached import cached_property
from ordstats.core.links import Link
from ordstats.families.cumulative.likelihood import (
    IntervalDerivatives,
    log_interval_probabilities,
    row_derivatives,
)

__all__ = [
    "BOUNDARY_SD",
    "MAX_DENSE_RANDOM_EFFECTS",
    "MarginalIntegrals",
    "MixedObjective",
    "MixedProblem",
    "Modes",
    "TermArrays",
    "agq_gradient",
    "cholesky_derivatives",
    "cholesky_factors",
    "laplace_gradient",
    "laplace_gradient_general",
    "marginal_cumulative",
    "marginal_integrals",
    "mode_sensitivities",
    "n_variance_params",
]

#: variance parameters with ``exp(log sd) < BOUNDARY_SD`` are held on the boundary
BOUNDARY_SD = 1e-4


@dataclass(frozen=True, eq=False)
class TermArrays:
    """The arrays of one random term: ``X_t`` (n, q), level codes (n,), number of levels."""

    matrix: FloatArray
    codes: IntArray
    n_levels: int

    @property
    def q(self) -> int:
        """Random effects per level."""
        return int(self.matrix.shape[1])


@dataclass(frozen=True, eq=False)
class MixedProblem:
    """Everything the mixed objective reads.

    Attributes
    ----------
    link : Link
    y : ndarray of int, shape (n,)
        Response codes ``0 .. K-1``.
    X : ndarray, shape (n, p)
        Fixed-effects design (no intercept).
    offset, weights : ndarray, shape (n,)
    jacobian : ndarray, shape (K - 1, n_alpha)
        ``theta = J alpha`` (threshold structure).
    terms : tuple of TermArrays
    """

    link: Link
    y: IntArray
    X: FloatArray
    offset: FloatArray
    weights: FloatArray
    jacobian: FloatArray
    terms: tuple[TermArrays, ...]
    offsets: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        starts = np.cumsum([0] + [t.n_levels * t.q for t in self.terms])
        object.__setattr__(self, "offsets", tuple(int(s) for s in starts))

    @property
    def n_alpha(self) -> int:
        """Threshold parameters."""
        return int(self.jacobian.shape[1])

    @property
    def n_beta(self) -> int:
        """Fixed effects."""
        return int(self.X.shape[1])

    @property
    def n_var(self) -> int:
        """Variance parameters (log-Cholesky)."""
        return n_variance_params([t.q for t in self.terms])

    @property
    def n_re(self) -> int:
        """Total number of random effects ``Q``."""
        return self.offsets[-1]

    def split(self, params: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``(alpha, beta, variance parameters)`` of a parameter vector."""
        a, b = self.n_alpha, self.n_alpha + self.n_beta
        return params[:a], params[a:b], params[b:]


def n_variance_params(qs: Sequence[int]) -> int:
    """Number of log-Cholesky parameters of terms with ``q_t`` columns: ``sum q(q+1)/2``."""
    return int(sum(q * (q + 1) // 2 for q in qs))


_MAX_SD = np.exp(50.0)
"""Cholesky factors with an entry this large (an SD of e^50) are outside the domain."""


def cholesky_factors(var_params: FloatArray, qs: Sequence[int]) -> list[FloatArray]:
    """Lower-triangular ``L_t`` from log-Cholesky parameters (module docstring).

    Parameters
    ----------
    var_params : ndarray
        Per term: ``log diag(L_t)`` then the strictly lower entries, column-major.
    qs : sequence of int

    Returns
    -------
    list of ndarray, shapes (q_t, q_t)
    """
    out, pos = [], 0
    for q in qs:
        L = np.diag(np.exp(var_params[pos : pos + q]))
        pos += q
        rows, cols = np.tril_indices(q, -1)
        order = np.lexsort((rows, cols))  # column-major
        n_off = rows.size
        L[rows[order], cols[order]] = var_params[pos : pos + n_off]
        pos += n_off
        out.append(L)
    return out


@dataclass(frozen=True)
class Modes:
    """Conditional modes and what the Laplace value needs at them.

    Attributes
    ----------
    u : ndarray, shape (Q,)
        Spherical modes ``u^`` (eq. 2).
    loglik_rows : float
        ``sum_i w_i log P_i(u^)``.
    logdet : float
        ``log |H(u^)|``.
    converged : bool
    """

    u: FloatArray
    loglik_rows: float
    logdet: float
    converged: bool
    diag_blocks: FloatArray | None = None
    hessian: sp.csc_array | None = None

    @property
    def laplace(self) -> float:
        """Eq. (3)."""
        return self.loglik_rows - 0.5 * float(self.u @ self.u) - 0.5 * self.logdet


class MixedObjective:
    """The negative Laplace / AGQ log-likelihood of a :class:`MixedProblem`.

    Keeps the last conditional modes to warm-start the next inner Newton.

    Parameters
    ----------
    problem : MixedProblem
    inner_tol : float
        Stop the inner Newton when ``max |grad h| < inner_tol``.
    """

    def __init__(self, problem: MixedProblem, inner_tol: float = 1e-10) -> None:
        self.problem = problem
        self.inner_tol = inner_tol
        self._u = np.zeros(problem.n_re)
        self.n_evaluations = 0

    # -- pieces -------------------------------------------------------------

    @cached_property
    def _first_term_indicator(self) -> sp.csr_array:
        """``(L, n)`` indicator of the first term's levels: row ``l`` marks its rows."""
        t = self.problem.terms[0]
        n = t.codes.shape[0]
        return sp.csr_array((np.ones(n), (t.codes, np.arange(n))), shape=(t.n_levels, n))

    def level_sums(self, values: FloatArray) -> FloatArray:
        """Sums of the rows of ``values`` (shape ``(n, p)``) per level of the first term."""
        return np.asarray(self._first_term_indicator @ values, dtype=float)

    def _scaled(self, factors: list[FloatArray]) -> list[FloatArray]:
        """Per term ``a_i = X_t[i] @ L_t`` (rows of ``A = Z Lambda``)."""
        return [t.matrix @ L for t, L in zip(self.problem.terms, factors, strict=True)]

    def _random_part(self, scaled: list[FloatArray], u: FloatArray) -> FloatArray:
        out = np.zeros(self.problem.y.shape[0])
        for t, a, off in zip(self.problem.terms, scaled, self.problem.offsets, strict=False):
            block = u[off : off + t.n_levels * t.q].reshape(t.n_levels, t.q)
            out += np.einsum("ij,ij->i", a, block[t.codes])
        return out

    def _sparse_A(self, scaled: list[FloatArray]) -> sp.csr_array:
        n = self.problem.y.shape[0]
        rows, cols, vals = [], [], []
        for t, a, off in zip(self.problem.terms, scaled, self.problem.offsets, strict=False):
            for c in range(t.q):
                rows.append(np.arange(n))
                cols.append(off + t.codes * t.q + c)
                vals.append(a[:, c])
        return sp.csr_array(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(n, self.problem.n_re),
        )

    def _row_terms(
        self, theta: FloatArray, eta: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        # a trial point far out (BFGS tries log sigma ~ 70) puts rows at P = 0: their
        # -inf log P and its inf - inf derivatives tell the caller the point is outside
        # the domain, without numpy's RuntimeWarnings leaking to the user
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            d = row_derivatives(self.problem.link, eta, self.problem.y, theta)
        return d.log_prob, d.gradient[:, 0], d.curvature.diag[:, 0]  # type: ignore[attr-defined]

    def _newton_pieces(
        self, scaled: list[FloatArray], u: FloatArray, d1: FloatArray, d2: FloatArray
    ) -> tuple[FloatArray, FloatArray | None, sp.csc_array | None]:
        """Gradient of ``h`` and ``H`` (dense blocks for one term, sparse otherwise)."""
        w = self.problem.weights
        terms = self.problem.terms
        if len(terms) == 1:
            t, a = terms[0], scaled[0]
            grad = np.column_stack(
                [np.bincount(t.codes, w * d1 * a[:, c], minlength=t.n_levels) for c in range(t.q)]
            )
            W = -w * d2
            H = np.zeros((t.n_levels, t.q, t.q))
            for c in range(t.q):
                for e in range(c + 1):
                    H[:, c, e] = np.bincount(t.codes, W * a[:, c] * a[:, e], minlength=t.n_levels)
                    H[:, e, c] = H[:, c, e]
            H += np.eye(t.q)
            return grad.ravel() - u, H, None
        A = self._sparse_A(scaled)
        sparse_grad = np.asarray(A.T @ (w * d1) - u, dtype=np.float64)
        H = (A.T @ sp.diags_array(-w * d2) @ A + sp.eye_array(self.problem.n_re)).tocsc()
        return sparse_grad, None, H

    # -- the objective ------------------------------------------------------

    def modes(self, params: FloatArray, u0: FloatArray | None = None) -> Modes:
        """Conditional modes by Newton with step halving (eq. 2).

        Parameters
        ----------
        params : ndarray
            ``(alpha, beta, variance parameters)``.
        u0 : ndarray, optional
            Start (default: the last modes).

        Returns
        -------
        Modes
        """
        p = self.problem
        alpha, beta, var = p.split(np.asarray(params, dtype=float))
        theta = p.jacobian @ alpha
        with np.errstate(over="ignore"):
            factors = cholesky_factors(var, [t.q for t in p.terms])
        if np.any(np.diff(theta) <= 0) or not all(np.all(np.abs(L) < _MAX_SD) for L in factors):
            # outside the domain; a line search's trial log-SD of ~700 overflowed exp()
            # and the singular Hessian of the NaN modes crashed the sparse solver
            return Modes(self._u.copy(), -np.inf, 0.0, False)
        scaled = self._scaled(factors)
        eta0 = p.X @ beta + p.offset
        u = (self._u if u0 is None else u0).copy()

        def value(uu: FloatArray) -> tuple[float, FloatArray, FloatArray, FloatArray]:
            lp, d1, d2 = self._row_terms(theta, eta0 + self._random_part(scaled, uu))
            return float(p.weights @ lp) - 0.5 * float(uu @ uu), lp, d1, d2

        h, lp, d1, d2 = value(u)
        converged = False
        for _ in range(100):
            grad, blocks, H = self._newton_pieces(scaled, u, d1, d2)
            if np.max(np.abs(grad), initial=0.0) < self.inner_tol:
                converged = True
                break
            step = self._solve(blocks, H, grad)
            for _half in range(30):
                h_new, lp_n, d1_n, d2_n = value(u + step)
                if h_new >= h - 1e-12 * abs(h):
                    break
                step = step / 2
            else:
                break
            u = u + step
            h, lp, d1, d2 = h_new, lp_n, d1_n, d2_n
        logdet = self._logdet(blocks, H)
        self._u = u
        self.n_evaluations += 1
        return Modes(u, float(p.weights @ lp), logdet, converged, blocks, H)

    @staticmethod
    def _solve(blocks: FloatArray | None, H: sp.csc_array | None, grad: FloatArray) -> FloatArray:
        """An ascent step ``H~^{-1} grad h``, ``H~`` the negative Hessian made positive definite.

        ``log P`` is not concave in ``eta`` for every link (cauchit's heavy tails), so away
        from the mode ``H`` (eq. 2) may be indefinite and its Newton step would go downhill.
        Dense blocks then get their eigenvalues replaced by ``max(|lambda|, 1)``
        (1 is the prior's own curvature); the sparse ``H`` gets ``mu I`` added, ``mu``
        doubling from 1, until its ``LDL'`` pivots are positive.  At the mode, where the
        Laplace value reads ``H``, it is positive definite and untouched.
        """
        if blocks is not None:
            q = blocks.shape[1]
            return np.asarray(
                np.linalg.solve(_positive_definite_blocks(blocks), grad.reshape(-1, q, 1)).ravel(),
                dtype=np.float64,
            )
        assert H is not None  # no blocks: the sparse Hessian
        shift = 0.0
        while True:
            shifted = H if shift == 0.0 else (H + shift * sp.eye_array(H.shape[0])).tocsc()
            lu = spla.splu(shifted, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
            if np.all(lu.U.diagonal() > 0) or shift > 1e12:
                return np.asarray(lu.solve(grad), dtype=np.float64)
            shift = max(2.0 * shift, 1.0)

    @staticmethod
    def _logdet(blocks: FloatArray | None, H: sp.csc_array | None) -> float:
        if blocks is not None:
            with np.errstate(invalid="ignore"):  # NaN blocks outside the domain: inf below
                sign, logdet = np.linalg.slogdet(blocks)
            return float(np.sum(logdet)) if np.all(sign > 0) else np.inf
        assert H is not None  # no blocks: the sparse Hessian
        lu = spla.splu(H, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        d = lu.U.diagonal()
        return float(np.sum(np.log(np.abs(d)))) if np.all(d > 0) else np.inf

    def value(self, params: FloatArray, nagq: int = 1) -> float:
        """Negative approximate marginal log-likelihood (eq. 3, or eq. 4 for ``nagq > 1``).

        Parameters
        ----------
        params : ndarray
        nagq : int
            Quadrature nodes (1 = Laplace).

        Returns
        -------
        float
            ``+inf`` where the thresholds are not increasing or ``H`` is not positive definite.
        """
        m = self.modes(params)
        if not np.isfinite(m.loglik_rows) or not np.isfinite(m.logdet):
            return np.inf
        if nagq <= 1:
            return -m.laplace
        return -self._agq(params, m, nagq)

    def _agq(self, params: FloatArray, m: Modes, nagq: int) -> float:
        """Eq. (4) for one scalar random-effects term."""
        p = self.problem
        t = p.terms[0]
        alpha, beta, var = p.split(np.asarray(params, dtype=float))
        theta = p.jacobian @ alpha
        a = (t.matrix @ cholesky_factors(var, [1])[0])[:, 0]
        eta0 = p.X @ beta + p.offset
        D = m.diag_blocks[:, 0, 0]  # type: ignore[index]
        nodes, weights = np.polynomial.hermite.hermgauss(nagq)
        scale = np.sqrt(2.0 / D)
        bounds = np.concatenate([[-np.inf], theta, [np.inf]])
        per_node = np.empty((t.n_levels, nagq))
        for k, (x, wk) in enumerate(zip(nodes, weights, strict=True)):
            uk = m.u + scale * x
            eta = eta0 + a * uk[t.codes]
            lp = log_interval_probabilities(p.link, bounds[p.y + 1] - eta, bounds[p.y] - eta)
            hk = np.bincount(t.codes, p.weights * lp, minlength=t.n_levels) - 0.5 * uk**2
            per_node[:, k] = np.log(wk) + x**2 + hk
        total = np.sum(np.log(scale) + logsumexp(per_node, axis=1))
        return float(total - 0.5 * t.n_levels * np.log(2 * np.pi))

    def conditional_covariances(self, params: FloatArray) -> list[FloatArray]:
        """Conditional covariances of ``b = Lambda u`` per term: shape ``(L_t, q_t, q_t)``.

        ``Var(b | y) ~ Lambda H^{-1} Lambda'`` at the modes (R's ``condVar``).
        """
        p = self.problem
        m = self.modes(params)
        factors = cholesky_factors(
            p.split(np.asarray(params, dtype=float))[2], [t.q for t in p.terms]
        )
        out = []
        if m.diag_blocks is not None:
            inv = np.linalg.inv(m.diag_blocks)
            L = factors[0]
            return [L @ inv @ L.T]
        assert m.hessian is not None  # no blocks: the sparse Hessian
        lu = spla.splu(m.hessian, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        for t, L, off in zip(p.terms, factors, p.offsets, strict=False):
            blocks = np.empty((t.n_levels, t.q, t.q))
            chunk = max(1, 2000 // t.q)
            for start in range(0, t.n_levels, chunk):
                stop = min(t.n_levels, start + chunk)
                cols = np.arange(off + start * t.q, off + stop * t.q)
                E = np.zeros((p.n_re, cols.size))
                E[cols, np.arange(cols.size)] = 1.0
                S = lu.solve(E)[cols].reshape(stop - start, t.q, stop - start, t.q)
                idx = np.arange(stop - start)
                blocks[start:stop] = S[idx, :, idx, :]
            out.append(L @ blocks @ L.T)
        return out

    def random_part(self, params: FloatArray) -> FloatArray:
        """``z_i' b^`` per row: the random part of ``eta`` at the conditional modes."""
        p = self.problem
        m = self.modes(params)
        var = p.split(np.asarray(params, dtype=float))[2]
        return self._random_part(self._scaled(cholesky_factors(var, [t.q for t in p.terms])), m.u)

    def random_effects(self, params: FloatArray) -> list[FloatArray]:
        """Conditional modes on the scale of ``b`` per term: ``(L_t, q_t)`` arrays (``ranef``)."""
        p = self.problem
        m = self.modes(params)
        factors = cholesky_factors(
            p.split(np.asarray(params, dtype=float))[2], [t.q for t in p.terms]
        )
        out = []
        for t, L, off in zip(p.terms, factors, p.offsets, strict=False):
            u = m.u[off : off + t.n_levels * t.q].reshape(t.n_levels, t.q)
            out.append(u @ L.T)
        return out


#: The standard normal's mass beyond +-8.5 is 2e-17: the range of the marginal integral.
_NORMAL_RANGE = 8.5
#: Gauss-Legendre rule on each panel of the marginal integral (exact to degree 19).
_PANEL_NODES, _PANEL_WEIGHTS = np.polynomial.legendre.leggauss(10)


def marginal_cumulative(
    link: Link, cut: FloatArray, sd: FloatArray, max_values: int = 1 << 21
) -> FloatArray:
    r"""``P(Y <= j) = \int F(c - s z) \phi(z) dz`` at ``c = theta_j - eta_i`` and SDs ``s``.

    The random part of ``eta`` is normal with SD ``s_i``, so the population-averaged
    cumulative probability is this integral.  ``F(c - s z)`` changes from 1 to 0 around
    ``z_0 = c / s`` over a width ``1/s``, which a fixed Gauss-Hermite rule cannot resolve
    once ``s`` is large (40 nodes: errors of 1e-2 at ``s = 10``).  Here ``[-8.5, 8.5]`` is
    cut into panels at every unit and at ``z_0 -/+ 2^k / s`` (``k = 0, 1, ...``), which
    follow the step at its own scale and widen geometrically away from it (where the
    cauchit's tails decay algebraically), and each panel gets 10-point Gauss-Legendre.
    The error is below ``1e-12`` for ``s`` up to ``10^3`` and every standard link.

    Parameters
    ----------
    link : Link
    cut : ndarray, shape (n, k)
        ``theta_j - eta_i`` without the random part.
    sd : ndarray, shape (n,)
        SD of each row's random part (0 gives ``F(c)``).
    max_values : int
        Integrand values evaluated at once (memory).

    Returns
    -------
    ndarray, shape (n, k)
    """
    return marginal_integrals(link, cut, sd, order=0, max_values=max_values).value


class MarginalIntegrals(NamedTuple):
    """The marginal ``G(c, s) = int F(c - s z) phi(z) dz`` and its derivatives, shape (n, k).

    Derivatives not asked for (``order``) are None.
    """

    value: FloatArray
    d_cut: FloatArray | None = None
    d_sd: FloatArray | None = None
    d_cut_cut: FloatArray | None = None
    d_cut_sd: FloatArray | None = None
    d_sd_sd: FloatArray | None = None


def _density_slope(link: Link, x: FloatArray) -> FloatArray:
    """``f'(x) = f(x) (log f)'(x)``, 0 where the density underflows."""
    density = np.asarray(link.pdf(x), dtype=float)
    positive = density > 0
    with np.errstate(invalid="ignore", over="ignore"):
        slope = np.where(positive, link.dlog_pdf(np.where(positive, x, 0.0)), 0.0)
    return np.asarray(density * slope, dtype=float)


def marginal_integrals(
    link: Link,
    cut: FloatArray,
    sd: FloatArray,
    order: int = 1,
    max_values: int = 1 << 21,
    complement: bool = False,
) -> MarginalIntegrals:
    r"""The marginal ``P(Y <= j)`` and its derivatives in the cut-point and the SD.

    Differentiating :func:`marginal_cumulative` under the integral,

    .. math::

        G_c = \int f(c - s z)\,\phi(z)\,dz, \qquad
        G_s = -\int z\, f(c - s z)\,\phi(z)\,dz,

        G_{cc} = \int f'(c - s z)\,\phi\,dz, \quad
        G_{cs} = -\int z\, f'(c - s z)\,\phi\,dz, \quad
        G_{ss} = \int z^2 f'(c - s z)\,\phi\,dz,

    all by the panels of :func:`marginal_cumulative` (the density and its slope
    peak where ``F`` steps, at ``z_0 = c/s`` over a width ``1/s``).  At ``s = 0``
    they are ``F(c)``, ``f(c)``, ``0``, ``f'(c)``, ``0`` and ``f'(c)``.

    Parameters
    ----------
    link : Link
    cut : ndarray, shape (n, k)
    sd : ndarray, shape (n,)
    order : {0, 1, 2}
        Highest order of the derivatives computed.
    max_values : int
        Integrand values evaluated at once (memory).
    complement : bool
        ``value`` is ``1 - G`` instead, integrated from the survival function
        (no cancellation where ``G`` is near 1); the derivatives stay ``G``'s.

    Returns
    -------
    MarginalIntegrals
    """
    cut = np.asarray(cut, dtype=float)
    sd = np.broadcast_to(np.asarray(sd, dtype=float)[:, None], cut.shape).ravel()
    flat = cut.ravel()
    random = sd > 0
    first = link.sf if complement else link.cdf
    out = [np.asarray(first(flat), dtype=float).copy()]
    if order >= 1:
        out += [np.asarray(link.pdf(flat), dtype=float).copy(), np.zeros_like(flat)]
    if order >= 2:
        slope = _density_slope(link, flat)
        out += [slope, np.zeros_like(flat), slope.copy()]
    if random.any():
        for rows, z, weights in _marginal_panels(flat, sd, random, max_values):
            at = flat[rows][:, None, None] - sd[rows][:, None, None] * z
            out[0][rows] = np.einsum("rpk,rpk->r", first(at), weights)
            if order >= 1:
                density = np.asarray(link.pdf(at), dtype=float) * weights
                out[1][rows] = density.sum(axis=(1, 2))
                out[2][rows] = -np.einsum("rpk,rpk->r", density, z)
            if order >= 2:
                curve = _density_slope(link, at) * weights
                out[3][rows] = curve.sum(axis=(1, 2))
                out[4][rows] = -np.einsum("rpk,rpk->r", curve, z)
                out[5][rows] = np.einsum("rpk,rpk->r", curve, z * z)
    return MarginalIntegrals(*(a.reshape(cut.shape) for a in out))


def _marginal_panels(
    flat: FloatArray, sd: FloatArray, random: np.ndarray, max_values: int
) -> Iterator[tuple[IntArray, FloatArray, FloatArray]]:
    """Chunks of rows with their nodes ``z`` and weights (``phi(z)`` included): (r, p, k).

    The panels of :func:`marginal_cumulative`; the weights of a row sum to ``1 - 2e-17``.
    """
    largest = float(np.max(sd[random]))
    powers = 2.0 ** np.arange(int(np.ceil(np.log2(2 * _NORMAL_RANGE * max(largest, 1.0)))) + 1)
    offsets = np.concatenate([-powers[::-1], [0.0], powers])  # in units of 1/s
    grid = np.arange(-_NORMAL_RANGE, _NORMAL_RANGE + 0.5)
    grid[-1] = _NORMAL_RANGE
    n_breaks = offsets.size + grid.size
    chunk = max(1, max_values // (n_breaks * _PANEL_NODES.size))
    where = np.flatnonzero(random)
    for start in range(0, where.size, chunk):
        rows = where[start : start + chunk]
        c, s = flat[rows], sd[rows]
        around = np.clip(
            (c / s)[:, None] + offsets[None, :] / s[:, None], -_NORMAL_RANGE, _NORMAL_RANGE
        )
        breaks = np.sort(
            np.concatenate([around, np.broadcast_to(grid, (rows.size, grid.size))], axis=1), axis=1
        )
        half = 0.5 * np.diff(breaks, axis=1)
        z = (breaks[:, :-1] + half)[:, :, None] + half[:, :, None] * _PANEL_NODES
        weights = half[:, :, None] * _PANEL_WEIGHTS * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
        yield rows, z, weights


def _positive_definite_blocks(blocks: FloatArray) -> FloatArray:
    """``blocks`` (``(L, q, q)``, symmetric), each indefinite one's eigenvalues ``max(|l|, 1)``."""
    eigenvalues = np.linalg.eigvalsh(blocks)
    bad = eigenvalues[:, 0] <= 1e-8 * np.maximum(np.abs(eigenvalues[:, -1]), 1.0)
    if not bad.any():
        return blocks
    values, vectors = np.linalg.eigh(blocks[bad])
    values = np.maximum(np.abs(values), 1.0)
    out = blocks.copy()
    out[bad] = np.einsum("lij,lj,lkj->lik", vectors, values, vectors)
    return out


def _third_derivatives(
    link: Link,
    upper: FloatArray,
    lower: FloatArray,
    h: float = 1e-5,
    derivatives: IntervalDerivatives | None = None,
) -> tuple[FloatArray, FloatArray]:
    r"""``d c / dU`` and ``d c / dL`` of ``c = d^2 log P / d eta^2 = h_uu + 2 h_ul + h_ll``.

    ``U = theta_y - eta`` and ``L = theta_{y-1} - eta`` are the standardised
    bounds and ``h = log(F(U) - F(L))``.  With ``h_u = f(U)/P``, ``h_l = -f(L)/P``,
    ``g = (log f)'`` and ``k = (log f)''`` at each bound, ``h_uu = h_u g_U - h_u^2``,
    ``h_ul = -h_u h_l``, ``h_ll = h_l g_L - h_l^2``, so

    .. math::

        \frac{\partial c}{\partial U} = h_{uu} g_U + h_u k_U - 2 h_u h_{uu}
            - 2 (h_{uu} h_l + h_u h_{ul}) + h_{ul} g_L - 2 h_l h_{ul},

    and symmetrically for ``L``; the ``h`` terms come tail-safe from
    :func:`~ordstats.families.cumulative.likelihood.interval_derivatives`.  A link
    without ``d2log_pdf`` gets central differences of ``c`` (step ``h``).
    ``derivatives``: the bounds' :class:`IntervalDerivatives` if already computed.
    """
    from ordstats.families.cumulative.likelihood import interval_derivatives

    fin_u, fin_l = np.isfinite(upper), np.isfinite(lower)
    u, lo = np.where(fin_u, upper, 0.0), np.where(fin_l, lower, 0.0)
    k_u, k_l = link.d2log_pdf(u), link.d2log_pdf(lo)
    if k_u is None or k_l is None:

        def curv(uu: FloatArray, ll: FloatArray) -> FloatArray:
            d = interval_derivatives(link, uu, ll)
            return d.d2_upper + 2.0 * d.d2_cross + d.d2_lower

        t_u = np.where(fin_u, (curv(upper + h, lower) - curv(upper - h, lower)) / (2 * h), 0.0)
        t_l = np.where(fin_l, (curv(upper, lower + h) - curv(upper, lower - h)) / (2 * h), 0.0)
        return t_u, t_l
    d = derivatives if derivatives is not None else interval_derivatives(link, upper, lower)
    h_u, h_l, h_uu, h_ul, h_ll = d.d_upper, d.d_lower, d.d2_upper, d.d2_cross, d.d2_lower
    with np.errstate(invalid="ignore", over="ignore"):
        # a bound whose density underflowed contributes nothing (0 * inf is 0 here)
        g_u = np.where(h_u != 0.0, link.dlog_pdf(u), 0.0)
        g_l = np.where(h_l != 0.0, link.dlog_pdf(lo), 0.0)
        hk_u = np.where(h_u != 0.0, h_u * k_u, 0.0)
        hk_l = np.where(h_l != 0.0, h_l * k_l, 0.0)
        t_u = (
            h_uu * g_u
            + hk_u
            - 2.0 * h_u * h_uu
            - 2.0 * (h_uu * h_l + h_u * h_ul)
            + h_ul * g_l
            - 2.0 * h_l * h_ul
        )
        t_l = (
            h_ul * g_u
            - 2.0 * h_u * h_ul
            - 2.0 * (h_ul * h_l + h_u * h_ll)
            + h_ll * g_l
            + hk_l
            - 2.0 * h_l * h_ll
        )
    return np.where(fin_u, t_u, 0.0), np.where(fin_l, t_l, 0.0)


def laplace_gradient(objective: MixedObjective, params: FloatArray) -> tuple[float, FloatArray]:
    r"""Negative Laplace log-likelihood and its gradient for one scalar random term.

    With ``D_l = H_ll`` (eq. 2, scalar per level), ``a_i = sigma z_i``, the total derivative of
    eq. (3) in a parameter ``phi`` is

    .. math::

        \frac{d\ell}{d\phi} = \frac{\partial h}{\partial \phi}
            - \frac12 \sum_l \frac{1}{D_l}\frac{dD_l}{d\phi}, \qquad
        \frac{d\hat u_l}{d\phi} = \frac{1}{D_l}\frac{\partial g_l}{\partial \phi},

    (envelope theorem for ``h``; implicit function theorem for the modes), where
    ``dD_l/dphi`` needs the third derivatives of ``log P`` in ``eta`` and the cut-points
    (:func:`_third_derivatives`, central differences per row: the only numerical part).

    Parameters
    ----------
    objective : MixedObjective
        Of a problem with a single term with one column.
    params : ndarray

    Returns
    -------
    value : float
        As :meth:`MixedObjective.value` (``+inf`` outside the domain).
    gradient : ndarray
    """
    pieces = _scalar_sensitivities(objective, params)
    if pieces is None:
        return np.inf, np.zeros_like(np.asarray(params, dtype=float))
    # d log D_l / d phi summed over the levels: eq. (3)'s log-determinant
    dll = pieces.dh - 0.5 * np.sum(pieces.dD / pieces.D[:, None], axis=0)
    return -pieces.modes.laplace, -pieces.to_alpha(dll)


class _ScalarSensitivities(NamedTuple):
    """What the Laplace and AGQ gradients of one scalar term share (per level ``l``)."""

    modes: Modes
    jacobian: FloatArray
    k_theta: int
    D: FloatArray  # (L,) curvature of h at the modes
    dh: FloatArray  # (k,) partial derivatives of h at fixed modes
    du: FloatArray  # (L, k) d u^_l / d phi
    dD: FloatArray  # (L, k) d D_l / d phi

    def to_alpha(self, by_theta: FloatArray) -> FloatArray:
        """Map a gradient in ``(theta, beta, log sigma)`` to ``(alpha, beta, log sigma)``."""
        return np.concatenate(
            [self.jacobian.T @ by_theta[: self.k_theta], by_theta[self.k_theta :]]
        )


class _CutPoints:
    """Rows' upper and lower cut-points, and sums over them (per parameter or per level)."""

    def __init__(self, y: IntArray, k_theta: int, codes: IntArray, n_levels: int) -> None:
        self.k_theta, self.codes, self.n_levels = k_theta, codes, n_levels
        self.up, self.lo = np.flatnonzero(y < k_theta), np.flatnonzero(y > 0)
        self.cut_u, self.cut_l = y[self.up], y[self.lo] - 1

    def sums(self, on_upper: FloatArray, on_lower: FloatArray) -> FloatArray:
        """``sum_i c_i dtheta_{y_i} / dtheta_j`` over upper and lower cut-points."""
        k = self.k_theta
        upper_sums = np.bincount(self.cut_u, on_upper[self.up], minlength=k)
        return np.asarray(
            upper_sums + np.bincount(self.cut_l, on_lower[self.lo], minlength=k), float
        )

    def level_sums(self, on_upper: FloatArray, on_lower: FloatArray) -> FloatArray:
        """The same per level of the random term: shape ``(L, k_theta)``."""
        k, size = self.k_theta, self.n_levels * self.k_theta
        upper_index = self.codes[self.up] * k + self.cut_u
        lower_index = self.codes[self.lo] * k + self.cut_l
        upper_sums = np.bincount(upper_index, on_upper[self.up], minlength=size)
        lower_sums = np.bincount(lower_index, on_lower[self.lo], minlength=size)
        return np.asarray(upper_sums + lower_sums, float).reshape(self.n_levels, k)


def _scalar_sensitivities(
    objective: MixedObjective, params: FloatArray
) -> _ScalarSensitivities | None:
    r"""Modes, ``D_l`` and their derivatives in ``(theta, beta, log sigma)`` for one scalar term.

    ``d u^_l / d phi = (1/D_l) dg_l / dphi`` (implicit function theorem on
    ``g_l = sum_{i in l} a_i w_i d_1i - u_l = 0``) and ``D_l = 1 + sum_{i in l}
    a_i^2 W_i`` with ``dW_i/dphi = -w_i (t^u_i dtheta_{y_i} + t^l_i dtheta_{y_i-1}
    - (t^u_i + t^l_i) d eta_i / d phi)``, ``d eta_i / dphi`` total (through the
    modes too).  ``None`` outside the domain.
    """
    from ordstats.families.cumulative.likelihood import interval_derivatives

    p = objective.problem
    params = np.asarray(params, dtype=float)
    m = objective.modes(params)
    if not np.isfinite(m.loglik_rows) or not np.isfinite(m.logdet):
        return None
    t = p.terms[0]
    alpha, beta, var = p.split(params)
    theta = p.jacobian @ alpha
    a = float(np.exp(var[0])) * t.matrix[:, 0]  # d eta_i / d u_l for the row's level
    codes, n_levels, k_theta = t.codes, t.n_levels, theta.shape[0]
    b = a * m.u[codes]  # the random part of eta: its derivative in log(sigma) at fixed u
    eta = p.X @ beta + p.offset + b
    bounds = np.concatenate([[-np.inf], theta, [np.inf]])
    upper, lower = bounds[p.y + 1] - eta, bounds[p.y] - eta
    d = interval_derivatives(p.link, upper, lower)
    w = p.weights
    d1 = -(d.d_upper + d.d_lower)  # d log P / d eta
    d2 = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower  # d^2 log P / d eta^2
    D = m.diag_blocks[:, 0, 0]  # type: ignore[index]
    t_u, t_l = _third_derivatives(p.link, upper, lower, derivatives=d)
    cuts = _CutPoints(p.y, k_theta, codes, n_levels)
    wd1 = w * d1
    dh = np.concatenate([cuts.sums(w * d.d_upper, w * d.d_lower), p.X.T @ wd1, [wd1 @ b]])
    s = w * a
    dg = np.empty((n_levels, dh.size))
    dd1_du, dd1_dl = -(d.d2_upper + d.d2_cross), -(d.d2_cross + d.d2_lower)
    dg[:, :k_theta] = cuts.level_sums(s * dd1_du, s * dd1_dl)
    dg[:, k_theta:-1] = objective.level_sums((s * d2)[:, None] * p.X)
    dg[:, -1] = np.bincount(codes, s * (d2 * b + d1), minlength=n_levels)
    du = dg / D[:, None]
    qa = w * a**2
    qT = qa * (t_u + t_l)
    dD = np.empty_like(dg)
    dD[:, :k_theta] = -cuts.level_sums(qa * t_u, qa * t_l)
    dD[:, k_theta:-1] = objective.level_sums(qT[:, None] * p.X)
    dD[:, -1] = np.bincount(codes, qT * b - 2.0 * a**2 * w * d2, minlength=n_levels)
    dD += np.bincount(codes, qT * a, minlength=n_levels)[:, None] * du
    return _ScalarSensitivities(m, p.jacobian, k_theta, D, dh, du, dD)


def agq_gradient(
    objective: MixedObjective, params: FloatArray, nagq: int
) -> tuple[float, FloatArray]:
    r"""Negative adaptive Gauss-Hermite log-likelihood (eq. 4) and its gradient, one scalar term.

    With nodes ``x_k``, weights ``omega_k``, ``s_l = \sqrt{2 / D_l}`` and
    ``u_{lk} = u^_l + s_l x_k``, eq. (4) is ``sum_l [log s_l + log sum_k
    omega_k e^{x_k^2 + h_{lk}}] - (L/2) log 2 pi``, so with the node weights
    ``pi_{lk}`` (a softmax over ``k``)

    .. math::

        \frac{d\ell}{d\phi} = \sum_l \Big[-\frac{1}{2 D_l}\frac{dD_l}{d\phi}
            + \sum_k \pi_{lk} \Big(\frac{\partial h_{lk}}{\partial\phi}
            + g_{lk} \big(\frac{d\hat u_l}{d\phi} + x_k \frac{ds_l}{d\phi}\big)\Big)\Big],

    ``g_{lk} = dh_{lk}/du``; ``du^/dphi`` and ``dD/dphi`` as for the Laplace
    gradient (:func:`laplace_gradient`).

    Parameters
    ----------
    objective : MixedObjective
        Of a problem with a single term with one column.
    params : ndarray
    nagq : int
        Quadrature nodes.

    Returns
    -------
    value : float
        As :meth:`MixedObjective.value` with ``nagq`` (``+inf`` outside the domain).
    gradient : ndarray
    """
    from ordstats.families.cumulative.likelihood import interval_derivatives

    params = np.asarray(params, dtype=float)
    pieces = _scalar_sensitivities(objective, params)
    if pieces is None:
        return np.inf, np.zeros_like(params)
    p = objective.problem
    t = p.terms[0]
    alpha, beta, var = p.split(params)
    theta = p.jacobian @ alpha
    a = float(np.exp(var[0])) * t.matrix[:, 0]
    codes, n_levels, w = t.codes, t.n_levels, p.weights
    eta0 = p.X @ beta + p.offset
    bounds = np.concatenate([[-np.inf], theta, [np.inf]])
    scale = np.sqrt(2.0 / pieces.D)
    nodes, node_weights = np.polynomial.hermite.hermgauss(nagq)
    per_node = np.empty((n_levels, nagq))
    node_rows = []
    for k, (x, omega) in enumerate(zip(nodes, node_weights, strict=True)):
        u_k = pieces.modes.u + scale * x
        eta = eta0 + a * u_k[codes]
        d = interval_derivatives(p.link, bounds[p.y + 1] - eta, bounds[p.y] - eta)
        h_k = np.bincount(codes, w * d.log_prob, minlength=n_levels) - 0.5 * u_k**2
        per_node[:, k] = np.log(omega) + x**2 + h_k
        node_rows.append((u_k, d.d_upper, d.d_lower))
    log_total = logsumexp(per_node, axis=1)
    value = float(np.sum(np.log(scale) + log_total) - 0.5 * n_levels * np.log(2 * np.pi))
    weights = np.exp(per_node - log_total[:, None])  # pi_lk
    cuts = _CutPoints(p.y, pieces.k_theta, codes, n_levels)
    on_upper, on_lower, on_eta = np.zeros_like(eta0), np.zeros_like(eta0), np.zeros_like(eta0)
    on_sigma = 0.0
    g1, g2 = np.zeros(n_levels), np.zeros(n_levels)
    for k, (u_k, d_upper, d_lower) in enumerate(node_rows):
        pi_rows = weights[codes, k] * w
        d1 = -(d_upper + d_lower)
        on_upper += pi_rows * d_upper
        on_lower += pi_rows * d_lower
        on_eta += pi_rows * d1
        on_sigma += float(np.sum(pi_rows * d1 * a * u_k[codes]))
        g_k = np.bincount(codes, w * d1 * a, minlength=n_levels) - u_k
        g1 += weights[:, k] * g_k
        g2 += weights[:, k] * g_k * nodes[k]
    grad = np.concatenate([cuts.sums(on_upper, on_lower), p.X.T @ on_eta, [on_sigma]])
    ds = -0.5 * (scale / pieces.D)[:, None] * pieces.dD
    grad += g1 @ pieces.du + g2 @ ds - 0.5 * np.sum(pieces.dD / pieces.D[:, None], axis=0)
    return -value, -pieces.to_alpha(grad)


#: Largest number of random effects for which :func:`laplace_gradient_general` forms the
#: dense inverse of ``H`` (``Q^2`` doubles: 128 MB at 4,000).
MAX_DENSE_RANDOM_EFFECTS = 4000


def cholesky_derivatives(q: int, var_params: FloatArray) -> list[FloatArray]:
    """``dL / dv`` for each log-Cholesky parameter ``v`` of one ``q x q`` factor.

    A diagonal entry is ``exp(v)``, so its derivative is ``exp(v)`` at that
    position; a strictly lower entry is ``v`` itself (column-major order, as
    :func:`cholesky_factors`).

    Parameters
    ----------
    q : int
        Columns of the term.
    var_params : ndarray
        The term's log-Cholesky parameters.

    Returns
    -------
    list of ndarray, shapes (q, q)
        One per parameter, in the order of ``var_params``.
    """
    out = []
    for c in range(q):
        dL = np.zeros((q, q))
        dL[c, c] = np.exp(var_params[c])
        out.append(dL)
    rows, cols = np.tril_indices(q, -1)
    for k in np.lexsort((rows, cols)):
        dL = np.zeros((q, q))
        dL[rows[k], cols[k]] = 1.0
        out.append(dL)
    return out


def _spd_inverse(H: FloatArray) -> FloatArray:
    """Inverse of a symmetric positive definite matrix from its Cholesky factor (LAPACK potri)."""
    factor, info = lapack.dpotrf(H, lower=False)
    if info != 0:
        return np.asarray(np.linalg.inv(H), dtype=float)
    upper, info = lapack.dpotri(factor, lower=False)
    if info != 0:
        return np.asarray(np.linalg.inv(H), dtype=float)
    return np.asarray(np.triu(upper) + np.triu(upper, 1).T, dtype=float)


class _ModeEquation(NamedTuple):
    """The rows' pieces of the mode equation ``g = A'(w d_1) - u = 0`` at the modes.

    ``idx``/``val``: the non-zeros of each row of ``A`` (columns and values, (n, s));
    ``dval``: per variance parameter ``d a_i / d v`` on those non-zeros;
    ``deta_var``: ``d eta_i / d v`` at fixed ``u`` (n, n_var); ``d``: the rows'
    interval derivatives at the bounds ``upper``/``lower``; ``G``: ``partial g /
    partial phi`` (Q, k) in ``phi = (theta, beta, variance parameters)``.
    """

    idx: IntArray
    val: FloatArray
    dval: list[FloatArray]
    deta_var: FloatArray
    A: sp.csr_array
    d: IntervalDerivatives
    upper: FloatArray
    lower: FloatArray
    k_theta: int
    G: FloatArray


def _mode_equation(p: MixedProblem, params: FloatArray, u: FloatArray) -> _ModeEquation:
    """:class:`_ModeEquation` of ``p`` at ``params`` and modes ``u``."""
    from ordstats.families.cumulative.likelihood import interval_derivatives

    alpha, beta, var = p.split(params)
    theta = p.jacobian @ alpha
    k_theta, n_re, n = theta.shape[0], p.n_re, p.y.shape[0]
    qs = [t.q for t in p.terms]
    factors = cholesky_factors(var, qs)
    idx = np.column_stack(
        [
            off + t.codes[:, None] * t.q + np.arange(t.q)
            for t, off in zip(p.terms, p.offsets, strict=False)
        ]
    )
    val = np.column_stack([t.matrix @ L for t, L in zip(p.terms, factors, strict=True)])
    eta = p.X @ beta + p.offset + np.sum(val * u[idx], axis=1)
    bounds = np.concatenate([[-np.inf], theta, [np.inf]])
    upper, lower = bounds[p.y + 1] - eta, bounds[p.y] - eta
    d = interval_derivatives(p.link, upper, lower)
    w = p.weights
    wd1 = -w * (d.d_upper + d.d_lower)
    c2 = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower
    dd1_du, dd1_dl = -(d.d2_upper + d.d2_cross), -(d.d2_cross + d.d2_lower)
    s = idx.shape[1]
    A = sp.csr_array((val.ravel(), (np.repeat(np.arange(n), s), idx.ravel())), shape=(n, n_re))
    dval = []
    col0, pos = 0, 0
    for t, q in zip(p.terms, qs, strict=True):
        n_t = n_variance_params([q])
        for dL in cholesky_derivatives(q, var[pos : pos + n_t]):
            block = np.zeros((n, s))
            block[:, col0 : col0 + q] = t.matrix @ dL
            dval.append(block)
        col0, pos = col0 + q, pos + n_t
    deta_var = (
        np.column_stack([np.sum(dv * u[idx], axis=1) for dv in dval]) if dval else np.zeros((n, 0))
    )
    # partial g / partial phi, (Q, k)
    G = np.zeros((n_re, k_theta + p.n_beta + var.size))
    for a_col in range(s):
        # per random effect of this column of A: sums over its rows' cut-points
        cuts = _CutPoints(p.y, k_theta, idx[:, a_col], n_re)
        sw = val[:, a_col] * w
        G[:, :k_theta] += cuts.level_sums(sw * dd1_du, sw * dd1_dl)
    G[:, k_theta : k_theta + p.n_beta] = A.T @ ((w * c2)[:, None] * p.X)
    for j, dv in enumerate(dval):
        col = k_theta + p.n_beta + j
        G[:, col] = A.T @ (w * c2 * deta_var[:, j])
        for a_col in range(s):
            G[:, col] += np.bincount(idx[:, a_col], dv[:, a_col] * wd1, minlength=n_re)
    return _ModeEquation(idx, val, dval, deta_var, A, d, upper, lower, k_theta, G)


def mode_sensitivities(
    objective: MixedObjective, params: FloatArray
) -> tuple[FloatArray, FloatArray]:
    r"""The spherical conditional modes ``u^`` and their derivatives in the parameters.

    By the implicit function theorem on ``g(u, phi) = A'(w d_1) - u = 0``,
    ``du^/dphi = H^{-1} partial g / partial phi`` (``H`` of eq. 2 at the modes, positive
    definite there), as in :func:`laplace_gradient_general`, with ``H`` solved
    blockwise or by a sparse factorisation instead of inverted.

    Parameters
    ----------
    objective : MixedObjective
    params : ndarray
        ``(alpha, beta, variance parameters)``.

    Returns
    -------
    u : ndarray, shape (Q,)
    du : ndarray, shape (Q, len(params))
        Columns in the order of ``params``.
    """
    p = objective.problem
    params = np.asarray(params, dtype=float)
    m = objective.modes(params)
    G = _mode_equation(p, params, m.u).G
    if m.diag_blocks is not None:
        n_levels, q, _ = m.diag_blocks.shape
        solved = np.linalg.solve(m.diag_blocks, G.reshape(n_levels, q, -1)).reshape(G.shape)
    else:
        assert m.hessian is not None  # several terms: the sparse Hessian
        lu = spla.splu(m.hessian, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0)
        solved = np.asarray(lu.solve(G), dtype=float)
    k_theta = p.jacobian.shape[0]
    du = np.column_stack([solved[:, :k_theta] @ p.jacobian, solved[:, k_theta:]])
    return m.u.copy(), du


def laplace_gradient_general(
    objective: MixedObjective, params: FloatArray
) -> tuple[float, FloatArray]:
    r"""Negative Laplace log-likelihood and its gradient for any random terms.

    With ``A = Z Lambda(phi)`` (row ``a_i``), ``W = diag(-w_i c_i)`` (``c_i =
    d^2 log P_i / d eta_i^2``) and ``H = A' W A + I``, eq. (3) is
    ``l = h(u^) - 1/2 log|H|`` and

    .. math::

        \frac{dl}{d\phi} = \frac{\partial h}{\partial\phi}
          - \frac12 \Big[\sum_i \lambda_i \frac{dW_i}{d\phi}
          + 2 \sum_i W_i\, a_i' H^{-1} \frac{\partial a_i}{\partial\phi}\Big],
        \qquad \lambda_i = a_i' H^{-1} a_i,

    ``dW_i/dphi = -w_i (t^u_i d\theta_{y_i}/d\phi + t^l_i d\theta_{y_i - 1}/d\phi
    - (t^u_i + t^l_i)\, d\eta_i/d\phi)`` with the total ``d eta_i / d phi =
    partial eta_i / partial phi + a_i' du^/dphi`` and ``du^/dphi = H^{-1}
    partial g / partial phi`` (implicit function theorem on ``g = A'(w d_1) - u
    = 0``).  ``t^u, t^l`` are the third derivatives of ``log P`` (as in
    :func:`laplace_gradient`, which this equals for one scalar term).  ``H^{-1}``
    is formed densely, so the number of random effects must not exceed
    :data:`MAX_DENSE_RANDOM_EFFECTS`.

    Parameters
    ----------
    objective : MixedObjective
    params : ndarray

    Returns
    -------
    value : float
        As :meth:`MixedObjective.value` (``+inf`` outside the domain).
    gradient : ndarray
    """
    p = objective.problem
    params = np.asarray(params, dtype=float)
    m = objective.modes(params)
    if not np.isfinite(m.loglik_rows) or not np.isfinite(m.logdet):
        return np.inf, np.zeros_like(params)
    eq = _mode_equation(p, params, m.u)
    idx, val, dval, deta_var, A, d, G = eq.idx, eq.val, eq.dval, eq.deta_var, eq.A, eq.d, eq.G
    k_theta, n_re, n = eq.k_theta, p.n_re, p.y.shape[0]
    w = p.weights
    d1 = -(d.d_upper + d.d_lower)
    c2 = d.d2_upper + 2.0 * d.d2_cross + d.d2_lower
    t_u, t_l = _third_derivatives(p.link, eq.upper, eq.lower, derivatives=d)
    W = -w * c2
    # dense H and its inverse
    if m.diag_blocks is not None:
        H = sp.block_diag(list(m.diag_blocks), format="csr").toarray()
    else:
        assert m.hessian is not None  # several terms: the sparse Hessian
        H = m.hessian.toarray()
    H_inv = _spd_inverse(H)
    s = idx.shape[1]
    quad = np.zeros(n)  # lambda_i = a_i' H^{-1} a_i
    for a_col in range(s):
        for b_col in range(s):
            quad += val[:, a_col] * val[:, b_col] * H_inv[idx[:, a_col], idx[:, b_col]]
    # partial derivatives of h
    wd1 = w * d1
    cuts = _CutPoints(p.y, k_theta, idx[:, 0], n_re)
    dh = np.concatenate([cuts.sums(w * d.d_upper, w * d.d_lower), p.X.T @ wd1, deta_var.T @ wd1])
    dU = H_inv @ G
    # total d eta / d phi, then the log-determinant's derivative
    deta = np.asarray(A @ dU, dtype=float)
    deta[:, k_theta : k_theta + p.n_beta] += p.X
    deta[:, k_theta + p.n_beta :] += deta_var
    lw = quad * w
    logdet = np.asarray((lw * (t_u + t_l)) @ deta, dtype=float)
    logdet[:k_theta] -= cuts.sums(lw * t_u, lw * t_l)
    for j, dv in enumerate(dval):
        cross = np.zeros(n)  # a_i' H^{-1} (d a_i / d v)
        for a_col in range(s):
            for b_col in range(s):
                cross += val[:, a_col] * dv[:, b_col] * H_inv[idx[:, a_col], idx[:, b_col]]
        logdet[k_theta + p.n_beta + j] += 2.0 * float(W @ cross)
    dll = dh - 0.5 * logdet
    grad = np.concatenate([p.jacobian.T @ dll[:k_theta], dll[k_theta:]])
    return -m.laplace, -grad
