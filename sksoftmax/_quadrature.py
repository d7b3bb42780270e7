"""Exact class probabilities of additive-noise models (Ruiz et al., eq. 5).

With ``y = argmax_k (psi_k + eps_k)`` and iid noise of density phi and CDF
Phi, substituting ``t = eps + psi_k`` in eq. 5 gives

    p_k = int phi(t - psi_k) / Phi(t - psi_k) * prod_k' Phi(t - psi_k') dt,

so one grid in t serves all K classes: with ``F(t) = prod_k' Phi(t - psi_k')``
(the CDF of the largest utility) the integrands sum to F'(t), and the grid
only has to cover the support of that density. Per row, the interval where
``TAIL < F(t) < 1 - TAIL`` is found from roots of ``log(-log F)``, then
split into panels of at most ``panel_width`` noise units, each integrated by
Gauss-Legendre. The cost is O(K x grid) per row; the mass found,
``sum_k p_k``, is 1 up to the quadrature error, reported and normalised away.

The scores are taken relative to each row's largest first (only their
differences matter), so the grid keeps its resolution at any magnitude of
the scores.

A class many noise units behind the top has its mass where F(t) is below
TAIL, left of that grid: its probability there is right in absolute terms
(below TAIL of the row's) but its log-probability would be far too low
(normal noise, psi = (0, -0.5, -50): -1009 against -833.0907 by mpmath).
The integrands are log-concave, so a tangent at the grid's left end bounds
each class's mass beyond it (``_outside``); classes for which the bound is
not negligible get panels further left (``_extend_left``), as narrow as the
curvature of log F asks, until the bound holds for every class. Classes
beyond the reach of those panels (hundreds of noise units behind, where
p_k < e^-10000 for normal noise and e^-200 for logistic) get the leading
terms of the asymptotic expansion of their integral (``_far_log_proba``).
Every log-probability is then right in relative terms: to about 1e-11
within the reach of the panels (against a finer quadrature and mpmath),
1e-3 or better beyond, exact in the limit.

(Ruiz et al. used importance sampling with 1,000 draws from N(5, 25).)

The quadrature runs in the nogil kernel ``_quadrature_fast.pyx.tp``, one
row at a time on ``n_threads`` threads (the per-row work is O(K x nodes)
special functions; no (rows, grid, K) array). Its plain NumPy reference,
vectorised over rows, is ``tests/_quadrature_reference.py``; the two agree
to rounding.
"""

import numpy as np

from ._quadrature_fast import (
    NOISE_CODES,
    noise_log_proba_32,
    noise_log_proba_64,
)

# F below TAIL or above 1 - TAIL at the ends of the grid
TAIL = 1e-17
# at most this many steps of the root finder per end of the support
BISECTION_STEPS = 32
# the core grid per noise: (largest panel, Gauss-Legendre nodes per
# panel). Logistic noise has long exponential tails (its grid spans about
# 85 units at TAIL = 1e-17, the normal's about 20): wider panels with more
# nodes integrate them as accurately with 4 nodes per unit instead of 6
# (against a finer quadrature: tests/test_augment_reduce.py)
CORE_PANELS = {
    "normal": (2.0, 12),
    "gumbel": (2.0, 12),
    "logistic": (8.0, 32),
}
# A class's integrand beyond the end of its row's grid must hold less than
# this fraction of the class's mass (the tangent bound)
REL_TAIL = 1e-15
# panels of the extension: at most KAPPA / sqrt(curvature) wide (about
# KAPPA standard deviations of a Gaussian integrand), and at most
# MAX_EXTENSION_PANELS of them per row, EXTENSION_NODES nodes each; and
# at most EXTENSION_WIDTH or the core's panel_width, the smaller
EXTENSION_WIDTH = 2.0
KAPPA = 3.0
EXTENSION_NODES = 8
MAX_EXTENSION_PANELS = 512

NOISES = tuple(NOISE_CODES)


def _bracket(noise, n_classes):
    """An interval holding both ends of the support, the top score at 0.

    With L = -log TAIL: F(t) <= Phi(t), below TAIL left of the first end;
    1 - F(t) <= K (1 - Phi(t)), below TAIL right of the second (normal:
    1 - Phi(t) <= e^(-t^2 / 2) / 2; logistic and Gumbel: <= e^-t; Gumbel
    Phi(t) = exp(-e^-t)); one noise unit of margin each side. Narrow
    brackets keep the root finder's first steps short (the NumPy
    reference bisects [-60, 45 + log K] for every noise).
    """
    big_l = -np.log(TAIL)
    log_k = np.log(n_classes)
    if noise == "normal":
        return (
            -np.sqrt(2.0 * big_l) - 1.0,
            np.sqrt(2.0 * (big_l + log_k)) + 1.0,
        )
    if noise == "logistic":
        return -big_l - 1.0, big_l + log_k + 1.0
    return -np.log(big_l) - 1.0, big_l + log_k + 1.0


def _bracket_ends(noise, n_classes):
    """Per-row brackets of the support's ends, for scores with the top at
    0 and mean m: (a, b, c) with t_lo in [m + a, a] and t_hi in [max(b, m
    + c), c].

    log Phi is concave for the three noises, so log F(t) = sum_k log
    Phi(t - psi_k) <= K log Phi(t - m) (Jensen), and log F(t) >= K log
    Phi(t) (every psi_k <= 0): F = TAIL at t_lo gives Phi(t_lo - m) >=
    TAIL^(1/K) >= Phi(t_lo), a = Phi^-1(TAIL^(1/K)). At the right end
    -log F = TAIL, with u = -log Phi convex and decreasing: u(t_hi) <=
    TAIL (the top score's term), K u(t_hi - m) <= TAIL (Jensen) and
    TAIL <= K u(t_hi), so b = u^-1(TAIL), c = u^-1(TAIL / K).
    """
    from scipy.special import ndtri

    log_tail = np.log(TAIL)
    a_log = log_tail / n_classes  # log TAIL^(1/K)
    if noise == "normal":
        a = -ndtri(-np.expm1(a_log))
        b = -ndtri(-np.expm1(-TAIL))
        c = -ndtri(-np.expm1(-TAIL / n_classes))
    elif noise == "logistic":
        a = a_log - np.log(-np.expm1(a_log))
        b = -np.log(np.expm1(TAIL))
        c = -np.log(np.expm1(TAIL / n_classes))
    else:
        a = -np.log(-a_log)
        b = -np.log(TAIL)
        c = np.log(n_classes) - np.log(TAIL)
    return float(a), float(b), float(c)


def _options(noise, panel_width, n_classes):
    """The kernel's QuadOptions, from this module's constants (read at
    each call)."""
    lo, hi = _bracket(noise, max(n_classes, 1))
    left_hi, right_lo, right_hi = _bracket_ends(noise, max(n_classes, 1))
    return {
        "noise": NOISE_CODES[noise],
        "panel_width": float(panel_width),
        "ext_width": float(min(panel_width, EXTENSION_WIDTH)),
        "log_tail_left": float(np.log(-np.log(TAIL))),
        "log_tail_right": float(np.log(TAIL)),
        "bracket_lo": float(lo),
        "bracket_hi": float(hi),
        "left_hi": left_hi,
        "right_lo": right_lo,
        "right_hi": right_hi,
        "n_bisect": BISECTION_STEPS,
        "log_rel_tail": float(np.log(REL_TAIL)),
        "kappa": float(KAPPA),
        "max_ext_panels": int(MAX_EXTENSION_PANELS),
    }


def noise_log_proba(
    psi,
    noise,
    *,
    panel_width=None,
    n_nodes=None,
    return_error=False,
    n_threads=1,
):
    """log p(y = k | psi) of eq. 5 for every row of psi, by quadrature.

    Parameters
    ----------
    psi : array-like of shape (n_rows, n_classes)
        Mean utilities (class scores); float32 stays float32.
    noise : {'gumbel', 'normal', 'logistic'}
        Noise distribution: Gumbel gives the softmax, normal the multinomial
        probit, logistic the multinomial logistic model.
    panel_width : float, default=None
        Largest panel of the core grid, in units of the noise's scale;
        None: ``CORE_PANELS[noise]`` (2 for normal and Gumbel noise, 8
        for logistic).
    n_nodes : int, default=None
        Gauss-Legendre nodes per core panel; None: ``CORE_PANELS[noise]``
        (12 for normal and Gumbel noise, 32 for logistic).
    return_error : bool, default=False
        Also return, per row, ``|sum_k p_k - 1|`` before normalisation.
    n_threads : int, default=1
        Threads over rows (the result does not depend on it).

    Returns
    -------
    log_proba : ndarray of shape (n_rows, n_classes)
        Normalised log-probabilities.
    mass_error : ndarray of shape (n_rows,)
        Only with ``return_error``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import log_softmax
    >>> from sksoftmax._quadrature import noise_log_proba
    >>> psi = np.array([[0.0, 1.0, 3.0]])
    >>> bool(np.allclose(noise_log_proba(psi, "gumbel"), log_softmax(psi),
    ...                  atol=1e-12))
    True
    """
    if noise not in NOISE_CODES:
        raise ValueError(
            f"noise must be one of {sorted(NOISE_CODES)}, got {noise!r}."
        )
    default_width, default_nodes = CORE_PANELS[noise]
    panel_width = default_width if panel_width is None else panel_width
    n_nodes = default_nodes if n_nodes is None else n_nodes
    psi = np.asarray(psi)
    dtype = np.float32 if psi.dtype == np.float32 else np.float64
    psi = np.ascontiguousarray(np.atleast_2d(psi), dtype=dtype)
    if psi.ndim != 2:
        raise ValueError(f"psi must be 2-D, got shape {psi.shape}.")
    if not np.all(np.isfinite(psi)):
        raise ValueError("psi contains NaN or infinite values.")
    if isinstance(n_nodes, bool) or int(n_nodes) != n_nodes or n_nodes < 1:
        raise ValueError(f"n_nodes must be a positive int, got {n_nodes!r}.")
    if not panel_width > 0:
        raise ValueError(
            f"panel_width must be positive, got {panel_width!r}."
        )
    nodes, weights = np.polynomial.legendre.leggauss(int(n_nodes))
    ext_nodes, ext_weights = np.polynomial.legendre.leggauss(
        int(EXTENSION_NODES)
    )
    out = np.empty(psi.shape, dtype=dtype)
    mass_error = np.empty(psi.shape[0])
    kernel = noise_log_proba_32 if dtype == np.float32 else noise_log_proba_64
    kernel(
        psi,
        out,
        mass_error,
        nodes,
        weights,
        ext_nodes,
        ext_weights,
        _options(noise, panel_width, psi.shape[1]),
        int(n_threads),
    )
    if return_error:
        return out, mass_error
    return out
