# Numerically safe special functions for the kernels, all inline and nogil.
from libc.math cimport exp, log, log1p, fabs, isnan, erfc, tanh, INFINITY


cdef inline double log1pexp(double x) noexcept nogil:
    """log(1 + e^x) for any x, without overflow or cancellation."""
    if x > 36.0:
        # log1p(e^-x) = e^-x to double precision here
        return x + exp(-x)
    if x < -37.0:
        # log1p(e^x) = e^x (1 - e^x / 2 + ...) and e^x < 1e-16
        return exp(x)
    return log1p(exp(x))


cdef inline double logaddexp(double a, double b) noexcept nogil:
    """log(e^a + e^b), also for infinite a or b."""
    if a == b:
        return a + 0.6931471805599453   # log 2; also covers a = b = +-inf
    if a > b:
        return a + log1pexp(b - a)
    return b + log1pexp(a - b)


cdef inline double logsumexp(const double* a, Py_ssize_t n) noexcept nogil:
    """log(sum_i e^{a_i}) with the max shift; -inf for n == 0."""
    cdef Py_ssize_t i
    cdef double m = -INFINITY, s = 0.0
    for i in range(n):
        if a[i] > m or isnan(a[i]):
            m = a[i]
    if n == 0 or m == INFINITY or m == -INFINITY or isnan(m):
        return m
    for i in range(n):
        s += exp(a[i] - m)
    return m + log(s)


cdef inline double wright_omega(double x) noexcept nogil:
    """Wright omega: the w > 0 with w + log w = x, i.e. W_0(e^x).

    Evaluated from x, never forming e^x where it could overflow (x can be
    1e6). Initial guesses by region as in Lawrence, Corless & Jeffrey (2012,
    ACM TOMS Algorithm 917), refined by at most three fourth-order
    Fritsch-Shafer-Crowley steps on r = x - w - log w; relative error below
    1e-15 in practice.
    """
    cdef double w, r, q, t, wp1
    cdef int it
    if isnan(x):
        return x
    if x == INFINITY:
        return x
    if x < -36.0:
        # W(z) = z - z^2 + ...: e^x alone is exact to double precision
        return exp(x)
    if x <= -2.0:
        t = exp(x)
        w = t * (1.0 - t * (1.0 - 1.5 * t))
    elif x <= 1.0:
        t = x - 1.0
        # Taylor series of omega around x = 1, where omega(1) = 1
        w = 1.0 + t * (0.5 + t * (1.0 / 16.0 + t * (-1.0 / 192.0
                      + t * (-1.0 / 3072.0 + t * 13.0 / 61440.0))))
    else:
        t = log(x)
        w = x - t + t / x
    for it in range(3):
        r = x - w - log(w)
        if fabs(r) <= 1e-17 * (1.0 + fabs(x)):
            break
        wp1 = 1.0 + w
        q = 2.0 * wp1 * (wp1 + (2.0 / 3.0) * r)
        w = w * (1.0 + (r / wp1) * (q - r) / (q - 2.0 * r))
    return w


# ---- noise models of augment and reduce (Ruiz et al. 2018, Sec. 3.2) ----
# log Phi and its derivative phi / Phi for the standard normal, evaluated in
# log space so that they stay accurate far in the lower tail, where Phi itself
# underflows (Phi(-40) ~ 1e-350).

cdef inline double _mills_series(double x) noexcept nogil:
    """S(x) = 1 - 1/x^2 + 3/x^4 - 15/x^6 + ..., Phi(x) = phi(x) S(x) / (-x).

    The asymptotic series of the normal tail; used for x <= -20 only, where
    twelve terms are accurate to 1e-17 (the k-th term is (2k-1)!! / x^2k).
    """
    cdef double z = 1.0 / (x * x), term = 1.0, s = 1.0
    cdef int k
    for k in range(1, 13):
        term = -term * (2 * k - 1) * z
        s += term
    return s


cdef inline double log_ndtr(double x) noexcept nogil:
    """log Phi(x) of the standard normal, accurate for every finite x.

    erfc keeps full relative accuracy down to x = -20 (Phi ~ 3e-89); below,
    the asymptotic series gives log Phi directly, without forming Phi.
    """
    if x >= 0.0:
        # Phi = 1 - erfc(x / sqrt 2) / 2: log1p avoids the cancellation
        return log1p(-0.5 * erfc(x * 0.7071067811865476))
    if x > -20.0:
        return log(0.5 * erfc(-x * 0.7071067811865476))
    return (-0.5 * x * x - log(-x) - 0.9189385332046728
            + log(_mills_series(x)))


cdef inline double ndtr_mills(double x) noexcept nogil:
    """phi(x) / Phi(x) = d/dx log Phi(x), the inverse Mills ratio at -x.

    Grows like -x in the lower tail; computed there from the series, never
    as a ratio of two underflowing numbers. Above -20 both phi (>= e^-200)
    and Phi (>= 3e-89) are normal numbers with full relative accuracy.
    """
    if x <= -20.0:
        return -x / _mills_series(x)
    return (0.3989422804014327 * exp(-0.5 * x * x)
            / (0.5 * erfc(-x * 0.7071067811865476)))


cdef inline double log_ndtr_mills(double x, double* mills) noexcept nogil:
    """log_ndtr(x), with ndtr_mills(x) in ``mills``: one erfc for both."""
    cdef double phi_x, tail
    if x <= -20.0:
        mills[0] = -x / _mills_series(x)
        return log_ndtr(x)
    phi_x = 0.3989422804014327 * exp(-0.5 * x * x)
    if x >= 0.0:
        tail = 0.5 * erfc(x * 0.7071067811865476)     # 1 - Phi
        mills[0] = phi_x / (1.0 - tail)
        return log1p(-tail)
    tail = 0.5 * erfc(-x * 0.7071067811865476)        # Phi
    mills[0] = phi_x / tail
    return log(tail)


cdef inline double log_sigmoid(double x) noexcept nogil:
    """log sigma(x) = -log(1 + e^-x), the log-CDF of the standard logistic."""
    return -log1pexp(-x)


cdef inline double sigmoid(double x) noexcept nogil:
    """1 / (1 + e^-x) for any x (0 at -inf, 1 at +inf), no overflow."""
    cdef double e
    if x >= 0.0:
        return 1.0 / (1.0 + exp(-x))
    e = exp(x)
    return e / (1.0 + e)


cdef inline double bound_beta(double r) noexcept nogil:
    """tanh(r / 2) / (2 r), the curvature weight of Jebara's bound.

    Choromanska & Jebara (2013), Alg. 1, with r = log(alpha / z): even in r,
    1/4 at r = 0 (the series 1/4 (1 - r^2/12 + r^4/120 - 17 r^6/20160)
    below |r| = 0.05, where the quotient would lose digits), 1 / (2 |r|) for
    large |r| and 0 at r = +-inf (the first term of the enumeration).
    """
    cdef double r2
    if isnan(r):
        return r
    r = fabs(r)
    if r == INFINITY:
        return 0.0
    if r < 0.05:
        r2 = r * r
        return 0.25 * (1.0 - r2 / 12.0 * (1.0 - r2 / 10.0
                                         * (1.0 - r2 * 17.0 / 168.0)))
    return tanh(0.5 * r) / (2.0 * r)
