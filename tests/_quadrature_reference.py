"""Plain NumPy reference of the quadrature kernel (``_quadrature_fast``).

The algorithm of ``sksoftmax._quadrature`` (derived in that module's
docstring: one grid in t for all K classes, the support of F'(t) found per
row and cut into Gauss-Legendre panels, the tangent bound and the panels
further left for classes far behind the top, the asymptotic tail beyond),
vectorised over rows: the kernel computes the same quantities row by row,
so the two agree to rounding (the order of the sums differs). The ends of
the support are found here by bisection on ``log(-log F)``.
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


# (log phi)'(z): the slope of a class's own factor, for the tail bounds
def _gumbel_dlog_pdf(z):
    return np.expm1(-z)


def _normal_dlog_pdf(z):
    return -z


def _logistic_dlog_pdf(z):
    return -np.tanh(0.5 * z)


# name -> (log Phi, log(phi / Phi) given log Phi, (log phi)')
NOISES = {
    "gumbel": (_gumbel_log_cdf, _gumbel_log_ratio, _gumbel_dlog_pdf),
    "normal": (log_ndtr, _normal_log_ratio, _normal_dlog_pdf),
    "logistic": (
        _logistic_log_cdf,
        _logistic_log_ratio,
        _logistic_dlog_pdf,
    ),
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


# the core grid per noise: (largest panel, nodes per panel)
CORE_PANELS = {
    "normal": (2.0, 12),
    "gumbel": (2.0, 12),
    "logistic": (8.0, 32),
}
# A class's integrand beyond the end of its row's grid must hold less than
# this fraction of the class's mass (the tail bound in _outside)
_LOG_REL_TAIL = np.log(1e-15)
# panels of the extension: at most KAPPA / sqrt(curvature) wide (about
# KAPPA standard deviations of a Gaussian integrand), and at most
# MAX_EXTENSION_PANELS of them per row
# extension panels at most EXTENSION_WIDTH or the core's panel_width
EXTENSION_WIDTH = 2.0
KAPPA = 3.0
EXTENSION_NODES = 8
MAX_EXTENSION_PANELS = 512


def _local_terms(t, psi, noise):
    """At one point t per row: h_k(t), the log of class k's integrand of
    eq. 5, its slope h_k'(t), and the curvature (log F)''(t).

    With r = phi / Phi, h_k = log r(z_k) + log F, h_k' = (log phi)'(z_k)
    - r(z_k) + sum_j r(z_j) and (log F)'' = sum_j r'(z_j), where
    r' = r ((log phi)' - r) and z_j = t - psi_j.
    """
    log_cdf, log_ratio, dlog_pdf = NOISES[noise]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        z = t[:, None] - psi
        lc = log_cdf(z)
        lr = log_ratio(z, lc)
        r = np.exp(lr)
        dl = dlog_pdf(z)
        h = lr + lc.sum(axis=1)[:, None]
        slope = dl - r + r.sum(axis=1)[:, None]
        # a class at -inf (a gap beyond float range) adds nothing
        curv = np.where(r > 0.0, r * (dl - r), 0.0).sum(axis=1)
    return h, slope, curv


def _outside(h, slope, log_p, side):
    """Which classes may hold more than e^_LOG_REL_TAIL of their mass
    beyond the end of the grid at which h and slope were taken (side +1:
    the left end, -1: the right one).

    The integrands are log-concave (log phi and log Phi are concave for
    the three noises), so h lies below its tangent: beyond the left end
    t_0, h(t) <= h(t_0) + h'(t_0) (t - t_0), and the mass there is at most
    exp(h(t_0)) / h'(t_0) when h'(t_0) > 0 (the mirror image on the
    right). A class whose integrand still rises beyond the end, or whose
    bound is not negligible against the mass found, is outside.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = h - np.log(side * slope)
        inside = (side * slope > 0.0) & (bound < log_p + _LOG_REL_TAIL)
    return ~(inside | np.isneginf(h))


def _extension_panels(psi, noise, a, b, panel_width, n_used):
    """Panels tiling [a_i, b_i] from right to left for the rows i, each at
    most ``panel_width`` and KAPPA / sqrt(|(log F)''| + 1) wide (the curvature
    at both of its ends; the +1 bounds the class's own factor), so that
    every class's integrand is resolved as the core grid resolves F'.

    Returns (rows, left, right) of the panels and the rows' panel counts;
    a row stops at MAX_EXTENSION_PANELS panels in all (``n_used`` counts
    those it already has) and then reaches only part of the way.
    """
    t = b.copy()
    count = n_used.copy()
    rows, lefts, rights = [], [], []
    active = np.flatnonzero((t > a) & (count < MAX_EXTENSION_PANELS))
    while active.size:
        tr = t[active]
        curv = np.abs(_local_terms(tr, psi[active], noise)[2])
        w = np.minimum(panel_width, KAPPA / np.sqrt(curv + 1.0))
        curv = np.abs(_local_terms(tr - w, psi[active], noise)[2])
        w = np.minimum(w, KAPPA / np.sqrt(curv + 1.0))
        left = np.maximum(tr - w, a[active])
        rows.append(active)
        lefts.append(left)
        rights.append(tr)
        t[active] = left
        count[active] += 1
        active = active[
            (left > a[active]) & (count[active] < MAX_EXTENSION_PANELS)
        ]
    if not rows:
        empty = np.empty(0)
        return empty.astype(np.intp), empty, empty, count, t
    return (
        np.concatenate(rows),
        np.concatenate(lefts),
        np.concatenate(rights),
        count,
        t,
    )


def _panel_log_mass(psi, noise, rows, left, right, n_nodes, n_rows):
    """log of each class's integral over the given panels, summed per row:
    an (n_rows, n_classes) array, -inf where a row has no panel."""
    log_cdf, log_ratio = NOISES[noise][:2]
    n_classes = psi.shape[1]
    out = np.full((n_rows, n_classes), -np.inf)
    if rows.size == 0:
        return out
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    order = np.argsort(rows, kind="stable")
    rows, left, right = rows[order], left[order], right[order]
    per_panel = np.empty((rows.size, n_classes))
    # chunks of about 4 million (node, class) terms
    step = max(1, 4_000_000 // (n_nodes * n_classes))
    for lo in range(0, rows.size, step):
        sl = slice(lo, lo + step)
        half = 0.5 * (right[sl] - left[sl])
        t = left[sl, None] + half[:, None] * (nodes + 1.0)  # (P, Q)
        log_w = np.log(half)[:, None] + np.log(weights)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            z = t[:, :, None] - psi[rows[sl]][:, None, :]  # (P, Q, K)
            lc = log_cdf(z)
            v = log_ratio(z, lc) + (lc.sum(axis=2) + log_w)[:, :, None]
            per_panel[sl] = logsumexp(v, axis=1)
    # the panels of one row are contiguous: log-sum-exp per segment
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    top = np.maximum.reduceat(per_panel, starts, axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    seg = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, rows.size]))
    with np.errstate(divide="ignore"):
        total = (
            np.log(
                np.add.reduceat(np.exp(per_panel - safe[seg]), starts, axis=0)
            )
            + safe
        )
    out[rows[starts]] = total
    return out


def _far_log_proba(psi, noise, rows, cls):
    """Leading terms of log p_k for classes too far behind to integrate
    (hundreds of noise units and more; scores relative to the row's top).

    With z = t - psi_j, the integrand's log is h_k(t) = log phi(z_k) +
    sum_{j != k} log Phi(z_j), and far from every score log Phi(z) is
    -z^2 / 2 - log(-z) + O(1) (normal) or min(z, 0) + O(e^-|z|)
    (logistic) below 0 and O(e^-z^2/2) or O(e^-z) above. Keeping the
    leading part, h_k is piecewise quadratic (linear) and concave, and
    its maximum h* with the width of the peak gives log p_k to a relative
    error of O(log(gap) / gap^2) (normal) or O(1 / gap) (logistic): below
    1e-3 from 200 noise units on, and exact in the limit (for Gumbel noise
    the closed form, the softmax, is used).

    Normal: with the scores sorted descending, b_0 >= b_1 >= ..., S_i and
    Q_i the sums of the first i and of their squares, h_k'(t) = psi_k - t
    + sum_{b_j > t} (b_j - t); at t = b_i this is psi_k + G_i with G_i =
    S_i - (i + 1) b_i, increasing in i, so the number m of scores ahead
    of the mode is the first i with G_i >= -psi_k, the mode is t* =
    (psi_k + S_m) / (1 + m), h* = -(t* - psi_k)^2 / 2 - (m t*^2 - 2 t* S_m
    + Q_m) / 2, and the peak adds log sqrt(2 pi / (1 + m)) (Laplace).

    Logistic: h_k rises with slope -1 + (number of scores ahead) while two
    or more are ahead, is flat at psi_k - b_0 (the softmax's value) from
    max(psi_k, b_1') (b_1' the largest other score below the top) to b_0,
    and falls beyond, so log p_k = psi_k - b_0 + log(1 + plateau length).
    """
    sub = psi[rows]
    psi_k = sub[np.arange(rows.size), cls]
    if noise == "gumbel":
        return psi_k - logsumexp(sub, axis=1)
    b = -np.sort(-sub, axis=1)
    if noise == "logistic":
        # the largest score other than the top one and class k's own
        second = np.where(
            b[:, 1] == psi_k, b[:, 2] if b.shape[1] > 2 else -np.inf, b[:, 1]
        )
        second = np.maximum(second, psi_k)
        with np.errstate(invalid="ignore"):
            plateau = np.log1p(np.maximum(b[:, 0] - second, 0.0))
        return psi_k - b[:, 0] + plateau
    n_classes = b.shape[1]
    S = np.zeros((rows.size, n_classes + 1))
    Q = np.zeros((rows.size, n_classes + 1))
    with np.errstate(over="ignore", invalid="ignore"):
        np.cumsum(b, axis=1, out=S[:, 1:])
        np.cumsum(b * b, axis=1, out=Q[:, 1:])
        G = S[:, :-1] - np.arange(1, n_classes + 1) * b
    # first i >= 1 with G_i >= -psi_k, by bisection over all pairs at once
    lo = np.ones(rows.size, dtype=np.intp)
    hi = np.full(rows.size, n_classes - 1, dtype=np.intp)
    pair = np.arange(rows.size)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        ok = G[pair, mid] >= -psi_k
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid + 1)
    m = lo.astype(np.float64)
    Sm, Qm = S[pair, lo], Q[pair, lo]
    with np.errstate(over="ignore", invalid="ignore"):
        t = (psi_k + Sm) / (1.0 + m)
        h = -0.5 * (t - psi_k) ** 2 - 0.5 * (m * t * t - 2.0 * t * Sm + Qm)
    # (2 pi)^(-1/2) of phi; the peak's width
    return h - _LOG_SQRT_2PI + 0.5 * np.log(2.0 * np.pi / (1.0 + m))


def _extend_left(psi, noise, t_lo, log_p, panel_width, n_nodes):
    """Add to ``log_p`` the mass of classes whose integrand reaches left of
    the rows' grids (a class many noise units behind the top: F(t) is
    below TAIL where its mass lies), on panels from t_lo leftwards until
    the tail bound of every class holds at the new left end.

    The first reach goes one unit left of the lowest score among those
    classes (a class's mode lies right of its own score: h_k'(psi_k) =
    (log phi)'(0) + sum_{j != k} r(psi_k - psi_j) > 0, and (log phi)'(0)
    = 0 for the three noises), or less where the tangent bound allows;
    each later reach doubles the distance from t_lo. Classes beyond what
    MAX_EXTENSION_PANELS panels can cover get ``_far_log_proba``. Returns
    the new (unnormalised) log_p.
    """
    n = psi.shape[0]
    finite = np.isfinite(psi)
    h, slope, _ = _local_terms(t_lo, psi, noise)
    need = _outside(h, slope, log_p, +1) & finite
    rows = np.flatnonzero(need.any(axis=1))
    end = t_lo.copy()
    target = t_lo.copy()
    used = np.zeros(n, dtype=np.intp)
    # how far left each such class needs: one unit left of its own score
    # (right of which its mode lies), or less if its tangent bound falls
    # below e^_LOG_REL_TAIL of its mass before
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = slope[rows]
        gap = (h[rows] - np.log(s) - log_p[rows] - _LOG_REL_TAIL) / s
        reach = psi[rows] - 1.0
        reach = np.where(
            s > 0.0, np.maximum(t_lo[rows, None] - gap, reach), reach
        )
    # classes whose reach the panels could not cover are left to
    # _far_log_proba at once
    far = np.zeros_like(need)
    far[rows] = need[rows] & (
        reach < t_lo[rows, None] - MAX_EXTENSION_PANELS * panel_width
    )
    need &= ~far
    reach = np.where(need[rows], reach, np.inf).min(axis=1)
    rows = rows[np.isfinite(reach)]
    reach = reach[np.isfinite(reach)]
    target[rows] = np.minimum(reach, end[rows])
    while rows.size:
        p_rows, p_left, p_right, used, end = _extension_panels(
            psi, noise, target, end, panel_width, used
        )
        ext = _panel_log_mass(
            psi, noise, p_rows, p_left, p_right, EXTENSION_NODES, n
        )
        log_p = np.logaddexp(log_p, ext)
        h, slope, _ = _local_terms(end[rows], psi[rows], noise)
        still = _outside(h, slope, log_p[rows], +1) & finite[rows]
        # a row that stops at MAX_EXTENSION_PANELS keeps its classes still
        # outside: they go to _far_log_proba
        need[rows] = still
        rows = rows[still.any(axis=1) & (used[rows] < MAX_EXTENSION_PANELS)]
        target[rows] = end[rows] - np.maximum(4.0, t_lo[rows] - end[rows])
    far |= need
    rows, cls = np.nonzero(far)
    if rows.size:
        log_p[rows, cls] = _far_log_proba(psi, noise, rows, cls)
    return log_p


def noise_log_proba(
    psi, noise, *, panel_width=None, n_nodes=None, return_error=False
):
    """``sksoftmax._quadrature.noise_log_proba`` (same parameters and
    returns, no threads), in NumPy over all rows at once."""
    psi = np.atleast_2d(np.asarray(psi, dtype=np.float64))
    if noise not in NOISES:
        raise ValueError(
            f"noise must be one of {sorted(NOISES)}, got {noise!r}."
        )
    default_width, default_nodes = CORE_PANELS[noise]
    panel_width = default_width if panel_width is None else panel_width
    n_nodes = default_nodes if n_nodes is None else n_nodes
    if not np.all(np.isfinite(psi)):
        raise ValueError("psi contains NaN or infinite values.")
    n, n_classes = psi.shape
    if n == 0:
        out = np.empty((0, n_classes))
        return (out, np.empty(0)) if return_error else out
    log_cdf, log_ratio = NOISES[noise][:2]
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
    # each row's interval in equal panels of at most panel_width
    n_panels = np.maximum(
        1, np.ceil((t_hi - t_lo) / panel_width).astype(np.intp)
    )
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    log_p = np.empty_like(psi)
    for count in np.unique(n_panels):
        rows = np.flatnonzero(n_panels == count)
        h = (t_hi[rows] - t_lo[rows]) / count  # per row panel width
        # grid (n, G): panel p, node q at t_lo + h (p + (nodes_q + 1) / 2)
        offsets = (np.arange(count)[:, None] + 0.5 * (nodes + 1.0)).ravel()
        grid = t_lo[rows, None] + h[:, None] * offsets
        log_w = np.log(0.5 * h)[:, None] + np.tile(np.log(weights), count)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            z = grid[:, :, None] - psi[rows, None, :]  # (n, G, K)
            lc = log_cdf(z)
            log_f = lc.sum(axis=2)  # log F on the grid
            # the integrand of class k: (phi / Phi)(t - psi_k) F(t) dt
            lc = log_ratio(z, lc) + (log_f + log_w)[:, :, None]
            del z
            log_p[rows] = logsumexp(lc, axis=1)
        del lc
    log_p = _extend_left(
        psi, noise, t_lo, log_p, min(panel_width, EXTENSION_WIDTH), n_nodes
    )
    log_mass = logsumexp(log_p, axis=1)
    log_p -= log_mass[:, None]
    if return_error:
        return log_p, np.abs(np.expm1(log_mass))
    return log_p
