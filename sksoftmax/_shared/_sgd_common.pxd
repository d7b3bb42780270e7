# Codes shared by the stochastic-gradient kernels: learning-rate schedules and
# the status a kernel returns when it stops early.

cdef enum Schedule:
    SCHEDULE_CONSTANT = 0
    SCHEDULE_EXPONENTIAL = 1    # eta0 * decay**epoch, given per epoch
    SCHEDULE_INVSCALING = 2     # eta0 / t**power_t: recomputed per row
    # per-feature steps eta0 / sqrt(eps + G_j) (U-max, Implicit SGD): the
    # row's scalar step is eta0, the kernels scale it per feature through
    # the state of _adagrad
    SCHEDULE_ADAGRAD = 3


cdef enum Status:
    STATUS_OK = 0
    STATUS_OVERFLOW = 1         # an exponent past MAX_EXPONENT
    STATUS_NONFINITE = 2        # u, a score or ||W|| became inf or NaN


# exp(709.78) overflows double; stop well before so the caller can report it.
cdef enum:
    MAX_EXPONENT = 700


cdef inline double step_size(int schedule, double eta_epoch, double eta0,
                             double power_t, long long t) noexcept nogil:
    """Learning rate for the t-th row (t >= 1) of the whole fit."""
    if schedule == SCHEDULE_INVSCALING:
        return eta0 / (<double>t) ** power_t
    return eta_epoch
