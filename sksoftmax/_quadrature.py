"""Exact class probabilities of additive-noise models (Ruiz et al., eq. 5).

With ``y = argmax_k (psi_k + eps_k)`` and iid noise of density phi and CDF
Phi, substituting ``t = eps + psi_k`` in eq. 5 gives

    p_k = int phi(t - psi_k) / Phi(t - psi_k) * prod_k' Phi(t - psi_k') dt,

so one grid in t serves all K classes: with ``F(t) = prod_k' Phi(t - psi_k')``
(the CDF of the largest utility) the integrands sum to F'(t), and the grid
only has to cover the support of that density. Per row, the interval where
``TAIL < F(t) < 1 - TAIL`` is found by bisection on ``log(-log F)``, then
split into panels of at most ``panel_width`` noise units, each integrated by
Gauss-Legendre. The cost is O(K x grid) per row; the mass found,
``sum_k p_k``, is 1 up to the quadrature error, reported and normalised away.

The scores are taken relative to each row's largest first (only their
differences matter), so the grid keeps its resolution at any magnitude of
the scores. A class whose own mass lies left of the grid (many noise
units behind the top) gets a probability below TAIL of the row's, right
in absolute terms, but its log-probability is then an underestimate.

(Ruiz et al. used importance sampling with 1,000 draws from N(5, 25).)
"""

import numpy as np
from scipy.special import log_ndtr, logsumexp

# F below TAIL or above 1 - TAIL at the ends of the grid
TAIL = 1e-17
_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def _gumbel_log_cdf(z):
    return -np.exp(-z)


def _normal_log_pdf(z):
    return -0.5 * z * z - _LOG_SQRT_2PI


def _logistic_log_cdf(z):
    return -np.logaddexp(0.0, -z)


# log(phi / Phi)(z) given lc = log Phi(z), without a second transcendental
# where the noise allows: Gumbel phi / Phi = e^-z; logistic phi / Phi =
# sigma(-z) = sigma(z) e^-z, so log(phi / Phi) = log Phi - z (one
# logaddexp per grid point and class instead of three: issue 15 measured
# logistic probabilities 4-5x slower than probit's)
def _gumbel_log_ratio(z, lc):
    return -z


def _normal_log_ratio(z, lc):
    return _normal_log_pdf(z) - lc


def _logistic_log_ratio(z, lc):
    return lc - z


# name -> (log Phi, log(phi / Phi) given log Phi)
NOISES = {
    "gumbel": (_gumbel_log_cdf, _gumbel_log_ratio),
    "normal": (log_ndtr, _normal_log_ratio),
    "logistic": (_logistic_log_cdf, _logistic_log_ratio),
}


def _log_F(t, psi, log_cdf):
    """log prod_k Phi(t_i - psi_ik) for each row i (t of shape (n,))."""
    return log_cdf(t[:, None] - psi).sum(axis=1)


def _bisect(target, lo, hi, psi, log_cdf, n_iter=32):
    """t with log(-log F(t)) = target per row; log(-log F) decreases in t."""
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        with np.errstate(divide="ignore", over="ignore"):
            val = np.log(-_log_F(mid, psi, log_cdf))
        above = val > target  # F still too small: move right
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return 0.5 * (lo + hi)


def support(psi, noise):
    """Per row, the t-interval outside which F(t) < TAIL or 1 - F < TAIL.

    Parameters
    ----------
    psi : ndarray of shape (n_rows, n_classes)
    noise : {'gumbel', 'normal', 'logistic'}

    Returns
    -------
    t_lo, t_hi : ndarrays of shape (n_rows,)
    """
    log_cdf = NOISES[noise][0]
    top = psi.max(axis=1)
    # F(t) <= Phi(t - max psi) bounds the left end; 1 - F(t) <= K (1 -
    # Phi(t - max psi)) the right one (all three noises have tails at most
    # exponential, e^-60 and e^-45 / K being far below TAIL)
    lo = top - 60.0
    hi = top + 45.0 + np.log(psi.shape[1])
    t_lo = _bisect(np.log(-np.log(TAIL)), lo, hi, psi, log_cdf)
    t_hi = _bisect(np.log(TAIL), lo, hi, psi, log_cdf)
    return t_lo, t_hi


def noise_log_proba(
    psi, noise, *, panel_width=2.0, n_nodes=12, return_error=False
):
    """log p(y = k | psi) of eq. 5 for every row of psi, by quadrature.

    Parameters
    ----------
    psi : array-like of shape (n_rows, n_classes)
        Mean utilities (class scores).
    noise : {'gumbel', 'normal', 'logistic'}
        Noise distribution: Gumbel gives the softmax, normal the multinomial
        probit, logistic the multinomial logistic model.
    panel_width : float, default=2.0
        Largest panel, in units of the noise's scale.
    n_nodes : int, default=12
        Gauss-Legendre nodes per panel.
    return_error : bool, default=False
        Also return, per row, ``|sum_k p_k - 1|`` before normalisation.

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
    psi = np.atleast_2d(np.asarray(psi, dtype=np.float64))
    if noise not in NOISES:
        raise ValueError(
            f"noise must be one of {sorted(NOISES)}, got {noise!r}."
        )
    if not np.all(np.isfinite(psi)):
        raise ValueError("psi contains NaN or infinite values.")
    n, n_classes = psi.shape
    if n == 0:
        out = np.empty((0, n_classes))
        return (out, np.empty(0)) if return_error else out
    log_cdf, log_ratio = NOISES[noise]
    # p depends on the differences of the scores only: relative to each
    # row's largest, the grid's t stays within about 60 noise units of 0,
    # where its spacing is fine, whatever the scores' magnitude (at 1e17
    # and beyond, t - psi_k in absolute terms rounded every node to the
    # same point and the panels to width 0: NaN). A class far behind
    # gets z = t - psi_k huge: log Phi(z) = 0, log phi(z) -> -inf, so its
    # probability underflows to 0 and the top class gets exactly 1.
    with np.errstate(over="ignore", invalid="ignore"):
        psi = psi - psi.max(axis=1, keepdims=True)
    psi[np.isnan(psi)] = -np.inf  # inf - inf: a gap beyond float range
    t_lo, t_hi = support(psi, noise)
    n_panels = max(1, int(np.ceil((t_hi - t_lo).max() / panel_width)))
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    h = (t_hi - t_lo) / n_panels  # per row panel width
    # grid (n, G): panel p, node q at t_lo + h (p + (nodes_q + 1) / 2)
    offsets = (np.arange(n_panels)[:, None] + 0.5 * (nodes + 1.0)).ravel()
    grid = t_lo[:, None] + h[:, None] * offsets
    log_w = np.log(0.5 * h)[:, None] + np.tile(np.log(weights), n_panels)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        z = grid[:, :, None] - psi[:, None, :]  # (n, G, K)
        lc = log_cdf(z)
        log_f = lc.sum(axis=2)  # log F on the grid
        # the integrand of class k: (phi / Phi)(t - psi_k) F(t) dt
        lc = log_ratio(z, lc) + (log_f + log_w)[:, :, None]
        del z
        log_p = logsumexp(lc, axis=1)
    del lc
    log_mass = logsumexp(log_p, axis=1)
    log_p -= log_mass[:, None]
    if return_error:
        return log_p, np.abs(np.expm1(log_mass))
    return log_p
