# The noise models of augment and reduce (softmax: Gumbel, probit: normal,
# logistic: logistic), inline for the kernels of _augment_reduce_fast.pyx.tp:
# their draws, log densities, log CDFs and curvatures.
from libc.math cimport exp, expm1, log, log1p, sqrt, cos, tanh, fabs

from sksoftmax._shared._random cimport rng_state, rng_uniform
from sksoftmax._shared._special cimport (log1pexp, ndtr_mills,
                                 log_ndtr_mills, sigmoid)

cdef enum:
    MODEL_SOFTMAX = 0
    MODEL_PROBIT = 1
    MODEL_LOGISTIC = 2

cdef extern from *:
    """
    #define SKS_AR_LOG_SQRT_2PI 0.9189385332046728
    #define SKS_AR_TWO_PI 6.283185307179586
    /* smallest positive draw of rng_uniform is 2^-53; 2^-54 stands in
       for 0 */
    #define SKS_AR_TINY_UNIFORM 5.551115123125783e-17
    """
    const double LOG_SQRT_2PI "SKS_AR_LOG_SQRT_2PI"
    const double TWO_PI "SKS_AR_TWO_PI"
    const double TINY_UNIFORM "SKS_AR_TINY_UNIFORM"


cdef inline double draw_noise(rng_state* st, int model) noexcept nogil:
    """One draw u of q^(rep): N(0, 1) (probit) or standard logistic.

    Normal draws by the cosine half of Box-Muller from two uniforms, logistic
    ones by inversion, logit(U): both use rng_uniform only, so the NumPy
    reference reproduces them exactly.
    """
    cdef double u1, u2
    if model == MODEL_PROBIT:
        u1 = 1.0 - rng_uniform(st)          # in (0, 1]
        u2 = rng_uniform(st)
        return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2)
    u1 = rng_uniform(st)
    if u1 == 0.0:
        u1 = TINY_UNIFORM
    return log(u1) - log1p(-u1)


cdef inline double noise_log_pdf(double e, int model) noexcept nogil:
    if model == MODEL_PROBIT:
        return -0.5 * e * e - LOG_SQRT_2PI
    return -log1pexp(-e) - log1pexp(e)


cdef inline double noise_dlog_pdf(double e, int model) noexcept nogil:
    if model == MODEL_PROBIT:
        return -e
    # d/de [log sigma(e) + log sigma(-e)] = 1 - 2 sigma(e)
    return -tanh(0.5 * e)


cdef inline double noise_dlog_cdf(double z, int model) noexcept nogil:
    if model == MODEL_PROBIT:
        return ndtr_mills(z)
    return sigmoid(-z)


cdef inline double noise_log_cdf_dlog(double z, int model,
                                      double* dlog) noexcept nogil:
    """noise_log_cdf(z), with noise_dlog_cdf(z) in ``dlog``, sharing work."""
    cdef double e
    if model == MODEL_PROBIT:
        return log_ndtr_mills(z, dlog)
    # log sigma(z) and sigma(-z) from one exp(-|z|)
    e = exp(-fabs(z))
    if z >= 0.0:
        dlog[0] = e / (1.0 + e)
        return -log1p(e)
    dlog[0] = 1.0 / (1.0 + e)
    return z - log1p(e)


cdef inline double noise_curv_pdf(double e, int model) noexcept nogil:
    """-(log pdf)''(e): 1 (normal), 2 sigma(e) sigma(-e) (logistic)."""
    cdef double th
    if model == MODEL_PROBIT:
        return 1.0
    th = tanh(0.5 * e)
    return 0.5 * (1.0 - th * th)


cdef inline double noise_curv_cdf(double z, double dlog,
                                  int model) noexcept nogil:
    """-(log cdf)''(z) from dlog = (log cdf)'(z): r (z + r) with r the
    Mills ratio (normal; in (0, 1), clipped there against the
    cancellation of z + r far left) or sigma(-z) sigma(z) (logistic)."""
    cdef double v
    if model == MODEL_PROBIT:
        v = dlog * (z + dlog)
        if v < 0.0:
            return 0.0
        return 1.0 if v > 1.0 else v
    return dlog * (1.0 - dlog)


cdef inline double softplus_inv(double s) noexcept nogil:
    """gamma with log(1 + exp(gamma)) = s > 0."""
    if s > 30.0:
        return s + log1p(-exp(-s))
    return log(expm1(s))


cdef inline double log_q(double u, double scale, int model) noexcept nogil:
    """log q(eps) at eps = mu + scale * u (Gaussian or logistic q)."""
    return noise_log_pdf(u, model) - log(scale)
