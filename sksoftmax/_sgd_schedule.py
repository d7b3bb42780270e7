"""Learning-rate schedules of the stochastic-gradient estimators.

The integer codes are ``Schedule`` of ``_shared/_codes.pxd``, read from
its compiled module. Per-epoch schedules are resolved here; 'invscaling'
changes every row, so the kernels recompute it from the row counter ``t``.
"""

from collections import namedtuple

from ._shared._codes import Schedule as _Code

Schedule = namedtuple("Schedule", ["code", "eta_for_epoch"])


def _fixed(eta0, decay, epoch):
    return eta0


SCHEDULES = {
    "constant": Schedule(int(_Code.SCHEDULE_CONSTANT), _fixed),
    # Fagan & Iyengar (2018), Sec. 4.1: the rate drops by `decay` each epoch.
    "exponential": Schedule(
        int(_Code.SCHEDULE_EXPONENTIAL),
        lambda eta0, decay, epoch: eta0 * decay**epoch,
    ),
    "invscaling": Schedule(int(_Code.SCHEDULE_INVSCALING), _fixed),
}

# Per-feature steps (U-max and Implicit SGD only): the kernels take eta0 as
# the scalar step and scale it per feature by 1 / sqrt(eps + G_j) through
# the state of ``_adagrad``; it does not decay with the epochs (AdaGrad's
# accumulators decrease the steps).
ADAGRAD = "adagrad"
PER_FEATURE_SCHEDULES = {
    **SCHEDULES,
    ADAGRAD: Schedule(int(_Code.SCHEDULE_ADAGRAD), _fixed),
}


def schedule_options(code, eta_epoch, eta0, power_t):
    """The kernels' ``StepSchedule`` struct (``_sgd_common.pxd``) as a dict:
    the schedule's code, this epoch's rate and invscaling's eta0 and
    power_t."""
    return {
        "code": int(code),
        "eta_epoch": float(eta_epoch),
        "eta0": float(eta0),
        "power_t": float(power_t),
    }
