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


cdef struct StepSchedule:
    # a schedule as the kernels' options take it (``schedule_options`` of
    # _sgd_schedule.py builds it): its code (_codes.pxd), this epoch's
    # rate, and invscaling's eta0 and power_t
    int code
    double eta_epoch
    double eta0
    double power_t


cdef inline double schedule_step(const StepSchedule* s,
                                 long long t) noexcept nogil:
    """``step_size`` of the schedule ``s`` for the t-th row."""
    return step_size(s.code, s.eta_epoch, s.eta0, s.power_t, t)
