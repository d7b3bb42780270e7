from libc.math cimport sqrt
# Kucukelbir et al.'s per-coordinate step size (ADVI, JMLR 2017), the
# default schedule of augment and reduce (Ruiz et al. 2018, Sec. 4):
#     rho_t g / (1 + sqrt(s_t)),  s_t = 0.1 g_t^2 + 0.9 s_{t-1}, s_1 = g_1^2.
# A step without gradient only multiplies s by 0.9, so each coordinate
# stores u = s / f with f = 0.9^(t - t_base) shared by all coordinates
# (t_base: the last multiple of ADAPTIVE_REBASE steps, when every u is
# multiplied by 0.9^ADAPTIVE_REBASE). A coordinate without gradient then
# needs no work at all (u unchanged, step 0); one with gradient g takes
#     u <- u + 0.1 g^2 / f,   step = rho g / (1 + sqrt(f u)),
# or u = g^2 / f at its first nonzero gradient (u < 0 marks "never").
#
# The same code is AdaGrad (Duchi, Hazan & Singer 2011), s_t = s_{t-1} +
# g_t^2 and step rho g / (1 + sqrt(s_t)), when the caller passes w_new = 1
# (the weight of the new g^2, 0.1 above), f = 1 and never rebases: u is
# then s itself.

cdef enum:
    # 0.9^-512 = e^54: f and 1/f stay far from overflow
    ADAPTIVE_REBASE = 512


cdef inline double adaptive_step(double* u, double g, double rho, double f,
                                 double inv_f, double w_new) noexcept nogil:
    """Update one coordinate's u with gradient g (weight w_new for g^2);
    return its step."""
    cdef double gg = g * g * inv_f
    if g == 0.0:
        return 0.0
    u[0] = u[0] + w_new * gg if u[0] >= 0.0 else gg
    return rho * g / (1.0 + sqrt(f * u[0]))


# adaptive_step over a whole row of W (a separate module, so that these
# loops are compiled, and vectorised, on their own rather than inlined)
cdef double adaptive_sweep64(double* w, double* u, double* g, Py_ssize_t n,
                             double rho, double f, double inv_f,
                             double inv_scale, bint track,
                             double w_new) noexcept nogil
cdef double adaptive_sweep32(float* w, double* u, double* g, Py_ssize_t n,
                             double rho, double f, double inv_f,
                             double inv_scale, bint track,
                             double w_new) noexcept nogil
cdef void adaptive_rebase(double* u, Py_ssize_t n) noexcept nogil
