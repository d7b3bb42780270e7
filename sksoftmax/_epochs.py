"""One recorded training epoch of the estimators (private).

``EpochMixin`` wraps the estimator's weights for the kernels, runs one
epoch through the method's ``_run_epoch`` (its solver), records the
objective estimate and reports divergence; it also holds the thread rule
of the training epochs.
"""

import time
import warnings

import numpy as np

from ._sgd_schedule import SCHEDULES
from ._shared._weight_matrix import make_weight_matrix
from .exceptions import DivergenceError

# Dropped after a divergence, so that no prediction uses the broken state
# (a mixin with state of its own adds its names through _model_attributes).
_MODEL_ATTRIBUTES = (
    "coef_",
    "intercept_",
    "classes_",
    "n_iter_",
    "t_",
    "loss_curve_",
    "_row_state",
)


def improves(loss, best, tol):
    """Whether an epoch's monitored ``loss`` counts as an improvement on
    ``best`` under the relative tolerance ``tol``: lower than ``best``
    by more than ``tol`` times ``|best|`` (any finite loss improves on
    an infinite best). ``tol=None`` counts every epoch (the fit runs
    ``max_iter`` epochs).

    Relative, so that one default means the same on a loss of 0.02 and
    one of 7 nats (the user guide: the stopping tolerance).
    """
    if tol is None:
        return True
    if not np.isfinite(best):
        return loss < best
    return loss < best - tol * abs(best)


class EpochMixin:
    """The epoch of ``BaseSoftmaxClassifier`` (see the module docstring)."""

    def _model_attributes(self):
        """The attributes a divergence drops (``_MODEL_ATTRIBUTES`` and the
        mixins' own state)."""
        return _MODEL_ATTRIBUTES

    # ---------------------------------------------------------- the epoch
    def _weight_matrix(self, fresh, **average):
        """Wrap coef_ / intercept_ (no copy) for the kernels.

        ||W||^2 is needed only for the penalty (alpha > 0); computing it is
        O(K D), so it is skipped when W is known to be zero or unused.
        ``average``: the averaging arguments of ``make_weight_matrix``
        (``_averaging.AveragingMixin``).
        """
        sq_norm = None if (not fresh and self.alpha > 0) else 0.0
        return make_weight_matrix(
            self.coef_, self.intercept_, sq_norm, **average
        )

    def _fold_weights(self, weights):
        """Write the true W into coef_ (a hook for iterate averaging)."""
        weights.fold_scale()

    def _raw_weights(self):
        """(W, b) that the steps continue from: coef_, intercept_ here;
        the iterate kept apart when coef_ is an average."""
        return self.coef_, self.intercept_

    def _epoch(self, dataset, weights, y_enc, row_state, order, first_visit):
        """Run one kernel epoch, then record and report it."""
        eta_epoch = self._schedule().eta_for_epoch(
            self.eta0_, self.decay, self._n_epochs
        )
        start = time.perf_counter()
        try:
            obj_sum, weight_sum, self.t_ = self._run_epoch(
                dataset,
                weights,
                y_enc,
                row_state,
                order,
                eta_epoch,
                self.t_,
                first_visit,
            )
        except DivergenceError:
            for attr in self._model_attributes():
                self.__dict__.pop(attr, None)
            raise
        seconds = time.perf_counter() - start
        self._n_epochs += 1
        penalty = 0.5 * self.alpha * weights.sq_norm
        objective = (
            obj_sum / weight_sum + penalty if weight_sum > 0 else np.nan
        )
        self.loss_curve_.append(objective)
        if self.verbose:
            rate = dataset.n_samples / seconds if seconds > 0 else np.inf
            print(
                f"Epoch {self._n_epochs}: {seconds:.4f} s, objective "
                f"estimate {objective:.6f}, {rate:,.0f} rows/s"
                + self._verbose_extra()
            )
        return objective


    def _schedule(self):
        """The learning-rate schedule of ``self.learning_rate``.

        A hook for methods with schedules of their own; the default is the
        package's table ``SCHEDULES``.
        """
        return SCHEDULES[self.learning_rate]

    def _verbose_extra(self):
        return ""

    def _raise_divergence(self, what, row, value):
        raise DivergenceError(
            f"{type(self).__name__} diverged in epoch {self._n_epochs + 1} "
            f"at row {row}: {what} (value {value:.6g}). The step size is too "
            f"large for this problem: lower eta0 (now {self.eta0_:g}"
            + (", chosen by eta0='auto'" if self.eta0 == "auto" else "")
            + ")"
            + self._divergence_hint()
            + "."
        )

    def _divergence_hint(self):
        return ""

    # ----------------------------------------------------------- threads
    # Methods whose epochs run on n_jobs threads (U-max, Implicit SGD and
    # the sampled baselines lock-free, _hogwild.pxd; augment and reduce
    # inside each minibatch)
    _threaded_epochs = False

    def _class_sampler(self):
        """The class sampler's table (``_class_sampler.ClassSamplerMixin``);
        None: uniform draws, or none at all."""
        return None

    def _uses_adagrad(self):
        """Per-feature steps (``_adagrad_state.AdaGradMixin``)."""
        return False

    def _training_threads(self):
        """Threads of the training epochs: ``_n_threads()`` for a method
        with threaded epochs, one otherwise.

        learning_rate='adagrad' keeps its per-row step state in one
        object, so its epochs run on one thread; asking for more then
        warns (once per fit or partial_fit call) rather than running
        slower than asked without a word.
        """
        n_threads = self._n_threads()
        if not self._threaded_epochs or n_threads == 1:
            return 1
        if self._uses_adagrad():
            if not getattr(self, "_adagrad_thread_warned", False):
                warnings.warn(
                    "learning_rate='adagrad' trains on one thread: its "
                    "per-row step state is not shared between threads; "
                    f"n_jobs={self.n_jobs} applies to prediction only.",
                    UserWarning,
                )
                self._adagrad_thread_warned = True
            return 1
        return n_threads
