"""Learning-rate schedules of the stochastic-gradient estimators.

The integer codes match ``Schedule`` in ``_sgd_common.pxd``. Per-epoch
schedules are resolved here; 'invscaling' changes every row, so the kernels
recompute it from the row counter ``t``.
"""

from collections import namedtuple

Schedule = namedtuple("Schedule", ["code", "eta_for_epoch"])

SCHEDULES = {
    "constant": Schedule(0, lambda eta0, decay, epoch: eta0),
    # Fagan & Iyengar (2018), Sec. 4.1: the rate drops by `decay` each epoch.
    "exponential": Schedule(1, lambda eta0, decay, epoch: eta0 * decay**epoch),
    "invscaling": Schedule(2, lambda eta0, decay, epoch: eta0),
}

# Per-feature steps (U-max and Implicit SGD only): the kernels take eta0 as
# the scalar step and scale it per feature by 1 / sqrt(eps + G_j) through
# the state of ``_adagrad``; it does not decay with the epochs (AdaGrad's
# accumulators decrease the steps).
ADAGRAD = "adagrad"
PER_FEATURE_SCHEDULES = {
    **SCHEDULES,
    ADAGRAD: Schedule(3, lambda eta0, decay, epoch: eta0),
}
