"""Class sampling in proportion to class frequency, for the estimators that
sample classes (U-max, Implicit SGD and the sampled-softmax baselines).

``sampler='frequency'`` draws class k with probability
q_k proportional to (n_k + 1) ** sampler_power, n_k the weighted count
``class_count_`` of the labels seen so far (sample weights times class
weights: the classes' shares of the weighted objective), over all K
classes. The kernels
draw from q in O(1) through its alias table (``_random.AliasTable``, built
in O(K)) and weight each draw by 1 / (m q_k), which keeps the double-sum
gradients unbiased (see each kernel's module docstring). The table is kept
by :class:`ClassSampler`, the ``sampler`` field of the estimator's training
state (``_solver.TrainingState``).

The module also holds the package's one rule for ``n_sampled_classes``
(:func:`check_n_sampled_classes`).
"""

import warnings
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._shared._random import AliasTable

SAMPLER_CONSTRAINTS = {
    "sampler": [StrOptions({"uniform", "frequency"})],
    "sampler_power": [Interval(Real, 0, None, closed="left")],
}


def frequency_weights(class_count, power):
    """Weights proportional to (class_count + 1) ** power, max one.

    Formed in log space and shifted by the largest, so that no power of a
    large count overflows; the pseudo-count 1 gives classes not seen yet
    a positive probability (their draws stay possible, their weights
    finite).
    """
    log_w = power * np.log1p(np.asarray(class_count, dtype=np.float64))
    return np.exp(log_w - log_w.max())


class ClassSampler:
    """The 'frequency' sampler's alias table of q, kept between epochs and
    calls (the ``sampler`` field of ``_solver.TrainingState``).

    Attributes
    ----------
    table : AliasTable or None
        The table of the counts it was last built from.
    version, power, total
        The ``_class_count_version``, ``sampler_power`` and total count
        weight it was built from.
    """

    def __init__(self):
        self.table = None
        self.version = None
        self.power = None
        self.total = 0.0

    def refresh(self, class_count, version, power):
        """The alias table of q for the counts ``class_count``.

        Rebuilt (O(K)) when the counts were replaced (each ``fit`` and
        the first ``partial_fit`` call give them a new ``version``; None
        always rebuilds), when ``power`` changed, or when the counts,
        which ``partial_fit`` grows in place, have doubled in total weight
        since the table was built; otherwise reused. Unbiasedness does not
        need q to follow every call: the kernels weight each draw by
        1 / (m q_k) with the q of the table they draw from, so any q > 0
        gives an unbiased estimate, and a q that lags the counts by at
        most a factor 2 in total weight costs only some variance.
        Rebuilding on doubling makes a stream of b-row batches pay O(K)
        about log2(n / b) times instead of on every call (at many classes
        and small batches a rebuild per call would be most of a call's
        time).
        """
        power = float(power)
        total = float(class_count.sum())
        if (
            self.table is None
            or version is None
            or self.version != version
            or self.power != power
            or total > 2.0 * self.total
        ):
            self.table = AliasTable(frequency_weights(class_count, power))
            self.version, self.power, self.total = version, power, total
        return self.table


def n_sampled_used(n_sampled_classes, limit):
    """``n_sampled_classes`` as a kernel uses it: at most the
    distinct-draw ``limit`` (None: draws with replacement, any number)."""
    m = n_sampled_classes
    return m if limit is None else min(m, limit)


def check_n_sampled_classes(est):
    """The package's one rule for ``n_sampled_classes``; sets
    ``n_sampled_classes_`` (a no-op for methods without the parameter).

    A sampler that draws with replacement takes any number. One that
    draws distinct classes can draw at most the classes available (the
    K - 1 other than a row's own, or all K for draws shared by a
    minibatch: the estimator's ``_distinct_draw_limit``): a larger int is
    lowered to that number, which uses every class (the sampled sum
    becomes the exact one), with a UserWarning, rather than a ValueError,
    so that a grid over n_sampled_classes or a default of 5 on a
    three-class problem still fits. The value used is
    ``n_sampled_classes_`` (the estimator's ``_n_sampled_used``).
    """
    if "n_sampled_classes" not in est.get_params(deep=False):
        return
    limit = est._distinct_draw_limit()
    m = est.n_sampled_classes
    if limit is not None and not isinstance(m, str) and m > limit:
        warnings.warn(
            f"{type(est).__name__}: n_sampled_classes={m} is more than "
            f"the {limit} classes a step can draw without replacement "
            f"here; using {limit} (every class: the sampled sum is "
            "then exact).",
            UserWarning,
        )
    est.n_sampled_classes_ = int(est._n_sampled_used())
