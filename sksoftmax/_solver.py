"""Solvers: a method's epochs and its training state (private).

A solver is built from the estimator's hyperparameters (once per epoch,
``_make_solver``; n_classes among them) and runs one epoch of the
method's Cython kernel on a :class:`TrainingState`; it keeps no reference
to the estimator. The interface, in the spirit of scikit-learn's
``_glm/_newton_solver.py``:

- ``setup(n_features, dtype, random_state, class_count=None,
  max_row_weight=0.0)``: the one place a model's training state is made,
  a fresh :class:`TrainingState` for a model of that shape (zero
  weights, a new generator, the strategies the parameters ask for: the
  class sampler, the AdaGrad accumulators; the method's own state), the
  intercepts at the class prior of ``class_count`` when it is given (the
  eta0 pilot's trials, on a copy of the counts; the estimator's ``fit``
  sets them once it has counted its rows);
- ``resume(state)``: a kept state brought in line with the solver's
  parameters (a warm start or a later ``partial_fit`` call after
  ``set_params``: strategies switched on start afresh, switched off are
  dropped);
- ``epoch(state, dataset, weights, y, row_state, order, eta_epoch,
  first_visit)``: one pass over the rows; returns the objective estimate
  (sum, weight) and advances ``state.t``; raises :class:`EpochDiverged`
  (``what``, ``row``, ``value``) when the kernel reports a divergence;
- ``new_row_state(n_rows)``: the per-row variables of a pass (None when
  the method has none).

The estimator keeps its :class:`TrainingState` (``_state``) across its
epochs and calls and pickles it; ``coef_`` and ``intercept_`` are the
state's iterate, or the running mean of :class:`~._averaging.Averaging`.
"""

import copy
from dataclasses import dataclass

import numpy as np

from ._adagrad_state import AdaGradState
from ._averaging import Averaging
from ._class_prior import new_weights, start_at_prior
from ._class_sampler import ClassSampler
from ._new_classes import grow_per_class
from ._prediction import SoftmaxPredictionMixin
from ._sgd_schedule import schedule_options
from ._shared._adagrad import make_adagrad
from ._shared._random import RandomState
from ._shared._transpose import transpose_in_place
from .exceptions import DivergenceError


class EpochDiverged(DivergenceError):
    """A kernel's divergence report: ``what`` happened at ``row``."""

    def __init__(self, what, row, value):
        super().__init__(f"{what} at row {row} (value {value:.6g})")
        self.what, self.row, self.value = what, row, value


@dataclass(eq=False)
class TrainingState:
    """What an epoch reads and advances: a model's training state, made by
    its solver's ``setup`` and kept by the estimator between calls.

    Attributes
    ----------
    coef, intercept : ndarray
        The iterate the steps continue from.
    rng : RandomState
        The generator of row orders and class draws.
    t : int
        Rows processed so far (the 'invscaling' schedule reads it).
    sampler : ClassSampler or None
        The 'frequency' sampler's alias table (None: uniform draws only
        so far).
    adagrad : AdaGradState or None
        The accumulators of ``learning_rate='adagrad'`` (None otherwise).
    averaging : Averaging or None
        The running mean of the iterates (the estimator's ``average``;
        None while it is off).
    """

    coef: np.ndarray
    intercept: np.ndarray
    rng: RandomState
    t: int = 0
    sampler: ClassSampler | None = None
    adagrad: AdaGradState | None = None
    averaging: Averaging | None = None

    def weights(self):
        """(coef_, intercept_) to expose: the running mean once an
        iterate is averaged, else the iterate."""
        if self.averaging is None:
            return self.coef, self.intercept
        return self.averaging.exposed(self.coef, self.intercept)

    def feature_major(self, n_threads=1):
        """Store the iterate feature-major, (D, K) in memory, in place:
        prediction reads a few feature columns of every class, which this
        layout keeps contiguous (``_shared/_transpose``). An averaged
        model, whose exposed weights are the running mean, stays as it is.
        Returns whether the layout changed."""
        coef = self.coef
        if (
            self.averaging is not None
            or min(coef.shape) < 2
            or not coef.flags.c_contiguous
            or not coef.flags.writeable
        ):
            return False
        self.coef = transpose_in_place(coef, n_threads).T
        return True

    def class_major(self, n_threads=1):
        """Store the iterate class-major, (K, D) C-contiguous, in place, as
        the training kernels read it (undoes ``feature_major``). Returns
        whether the layout changed."""
        if self.coef.flags.c_contiguous or not self.coef.flags.f_contiguous:
            return False
        if not self.coef.flags.writeable:
            # (a model loaded read-only, e.g. memory-mapped): a copy
            self.coef = np.ascontiguousarray(self.coef)
        else:
            self.coef = transpose_in_place(self.coef.T, n_threads)
        return True

    def adopt_dtype(self, dtype):
        """Convert the weights to ``dtype`` (a warm start keeps the
        solution but takes the dtype of the data)."""
        self.coef = np.ascontiguousarray(self.coef, dtype=dtype)
        self.intercept = np.ascontiguousarray(self.intercept, dtype=dtype)
        if self.averaging is not None:
            self.averaging.adopt_dtype(dtype)

    def grow(self, n_old, n_new):
        """Grow every per-class array from ``n_old`` to ``n_new`` classes
        (``_new_classes.grow_per_class``): new rows of W zero; per-feature
        state (the AdaGrad accumulators) does not grow."""
        self.coef = grow_per_class(self.coef, n_old, n_new, 0, name="coef")
        self.intercept = grow_per_class(
            self.intercept, n_old, n_new, 0, name="intercept"
        )
        if self.averaging is not None:
            self.averaging.grow(n_old, n_new)


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

    # the state the solver's setup makes (a method with state of its own
    # names its subclass of TrainingState)
    state_class = TrainingState

    def setup(
        self, n_features, dtype, random_state, class_count=None,
        max_row_weight=0.0,
    ):
        """A fresh state: zero weights, a new generator, the strategies of
        the parameters (``resume``) and the method's own state
        (``_setup_method``). With ``class_count``, the intercepts start at
        its class prior (with ``fit_intercept``) and the sampler's table
        is built from it."""
        coef, intercept = new_weights(self.n_classes, n_features, dtype)
        rng = RandomState.from_random_state(random_state)
        if class_count is not None and self.fit_intercept:
            start_at_prior(
                intercept, class_count, max_row_weight,
                np.arange(self.n_classes),
            )
        state = self.state_class(coef, intercept, rng)
        self.resume(state)
        if class_count is not None and state.sampler is not None:
            state.sampler.refresh(class_count, None, self.sampler_power)
        self._setup_method(state, n_features)
        return state

    def _setup_method(self, state, n_features):
        """Set the method's own fields of a fresh state (a hook)."""

    def resume(self, state):
        """Bring a kept ``state`` in line with the solver's parameters:
        AdaGrad accumulators start at zero when switched on and are dropped
        when off; the 'frequency' sampler gets its table cache when first
        asked for (kept while draws are uniform, so that switching back
        reuses a table that still matches the counts)."""
        if not self.adagrad:
            state.adagrad = None
        elif state.adagrad is None or state.adagrad.sq_grad.shape != (
            state.coef.shape[1],
        ):
            state.adagrad = AdaGradState.zeros(state.coef.shape[1])
        if self.sampler != "uniform" and state.sampler is None:
            state.sampler = ClassSampler()

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

    def _table(self, state):
        """The alias table the kernel draws classes from (None: uniform)."""
        return None if self.sampler == "uniform" else state.sampler.table

    def _adagrad(self, state):
        """The kernel's AdaGrad state over the accumulators, or None."""
        if not self.adagrad:
            return None
        return make_adagrad(
            state.coef,
            state.adagrad.sq_grad,
            state.adagrad.sq_grad_intercept,
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
