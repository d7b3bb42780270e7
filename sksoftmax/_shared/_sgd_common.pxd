# What the stochastic-gradient kernels share besides the codes of
# ``_codes.pxd``: the overflow threshold and the step of a schedule.
from sksoftmax._shared._codes cimport SCHEDULE_INVSCALING


# exp(709.78) overflows double; stop well before so the caller can report it.
cdef enum:
    MAX_EXPONENT = 700


cdef inline double step_size(int schedule, double eta_epoch, double eta0,
                             double power_t, long long t) noexcept nogil:
    """Learning rate for the t-th row (t >= 1) of the whole fit."""
    if schedule == SCHEDULE_INVSCALING:
        return eta0 / (<double>t) ** power_t
    return eta_epoch

