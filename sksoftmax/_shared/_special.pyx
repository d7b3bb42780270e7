"""Vectorised Python access to the special functions of _special.pxd."""
import numpy as np


def _apply(fun_code, x):
    # one loop for every elementwise wrapper below, selected by code
    arr = np.ascontiguousarray(x, dtype=np.float64)
    flat = arr.reshape(-1)
    out = np.empty_like(flat)
    cdef const double[::1] xv = flat
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    cdef int code = fun_code
    cdef double mills
    with nogil:
        for i in range(xv.shape[0]):
            if code == 0:
                ov[i] = log1pexp(xv[i])
            elif code == 1:
                ov[i] = wright_omega(xv[i])
            elif code == 2:
                ov[i] = log_ndtr(xv[i])
            elif code == 3:
                ov[i] = ndtr_mills(xv[i])
            elif code == 5:
                ov[i] = log_ndtr_mills(xv[i], &mills)
            elif code == 6:
                log_ndtr_mills(xv[i], &ov[i])
            elif code == 7:
                ov[i] = sks_exp_nonpos(xv[i])
            else:
                ov[i] = log_sigmoid(xv[i])
    return out.reshape(arr.shape)


def log1pexp_array(x):
    """log(1 + exp(x)) elementwise, safe for any float64 x.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64, same shape as x

    Examples
    --------
    >>> from sksoftmax._shared._special import log1pexp_array
    >>> log1pexp_array([0.0, 1000.0]).tolist()
    [0.6931471805599453, 1000.0]
    """
    return _apply(0, x)


def wright_omega_array(x):
    """Wright omega (principal Lambert W of exp(x)) elementwise.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64, same shape as x

    Examples
    --------
    >>> from sksoftmax._shared._special import wright_omega_array
    >>> float(wright_omega_array(1.0))
    1.0
    """
    return _apply(1, x)


def logsumexp_rows(a):
    """log(sum(exp(a[i]))) for each row i of a 2-D array.

    Parameters
    ----------
    a : array-like of shape (n_rows, n_cols)

    Returns
    -------
    out : ndarray of shape (n_rows,)

    Examples
    --------
    >>> import numpy as np
    >>> from sksoftmax._shared._special import logsumexp_rows
    >>> logsumexp_rows(np.zeros((1, 4))).round(6).tolist()
    [1.386294]
    """
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"a must be 2-D, got {arr.ndim} dimensions")
    out = np.empty(arr.shape[0])
    cdef const double[:, ::1] av = arr
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(av.shape[0]):
            ov[i] = (logsumexp(&av[i, 0], av.shape[1]) if av.shape[1]
                     else logsumexp(NULL, 0))
    return out


def log_ndtr_array(x):
    """log Phi(x) of the standard normal elementwise, accurate in the tails.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64, same shape as x

    Examples
    --------
    >>> from sksoftmax._shared._special import log_ndtr_array
    >>> log_ndtr_array([0.0]).tolist()
    [-0.6931471805599453]
    >>> bool(log_ndtr_array(-40.0) < -800)
    True
    """
    return _apply(2, x)


def ndtr_mills_array(x):
    """phi(x) / Phi(x), the derivative of log Phi, elementwise.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64, same shape as x

    Examples
    --------
    >>> from sksoftmax._shared._special import ndtr_mills_array
    >>> round(float(ndtr_mills_array(0.0)), 6)
    0.797885
    """
    return _apply(3, x)


def _log_ndtr_mills_arrays(x):
    """(log Phi(x), phi(x) / Phi(x)) from the fused ``log_ndtr_mills``."""
    return _apply(5, x), _apply(6, x)


def log_sigmoid_array(x):
    """log(1 / (1 + exp(-x))) elementwise, without overflow.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64, same shape as x

    Examples
    --------
    >>> from sksoftmax._shared._special import log_sigmoid_array
    >>> log_sigmoid_array([-1000.0]).tolist()
    [-1000.0]
    """
    return _apply(4, x)


def exp_nonpos_array(x):
    """e^x by the evaluation kernels' vectorisable exp (x <= 0; 0 below
    -708).

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64
    """
    return _apply(7, x)


_LOG_MILLS_TABLE = None


def _chebyshev_pieces(fun):
    """Per piece [i / 16, (i + 1) / 16), i < 1024, the power coefficients
    in u in [-1, 1] of the polynomial of degree 6 that interpolates
    ``fun`` (vectorised) at the Chebyshev points: numpy's
    ``chebinterpolate`` and ``cheb2poly``, for every piece at once (a
    loop over pieces took about 0.4 s per table at import)."""
    from numpy.polynomial import chebyshev

    n_pieces, degree = SKS_LOG_MILLS_PIECES, SKS_LOG_MILLS_STRIDE - 1
    width = 1.0 / SKS_LOG_MILLS_PER_UNIT
    order = degree + 1
    u = chebyshev.chebpts1(order)
    centres = width * (np.arange(n_pieces) + 0.5)
    values = fun(centres[:, None] + u[None, :] * (0.5 * width))
    cheb = values @ chebyshev.chebvander(u, degree)
    cheb[:, 0] /= order
    cheb[:, 1:] /= 0.5 * order
    to_power = np.zeros((order, order))
    for j in range(order):
        power = chebyshev.cheb2poly(np.eye(order)[j])
        to_power[j, :power.size] = power
    return cheb @ to_power


def log_mills_table():
    """The coefficients of ``sks_log_ndtr_tab`` (_special.pxd): per piece
    [i / 16, (i + 1) / 16) of x, the polynomial of degree 6 in u = 32 (x -
    centre) that interpolates L(x) = log(Q(x) / phi(x)) = log sqrt(pi / 2)
    + log erfcx(x / sqrt 2) at the Chebyshev points (built once, on first
    use; measured within 1.1e-15 of log Phi(-x) relative, against mpmath).

    Returns
    -------
    table : ndarray of shape (1024, 7), read-only
        Constant term first.

    Examples
    --------
    >>> from sksoftmax._shared._special import log_mills_table
    >>> log_mills_table().shape
    (1024, 7)
    """
    global _LOG_MILLS_TABLE
    if _LOG_MILLS_TABLE is None:
        from scipy.special import erfcx

        def log_mills(x):
            return 0.5 * np.log(np.pi / 2.0) + np.log(
                erfcx(x / np.sqrt(2.0)))

        table = _chebyshev_pieces(log_mills)
        table.setflags(write=False)
        _LOG_MILLS_TABLE = table
    return _LOG_MILLS_TABLE


def log_ndtr_tab_array(x):
    """log Phi(x) by the quadrature's tabulated evaluation
    (``sks_log_ndtr_tab``, for x > -64), elementwise.

    Parameters
    ----------
    x : array-like

    Returns
    -------
    out : ndarray of float64, same shape as x
    """
    arr = np.ascontiguousarray(x, dtype=np.float64)
    flat = arr.reshape(-1)
    out = np.empty_like(flat)
    cdef const double[::1] xv = flat
    cdef double[::1] ov = out
    cdef const double[:, ::1] table = log_mills_table()
    cdef Py_ssize_t i
    with nogil:
        for i in range(xv.shape[0]):
            ov[i] = sks_log_ndtr_tab(xv[i], &table[0, 0])
    return out.reshape(arr.shape)


def log_sigmoid_row_array(double t, psi):
    """log sigma(t - psi_k) for every k by the quadrature's vectorised
    loop (``sks_log_sigmoid_row``).

    Parameters
    ----------
    t : float
    psi : array-like of shape (n,)

    Returns
    -------
    out : ndarray of float64 of shape (n,)
    """
    cdef const double[::1] pv = np.ascontiguousarray(psi, dtype=np.float64)
    out = np.empty(pv.shape[0])
    cdef double[::1] ov = out
    if pv.shape[0]:
        sks_log_sigmoid_row(t, &pv[0], &ov[0], pv.shape[0])
    return out


# ---- the quadrature's row functions (_special_rows.pxd)
from sksoftmax._shared._special_rows cimport (sks_sg_value, sks_normal_row,
                                              sks_logistic_row, SKS_SG_SIGNED,
                                              SKS_SG_DIRECT)

_SIGNED_TABLE = None


def _log_neg_log_ndtr_plus(z):
    """G(z) = log(-log Phi(z)) + z^2 / 2 + log sqrt(2 pi) for z >= 0,
    without underflow: -log Phi = Q rho(Q), Q = 1 - Phi(z) = erfcx(z /
    sqrt 2) e^(-z^2 / 2) / 2 and rho(Q) = -log1p(-Q) / Q, so G = L(z) +
    log rho(Q) with L the log Mills ratio of ``log_mills_table``."""
    from scipy.special import erfc, erfcx

    z = np.asarray(z, dtype=np.float64)
    big_l = 0.5 * np.log(np.pi / 2.0) + np.log(erfcx(z / np.sqrt(2.0)))
    q = 0.5 * erfc(z / np.sqrt(2.0))
    small = q < 1e-4
    qs = np.where(small, q, 0.0)
    # log rho = log1p(q / 2 + q^2 / 3 + q^3 / 4 + q^4 / 5) for small q
    series = np.log1p(qs * (0.5 + qs * (1.0 / 3.0 + qs * (0.25 + qs * 0.2))))
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.log(-np.log1p(-q) / q)
    return big_l + np.where(small, series, direct)


def log_ndtr_signed_table():
    """The coefficients of the quadrature's log Phi tables
    (``sks_sg_value``, _special_rows.pxd): 1,024 pieces of 1/16 of the
    log Mills ratio at x = -z (``log_mills_table``, for z < 0), then 1,024
    pieces of G(z) = log(-log Phi(z)) + z^2 / 2 + log sqrt(2 pi) and
    1,024 pieces of log Phi(z), both for z >= 0 (Chebyshev interpolation
    of degree 6 per piece, as there; built once, on first use).

    Returns
    -------
    table : ndarray of shape (3072, 7), read-only
        Constant term first.

    Examples
    --------
    >>> from sksoftmax._shared._special import log_ndtr_signed_table
    >>> log_ndtr_signed_table().shape
    (3072, 7)
    """
    global _SIGNED_TABLE
    if _SIGNED_TABLE is None:
        from scipy.special import log_ndtr

        table = np.vstack([
            log_mills_table(),
            _chebyshev_pieces(_log_neg_log_ndtr_plus),
            _chebyshev_pieces(log_ndtr),
        ])
        table.setflags(write=False)
        _SIGNED_TABLE = table
    return _SIGNED_TABLE


def log_ndtr_signed_array(x, direct=False):
    """g(x) of the quadrature's log Phi tables elementwise (x > -64): log
    Phi(x) for x < 0; for x >= 0 log(-log Phi(x)) (the signed table) or
    log Phi(x) (``direct``, the core grid's).

    Parameters
    ----------
    x : array-like
    direct : bool, default=False

    Returns
    -------
    out : ndarray of float64, same shape as x
    """
    arr = np.ascontiguousarray(x, dtype=np.float64)
    flat = arr.reshape(-1)
    out = np.empty_like(flat)
    cdef const double[::1] xv = flat
    cdef double[::1] ov = out
    cdef const double[:, ::1] table = log_ndtr_signed_table()
    cdef Py_ssize_t i
    cdef int mode = SKS_SG_DIRECT if direct else SKS_SG_SIGNED
    with nogil:
        for i in range(xv.shape[0]):
            ov[i] = sks_sg_value(xv[i], &table[0, 0], mode)
    return out.reshape(arr.shape)


def normal_row_array(double t, psi, Py_ssize_t n_neg, Py_ssize_t n_far,
                     with_ratio=True):
    """The quadrature's normal row at t (``sks_normal_row``): log Phi(t -
    psi_k) for k < n_far (nan beyond) and, ``with_ratio``, e^-5 phi /
    Phi(t - psi_k) for every k (else nan); the caller vouches for the
    regions (t - psi_k < 0 below n_neg, at least 10, or 40 without the
    ratio, from n_far on).

    Parameters
    ----------
    t : float
    psi : array-like of shape (n,)
    n_neg, n_far : int
    with_ratio : bool, default=True

    Returns
    -------
    lc, r : ndarrays of float64 of shape (n,)
    """
    cdef const double[::1] pv = np.ascontiguousarray(psi, dtype=np.float64)
    cdef Py_ssize_t n = pv.shape[0]
    if not 0 <= n_neg <= n_far <= n:
        raise ValueError("need 0 <= n_neg <= n_far <= len(psi)")
    lc = np.full(n, np.nan)
    r = np.full(n, np.nan)
    cdef double[::1] lv = lc
    cdef double[::1] rv = r
    cdef const double[:, ::1] table = log_ndtr_signed_table()
    if n:
        sks_normal_row(t, &pv[0], n, n_neg, n_far, &table[0, 0], &lv[0],
                       &rv[0] if with_ratio else NULL)
    return lc, r


def logistic_row_array(double t, psi, Py_ssize_t n_lo, Py_ssize_t n_hi):
    """The quadrature's logistic row at t (``sks_logistic_row``): log
    sigma(t - psi_k) and sigma(psi_k - t) for every k; the caller vouches
    for the regions (t - psi_k <= -15 below n_lo, >= 15 from n_hi on).

    Parameters
    ----------
    t : float
    psi : array-like of shape (n,)
    n_lo, n_hi : int

    Returns
    -------
    lc, r : ndarrays of float64 of shape (n,)
    """
    p = np.ascontiguousarray(psi, dtype=np.float64)
    cdef const double[::1] pv = p
    cdef Py_ssize_t n = pv.shape[0]
    if not 0 <= n_lo <= n_hi <= n:
        raise ValueError("need 0 <= n_lo <= n_hi <= len(psi)")
    with np.errstate(over="ignore"):
        ep_arr = np.exp(p)
        en_arr = np.exp(-p)
    cdef const double[::1] ep = ep_arr
    cdef const double[::1] en = en_arr
    lc = np.empty(n)
    r = np.empty(n)
    cdef double[::1] lv = lc
    cdef double[::1] rv = r
    if n:
        sks_logistic_row(t, &pv[0], &ep[0], &en[0], n, n_lo, n_hi, &lv[0],
                         &rv[0])
    return lc, r


def cpu_dispatch():
    """The instruction set the kernels dispatch to in this process.

    'generic' (x86-64's baseline, or any other architecture), 'avx2' (AVX2
    and FMA) or 'avx512' (also AVX-512 F, DQ and VL): what the CPU has,
    capped by the environment variable ``SKSOFTMAX_CPU_DISPATCH``
    ('generic' or 'avx2'), read once when the first kernel runs.
    """
    return ("generic", "avx2", "avx512")[sks_cpu_level()]
