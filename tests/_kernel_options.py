"""The kernels' option structs as dicts, for the tests that call a kernel
directly: each function takes the struct's fields by name (the schedule's
as ``schedule``, ``eta_epoch``, ``eta0``, ``power_t``) and fills in the
ones a test leaves out with neutral values."""

import numpy as np


def _schedule(schedule, eta_epoch, eta0, power_t):
    return {
        "code": int(schedule),
        "eta_epoch": float(eta_epoch),
        "eta0": float(eta_epoch if eta0 is None else eta0),
        "power_t": float(power_t),
    }


def umax_options(*, n_sampled, init_u, eta_epoch, delta=1.0, vanilla=False,
                 raman=False, schedule=0, eta0=None, power_t=0.5, alpha=0.0,
                 bound_w=np.inf, bound_u=np.inf, weight_log_k=np.inf,
                 fit_intercept=True, shuffle=True, n_threads=1):
    """UMaxOptions of ``_umax_fast``."""
    return {
        "n_sampled": n_sampled,
        "delta": delta,
        "vanilla": vanilla,
        "raman": raman,
        "init_u": init_u,
        "schedule": _schedule(schedule, eta_epoch, eta0, power_t),
        "alpha": alpha,
        "bound_w": bound_w,
        "bound_u": bound_u,
        "weight_log_k": weight_log_k,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
        "n_threads": n_threads,
    }


def implicit_options(*, n_sampled, init_u, eta_epoch, schedule=0, eta0=None,
                     power_t=0.5, alpha=0.0, fit_intercept=True, shuffle=True,
                     raise_u=False, n_threads=1):
    """ImplicitOptions of ``_implicit_fast``."""
    return {
        "n_sampled": n_sampled,
        "init_u": init_u,
        "schedule": _schedule(schedule, eta_epoch, eta0, power_t),
        "alpha": alpha,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
        "raise_u": raise_u,
        "n_threads": n_threads,
    }


def sampled_options(*, loss, batch_size, n_sampled, eta_epoch, schedule=0,
                    eta0=None, power_t=0.5, alpha=0.0, fit_intercept=True,
                    shuffle=True, n_threads=1):
    """SampledOptions of ``_sampled_fast``."""
    return {
        "loss": loss,
        "batch_size": batch_size,
        "n_sampled": n_sampled,
        "schedule": _schedule(schedule, eta_epoch, eta0, power_t),
        "alpha": alpha,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
        "n_threads": n_threads,
    }


def scent_options(*, batch_size, mode, uniform, alpha_nu, beta, eta_epoch,
                  schedule=0, eta0=None, power_t=0.5, warmup=0, alpha=0.0,
                  fit_intercept=True, shuffle=True, lazy_momentum=False,
                  n_threads=1):
    """ScentOptions of ``_scent_fast``."""
    return {
        "batch_size": batch_size,
        "mode": mode,
        "uniform": uniform,
        "alpha_nu": alpha_nu,
        "beta": beta,
        "schedule": _schedule(schedule, eta_epoch, eta0, power_t),
        "warmup": warmup,
        "alpha": alpha,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
        "lazy_momentum": lazy_momentum,
        "n_threads": n_threads,
    }


def ar_options(*, model, batch_size, n_sampled, init_local, eta_epoch,
               schedule=0, eta0=None, power_t=0.5, decay=0.9, local_rate=1.0,
               per_row=True, alpha=0.0, fit_intercept=True, shuffle=True,
               n_threads=1, natural_local=False):
    """AROptions of ``_augment_reduce_fast``."""
    return {
        "model": model,
        "batch_size": batch_size,
        "n_sampled": n_sampled,
        "init_local": init_local,
        "schedule": _schedule(schedule, eta_epoch, eta0, power_t),
        "decay": decay,
        "local_rate": local_rate,
        "per_row": per_row,
        "alpha": alpha,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
        "n_threads": n_threads,
        "natural_local": natural_local,
    }


def bound_options(*, surrogate, row_scale, alpha, eta_epoch, alpha_b=None,
                  schedule=0, eta0=None, power_t=0.5, batch_size=1,
                  fit_intercept=True, shuffle=True, n_directions=1):
    """BoundOptions of ``_bound_fast``."""
    return {
        "surrogate": surrogate,
        "row_scale": row_scale,
        "alpha": alpha,
        "alpha_b": alpha if alpha_b is None else alpha_b,
        "schedule": _schedule(schedule, eta_epoch, eta0, power_t),
        "batch_size": batch_size,
        "fit_intercept": fit_intercept,
        "shuffle": shuffle,
        "n_directions": n_directions,
    }
