# The codes the kernels and the Python side share, defined once: the status
# a kernel returns and the learning-rate schedules. The kernels cimport
# them from here; Python reads them from the compiled module ``_codes``
# (``from sksoftmax._shared._codes import Schedule, Status``: the enums as
# Python ``IntFlag`` classes whose members carry these names), never
# retyping a number.

cpdef enum Status:
    STATUS_OK = 0
    STATUS_OVERFLOW = 1         # an exponent past MAX_EXPONENT (_sgd_common)
    STATUS_NONFINITE = 2        # a score, a variable or ||W|| became inf/NaN
    # a class the epoch moves has no row of a per-class buffer the caller
    # allocates (SCENT's momentum V)
    STATUS_NO_ROW = 3


cpdef enum Schedule:
    SCHEDULE_CONSTANT = 0
    SCHEDULE_EXPONENTIAL = 1    # eta0 * decay**epoch, given per epoch
    SCHEDULE_INVSCALING = 2     # eta0 / t**power_t: recomputed per row
    # per-feature steps eta0 / sqrt(eps + G_j) (U-max, Implicit SGD:
    # ``_adagrad``; augment and reduce: ``_adaptive_schedule``): the row's
    # scalar step is eta0, the kernels scale it per feature
    SCHEDULE_ADAGRAD = 3
    # Kucukelbir et al.'s per-coordinate step (augment and reduce only,
    # ``_adaptive_schedule``)
    SCHEDULE_ADAPTIVE = 4
