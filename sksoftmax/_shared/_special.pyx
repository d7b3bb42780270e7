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
        from numpy.polynomial import chebyshev
        from scipy.special import erfcx

        n_pieces, degree = SKS_LOG_MILLS_PIECES, SKS_LOG_MILLS_STRIDE - 1
        width = 1.0 / SKS_LOG_MILLS_PER_UNIT
        table = np.zeros((n_pieces, degree + 1))
        for i in range(n_pieces):
            centre = width * (i + 0.5)

            def log_mills(u, centre=centre):
                x = centre + u * (0.5 * width)
                return 0.5 * np.log(np.pi / 2.0) + np.log(
                    erfcx(x / np.sqrt(2.0)))

            coef = chebyshev.cheb2poly(
                chebyshev.chebinterpolate(log_mills, degree))
            table[i, :coef.size] = coef
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
