r"""The exact Hessian of the Laplace log-likelihood of a logit clmm with one scalar random term.

The posterior mode of a clmm (:mod:`ordstats.estimation.bayes`) takes Newton steps, and
its proposal is the inverse Hessian there; central differences of the analytic gradient
(:func:`ordstats.families.mixed.laplace_gradient`) cost ``2k`` gradients per Hessian.
For the logit link with a single scalar term (``(1|g)``, ``(0 + z|g)``) and the Laplace
approximation the Hessian has a closed form, computed here with the value and gradient
in one pass over the rows.

**In the random effects' own scale.**  With ``b_l = sigma u_l`` (``tau = log sigma``,
``rho = e^{-2 tau}``) each level's conditional log-density is

.. math::

    k_l(b; \phi) = \sum_{i \in l} w_i \log P_i(U_i, L_i) - \tfrac12 \rho b^2, \qquad
    U_i = \theta_{y_i} - x_i^\top\beta - o_i - z_i b,\;
    L_i = \theta_{y_i - 1} - x_i^\top\beta - o_i - z_i b,

linear in ``(theta, beta, b)`` except for the prior term, and eq. (3) of
:mod:`ordstats.families.mixed` is ``sum_l [k_l(b^_l) - 1/2 log D_l - tau]`` with
``D_l = -d^2 k_l / db^2`` (the spherical ``H_ll`` is ``sigma^2 D_l``).

**Rank-one pieces.**  For the logit link ``log P = log F(U) + log S(L) + log(1 - e^{L-U})``
(``S = 1 - F``): three functions of one linear form each, with derivatives
``(log F)' = S``, ``(log S)' = -F`` and, for both, ``'' = -FS``, ``''' = -FS(S - F)``,
``'''' = -FS((S - F)^2 - 2FS)``; ``(log(1 - e^{-D}))' = r``, ``'' = -r(1 + r)``,
``r = 1 / (e^D - 1)``.  Every derivative of ``k_l`` is then a sum over the rows of a
piece's derivative times its direction (``g_U = dU / d(theta, beta)``, ``g_L``,
``g_U - g_L``) in each parameter index and ``-z`` in each ``b`` index; the width piece
does not move with ``b``.

**Totals.**  At the mode (``k_b = 0``) the implicit function theorem gives
``b_phi = k_{b phi} / D`` and, with ``D~(phi) = D(b^(phi), phi)``,

.. math::

    \frac{d^2 \hat k}{d\phi d\psi} = k_{\phi\psi} + D\, b_\phi b_\psi, \qquad
    dD~_\phi = D_\phi + D_b b_\phi,

    b_{\phi\psi} = (k_{b\phi\psi} - D_\phi b_\psi - D_\psi b_\phi - D_b b_\phi b_\psi) / D,

    d^2 D~_{\phi\psi} = D_{\phi\psi} + D_{b\phi} b_\psi + D_{b\psi} b_\phi
        + D_{bb} b_\phi b_\psi + D_b b_{\phi\psi},

and the Hessian of ``-1/2 log D~`` is ``-1/2 (d^2 D~ / D - dD~ dD~' / D^2)``.  Sums over
the levels of row terms become weighted Gram matrices of the rows' directions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ordstats._typing import FloatArray
from ordstats.core.links.standard import Logit
from ordstats.families.mixed import MixedObjective

__all__ = ["has_laplace_hessian", "laplace_hessian"]


def has_laplace_hessian(objective: MixedObjective, nagq: int) -> bool:
    """Whether :func:`laplace_hessian` applies: logit, Laplace, one scalar random term."""
    p = objective.problem
    return nagq <= 1 and type(p.link) is Logit and len(p.terms) == 1 and p.terms[0].q == 1


@dataclass(frozen=True)
class _Pieces:
    """Per row: the derivatives of ``log F(U)``, ``log S(L)`` and ``log(1 - e^{L - U})``.

    ``upper[n]``, ``lower[n]``: the ``n``-th derivative (``n = 1..4``) of the first two;
    ``width[n]``: of the third (``n = 1, 2``).
    """

    upper: tuple[FloatArray, FloatArray, FloatArray, FloatArray]
    lower: tuple[FloatArray, FloatArray, FloatArray, FloatArray]
    width: tuple[FloatArray, FloatArray]


def _logistic_pieces(upper: FloatArray, lower: FloatArray) -> _Pieces:
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        F_u = 1.0 / (1.0 + np.exp(-upper))
        S_u = 1.0 / (1.0 + np.exp(upper))
        F_l = 1.0 / (1.0 + np.exp(-lower))
        S_l = 1.0 / (1.0 + np.exp(lower))
        r = 1.0 / np.expm1(upper - lower)
    r = np.where(np.isfinite(upper) & np.isfinite(lower), r, 0.0)

    def higher(F: FloatArray, S: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        fs, skew = F * S, S - F
        return -fs, -fs * skew, -fs * (skew * skew - 2.0 * fs)

    return _Pieces((S_u, *higher(F_u, S_u)), (-F_l, *higher(F_l, S_l)), (r, -r * (1.0 + r)))


def laplace_hessian(
    objective: MixedObjective, params: FloatArray
) -> tuple[float, FloatArray, FloatArray]:
    """The negative Laplace log-likelihood, its gradient and its Hessian (logit, one scalar term).

    Parameters
    ----------
    objective : MixedObjective
        Of a problem with the logit link and one random term with one column
        (:func:`has_laplace_hessian`).
    params : ndarray
        ``(alpha, beta, log sigma)``.

    Returns
    -------
    value : float
        As :meth:`MixedObjective.value` (``+inf`` outside the domain, where the
        gradient and Hessian are ``nan``).
    gradient : ndarray
    hessian : ndarray
    """
    p = objective.problem
    params = np.asarray(params, dtype=float)
    k = params.size
    m = objective.modes(params)
    if not np.isfinite(m.loglik_rows) or not np.isfinite(m.logdet):
        return np.inf, np.full(k, np.nan), np.full((k, k), np.nan)
    t = p.terms[0]
    alpha, beta, var = p.split(params)
    theta = p.jacobian @ alpha
    K1, n_beta, L = theta.size, beta.size, t.n_levels
    tau = float(var[0])
    rho = float(np.exp(-2.0 * tau))
    b = np.exp(tau) * m.u  # the modes in the random effects' scale, (L,)
    z, codes, w = t.matrix[:, 0], t.codes, p.weights
    eta = p.X @ beta + p.offset + z * b[codes]
    bounds = np.concatenate([[-np.inf], theta, [np.inf]])
    upper, lower = bounds[p.y + 1] - eta, bounds[p.y] - eta
    pc = _logistic_pieces(upper, lower)
    # the rows' directions in (theta, beta): g_U = dU/dv, g_L = dL/dv
    n, mv = p.y.size, K1 + n_beta
    g_u, g_l = np.zeros((n, mv)), np.zeros((n, mv))
    rows = np.arange(n)
    has_u, has_l = p.y < K1, p.y > 0
    g_u[rows[has_u], p.y[has_u]] = 1.0
    g_l[rows[has_l], p.y[has_l] - 1] = 1.0
    g_u[:, K1:] = -p.X
    g_l[:, K1:] = -p.X
    g_w = g_u - g_l

    def level(values: FloatArray) -> FloatArray:
        return np.asarray(np.bincount(codes, values, minlength=L), dtype=float)

    def level_vectors(on_u: FloatArray, on_l: FloatArray) -> FloatArray:
        """Per level ``sum_i (on_u_i g_U,i + on_l_i g_L,i)``: (L, mv)."""
        return np.asarray(objective.level_sums(on_u[:, None] * g_u + on_l[:, None] * g_l))

    def gram(on_u: FloatArray, on_l: FloatArray) -> FloatArray:
        """``sum_i (on_u_i g_U g_U' + on_l_i g_L g_L')``: (mv, mv)."""
        return np.asarray((g_u.T * on_u) @ g_u + (g_l.T * on_l) @ g_l)

    f1u, f2u, f3u, f4u = pc.upper
    f1l, f2l, f3l, f4l = pc.lower
    wz, wz2, wz3, wz4 = w * z, w * z**2, w * z**3, w * z**4
    # per level partial derivatives; the last column of (L, mv + 1) arrays is tau
    D = -level(wz2 * (f2u + f2l)) + rho
    D_b = level(wz3 * (f3u + f3l))
    D_bb = -level(wz4 * (f4u + f4l))
    k_bphi = np.column_stack([-level_vectors(wz * f2u, wz * f2l), 2.0 * rho * b])
    D_phi = np.column_stack([-level_vectors(wz2 * f3u, wz2 * f3l), np.full(L, -2.0 * rho)])
    D_bphi = np.column_stack([level_vectors(wz3 * f4u, wz3 * f4l), np.zeros(L)])
    B = k_bphi / D[:, None]  # d b^ / d phi
    dD = D_phi + D_b[:, None] * B  # total d D~ / d phi
    # the gradient of sum_l [k^_l - 1/2 log D~_l - tau]
    grad = np.concatenate(
        [
            g_u.T @ (w * f1u) + g_l.T @ (w * f1l) + g_w.T @ (w * pc.width[0]),
            [rho * float(b @ b) - L],
        ]
    )
    grad -= 0.5 * np.sum(dD / D[:, None], axis=0)
    # the Hessian: d^2 k^ = k_phipsi + D b_phi b_psi
    H = np.zeros((mv + 1, mv + 1))
    H[:mv, :mv] = gram(w * f2u, w * f2l) + (g_w.T * (w * pc.width[1])) @ g_w
    H[mv, mv] = -2.0 * rho * float(b @ b)
    H += (B.T * D) @ B
    # -1/2 d^2 log D~ = -1/2 (d^2 D~ / D - dD dD' / D^2), d^2 D~ term by term
    inv_D = (1.0 / D)[codes]
    c = D_b / D**2  # the weight of b_phipsi
    second = np.zeros((mv + 1, mv + 1))
    second[:mv, :mv] = -gram(wz2 * inv_D * f4u, wz2 * inv_D * f4l)  # D_phipsi / D
    second[mv, mv] = 4.0 * rho * float(np.sum(1.0 / D))
    cross = (D_bphi.T / D) @ B
    second += cross + cross.T + (B.T * (D_bb / D)) @ B
    # D_b b_phipsi / D, with k_{b phi psi}
    cr = (c[codes] * wz) * -1.0
    second[:mv, :mv] += gram(cr * f3u, cr * f3l)
    second[mv, mv] += float(np.sum(c * -4.0 * rho * b))
    mixed = (D_phi.T * c) @ B
    second -= mixed + mixed.T + (B.T * (c * D_b)) @ B
    H -= 0.5 * (second - (dD.T / D**2) @ dD)
    # theta = J alpha
    T = np.zeros((mv + 1, k))
    T[:K1, : p.n_alpha] = p.jacobian
    T[K1:, p.n_alpha :] = np.eye(n_beta + 1)
    H = T.T @ H @ T
    return -m.laplace, -(T.T @ grad), -0.5 * (H + H.T)  # symmetric to the last digit
