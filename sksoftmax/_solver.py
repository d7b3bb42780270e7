"""Solvers: a method's epochs, apart from the estimator (private).

A solver is built from the estimator's hyperparameters (once per epoch,
``_make_solver``; n_classes among them) and runs one epoch of the
method's Cython kernel on a :class:`TrainingState`; it keeps no reference
to the estimator. The interface, in the spirit of scikit-learn's
``_glm/_newton_solver.py``:

- ``setup(n_features, dtype, random_state, class_count,
  max_row_weight)``: a fresh :class:`TrainingState` for a model of that
  shape (zero weights, the intercepts at the class prior of the counts,
  a new generator, the sampler's table, the method's own state), from
  the same functions as the estimator's ``fit`` (``_class_prior``); the
  eta0 pilot (``_eta0_pilot``) trains from it, on a copy of the counts;
- ``epoch(state, dataset, weights, y, row_state, order, eta_epoch,
  first_visit)``: one pass over the rows; returns the objective estimate
  (sum, weight) and advances ``state.t``; raises :class:`EpochDiverged`
  (``what``, ``row``, ``value``) when the kernel reports a divergence;
- ``new_row_state(n_rows)``: the per-row variables of a pass (None when
  the method has none).

The state that is pickled stays the estimator's (``coef_``,
``intercept_``, ``t_``, ``_rng``, ...): its ``_run_epoch`` hands the
solver a :class:`TrainingState` over those arrays, no copy.
"""

import copy

import numpy as np

from ._class_prior import new_weights, start_at_prior
from ._class_sampler import frequency_weights
from ._prediction import SoftmaxPredictionMixin
from ._sgd_schedule import schedule_options
from ._shared._adagrad import make_adagrad
from ._shared._random import AliasTable, RandomState
from .exceptions import DivergenceError


class EpochDiverged(DivergenceError):
    """A kernel's divergence report: ``what`` happened at ``row``."""

    def __init__(self, what, row, value):
        super().__init__(f"{what} at row {row} (value {value:.6g})")
        self.what, self.row, self.value = what, row, value


class TrainingState:
    """What an epoch reads and advances.

    Attributes
    ----------
    coef, intercept : ndarray
        The iterate the steps continue from.
    rng : RandomState
        The generator of row orders and class draws.
    t : int
        Rows processed so far (the 'invscaling' schedule reads it).
    sampler : AliasTable or None
        The 'frequency' sampler's table (None: uniform draws).
    sq_grad, sq_grad_intercept : ndarray or None
        The accumulators of ``learning_rate='adagrad'`` (None otherwise).
    **extra
        A method's own state (SCENT's momentum, ...), as attributes.
    """

    def __init__(
        self,
        coef,
        intercept,
        rng,
        t=0,
        sampler=None,
        sq_grad=None,
        sq_grad_intercept=None,
        **extra,
    ):
        self.__dict__.update(extra)
        self.coef = coef
        self.intercept = intercept
        self.rng = rng
        self.t = t
        self.sampler = sampler
        self.sq_grad = sq_grad
        self.sq_grad_intercept = sq_grad_intercept


class SGDSolver:
    """Base of the sampled-class SGD solvers (U-max, Implicit SGD).

    Parameters
    ----------
    n_classes : int
        Classes of the model.
    eta0 : float
        The initial step (``eta0_``).
    schedule_code : int
        The kernels' schedule code (``_sgd_schedule``).
    power_t, alpha, fit_intercept, shuffle
        The estimator's parameters of those names.
    n_threads : int
        Threads of an epoch (above 1: lock-free).
    sampler : {'uniform', 'frequency'}
        How classes are drawn; ``sampler_power`` the exponent of the
        counts for 'frequency'.
    adagrad : bool
        Per-feature steps (``learning_rate='adagrad'``).
    """

    # (float64 kernel, float32 kernel) of the method
    kernels = None

    def __init__(
        self,
        *,
        n_classes,
        eta0,
        schedule_code,
        power_t,
        alpha,
        fit_intercept,
        shuffle,
        n_threads,
        sampler="uniform",
        sampler_power=1.0,
        adagrad=False,
    ):
        self.n_classes = n_classes
        self.eta0 = float(eta0)
        self.schedule_code = schedule_code
        self.power_t = power_t
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.shuffle = shuffle
        self.n_threads = n_threads
        self.sampler = sampler
        self.sampler_power = sampler_power
        self.adagrad = adagrad

    def setup(
        self, n_features, dtype, random_state, class_count, max_row_weight
    ):
        """A fresh state: zero weights, the intercepts at the class prior
        of ``class_count`` (with ``fit_intercept``), a new generator, the
        sampler's table and zero AdaGrad accumulators."""
        coef, intercept = new_weights(self.n_classes, n_features, dtype)
        rng = RandomState.from_random_state(random_state)
        if self.fit_intercept:
            start_at_prior(
                intercept, class_count, max_row_weight,
                np.arange(self.n_classes),
            )
        sampler = None
        if self.sampler != "uniform":
            sampler = AliasTable(
                frequency_weights(class_count, float(self.sampler_power))
            )
        state = TrainingState(coef, intercept, rng, 0, sampler)
        if self.adagrad:
            state.sq_grad = np.zeros(n_features)
            state.sq_grad_intercept = np.zeros(1)
        return state

    def new_row_state(self, n_rows):
        """The per-row variables u_i of the double sum, zero."""
        return np.zeros(n_rows, dtype=np.float64)

    def _kernel(self, state):
        return self.kernels[0 if state.coef.dtype == np.float64 else 1]

    def _schedule(self, eta_epoch):
        """The kernels' ``StepSchedule`` struct for an epoch."""
        return schedule_options(
            self.schedule_code, eta_epoch, self.eta0, self.power_t
        )

    def _adagrad(self, state):
        """The kernel's AdaGrad state over the accumulators, or None."""
        if not self.adagrad:
            return None
        return make_adagrad(
            state.coef,
            state.sq_grad,
            state.sq_grad_intercept,
            self.eta0,
            self.alpha,
            self.fit_intercept,
        )

    def epoch(
        self, state, dataset, weights, y, row_state, order, eta_epoch,
        first_visit,
    ):
        """One pass over the rows ``order`` of ``dataset``; returns
        (objective sum, weight sum) and advances ``state.t``."""
        raise NotImplementedError


class PilotSetup:
    """What the eta0 pilot needs of an estimator, copied: a one-thread
    solver (its ``eta0`` replaced per trial), the schedule, the generator
    seed and the class counts of the class-prior start.

    Attributes
    ----------
    name : str
        The estimator's class name (for messages).
    solver : SGDSolver
        The method's solver on one thread (the trials' losses, hence
        ``eta0_``, stay reproducible under random_state whatever n_jobs).
    schedule : Schedule
        The learning-rate schedule (``_sgd_schedule``); ``decay`` its
        per-epoch factor.
    random_state : int, RandomState instance or None
        The estimator's ``random_state``.
    class_count : ndarray of shape (n_classes,)
        A copy of the weighted class counts of the fit.
    max_row_weight : float
        The largest row weight (the prior's pseudo-row).
    """

    def __init__(
        self, name, solver, schedule, decay, random_state, class_count,
        max_row_weight,
    ):
        self.name = name
        self.solver = solver
        self.schedule = schedule
        self.decay = decay
        self.random_state = random_state
        self.class_count = class_count
        self.max_row_weight = max_row_weight
        self.n_classes = class_count.shape[0]

    def solver_at(self, eta0):
        """A copy of the solver with initial step ``eta0``."""
        solver = copy.copy(self.solver)
        solver.eta0 = float(eta0)
        return solver


class _Model(SoftmaxPredictionMixin):
    """coef and intercept with the package's exact evaluation (one
    thread)."""

    n_jobs = None

    def __init__(self, coef, intercept):
        self.coef_ = coef
        self.intercept_ = intercept
        self.classes_ = np.arange(coef.shape[0])


def exact_log_loss(coef, intercept, X, y_enc, sample_weight):
    """The exact weighted mean log-loss of a softmax model (coef,
    intercept) on validated rows, on one thread."""
    return _Model(coef, intercept)._log_loss(X, y_enc, sample_weight)


class SolverEstimatorMixin:
    """The estimator's side of a solver (U-max, Implicit SGD): the
    estimator defines ``_make_solver(eta0, n_threads)``; its epochs and
    the pilot's trials run that solver."""

    def _solver_options(self, eta0=None, n_threads=None):
        """The parameters every ``SGDSolver`` takes, from the estimator's
        (``eta0`` default ``eta0_``, ``n_threads`` the training threads)."""
        return {
            "n_classes": self.classes_.shape[0],
            "eta0": self.eta0_ if eta0 is None else eta0,
            "schedule_code": self._schedule().code,
            "power_t": self.power_t,
            "alpha": self.alpha,
            "fit_intercept": self.fit_intercept,
            "shuffle": self.shuffle,
            "n_threads": (
                self._training_threads() if n_threads is None else n_threads
            ),
            "adagrad": self._uses_adagrad(),
            **self._sampler_options(),
        }

    def _sampler_options(self):
        """The solver's ``sampler`` and ``sampler_power`` (default: uniform
        draws; ``_class_sampler.ClassSamplerMixin`` gives its own)."""
        return {}

    def _training_state(self, t):
        """A ``TrainingState`` over the estimator's own arrays (no copy)."""
        coef, intercept = self._raw_weights()
        state = TrainingState(
            coef, intercept, self._rng, t, self._class_sampler()
        )
        if self._uses_adagrad():
            state.sq_grad = self._adagrad_sq_grad
            state.sq_grad_intercept = self._adagrad_sq_grad_intercept
        return state

    def _run_epoch(
        self, dataset, weights, y_enc, u, order, eta_epoch, t, first_visit
    ):
        solver = self._make_solver()
        self._prepare_solver(solver, dataset)
        state = self._training_state(t)
        try:
            obj_sum, weight_sum = solver.epoch(
                state, dataset, weights, y_enc, u, order, eta_epoch,
                first_visit,
            )
        except EpochDiverged as exc:
            self._raise_divergence(exc.what, exc.row, exc.value)
        finally:
            self._keep_state(state)
        self._after_epoch(solver)
        return obj_sum, weight_sum, state.t

    def _prepare_solver(self, solver, dataset):
        """Set the solver's per-dataset choices (a hook)."""

    def _keep_state(self, state):
        """Write back what the epoch changed in the state beyond its
        arrays and ``t`` (a hook)."""

    def _after_epoch(self, solver):
        """Copy what the solver reports of its last epoch (a hook)."""

    def _pilot_setup(self):
        """The pilot's copy of what it needs (``PilotSetup``)."""
        return PilotSetup(
            type(self).__name__,
            self._make_solver(eta0=self.eta0_, n_threads=1),
            self._schedule(),
            self.decay,
            self.random_state,
            self.class_count_.copy(),
            self._max_row_weight,
        )
