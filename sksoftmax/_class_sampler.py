"""Class sampling in proportion to class frequency, for the estimators that
sample classes (U-max, Implicit SGD and the sampled-softmax baselines).

``sampler='frequency'`` draws class k with probability
q_k proportional to (n_k + 1) ** sampler_power, n_k the weighted count
``class_count_`` of the labels seen so far (sample weights times class
weights: the classes' shares of the weighted objective), over all K
classes. The kernels
draw from q in O(1) through its alias table (``_random.AliasTable``, built
in O(K)) and weight each draw by 1 / (m q_k), which keeps the double-sum
gradients unbiased (see each kernel's module docstring).
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


class ClassSamplerMixin:
    """The ``sampler`` and ``sampler_power`` parameters of an estimator.

    The estimator adds ``SAMPLER_CONSTRAINTS`` to its
    ``_parameter_constraints`` and passes ``self._class_sampler()`` to its
    kernel.
    """

    def _sampler_options(self):
        """The solver's sampler parameters (``_solver.SGDSolver``)."""
        return {"sampler": self.sampler, "sampler_power": self.sampler_power}

    def _class_sampler(self):
        """The alias table of q, or None for the uniform sampler.

        Rebuilt (O(K)) when ``class_count_`` was replaced (each ``fit`` and
        the first ``partial_fit`` call give it a new
        ``_class_count_version``), when ``sampler_power`` changed, or when
        the counts, which ``partial_fit`` grows in place, have doubled in
        total weight since the table was built; otherwise reused.
        Unbiasedness does not need q to follow every call: the kernels
        weight each draw by 1 / (m q_k) with the q of the table they draw
        from, so any q > 0 gives an unbiased estimate, and a q that lags
        the counts by at most a factor 2 in total weight costs only some
        variance. Rebuilding on doubling makes a stream of b-row batches
        pay O(K) about log2(n / b) times instead of on every call (at
        many classes and small batches a rebuild per call would be most
        of a call's time).
        """
        if self.sampler == "uniform":
            return None
        cache = getattr(self, "_sampler_cache", None)
        version = getattr(self, "_class_count_version", None)
        power = float(self.sampler_power)
        total = float(self.class_count_.sum())
        if (
            cache is None
            or version is None
            or cache[0] != version
            or cache[1] != power
            or total > 2.0 * cache[3]
        ):
            table = AliasTable(frequency_weights(self.class_count_, power))
            cache = self._sampler_cache = (version, power, table, total)
        return cache[2]


class SampledClassesRuleMixin:
    """The package's one rule for ``n_sampled_classes`` (mixed into
    ``BaseSoftmaxClassifier``; a no-op for methods without it)."""

    def _distinct_draw_limit(self):
        """The most classes one step can draw when ``n_sampled_classes``
        counts distinct classes (drawn without replacement); None when it
        counts draws with replacement, which any number can be."""
        return None

    def _n_sampled_used(self):
        """``n_sampled_classes`` as the kernel uses it: at most the
        distinct-draw limit."""
        limit = self._distinct_draw_limit()
        m = self.n_sampled_classes
        return m if limit is None else min(m, limit)

    def _check_n_sampled_classes(self):
        """The package's one rule for ``n_sampled_classes``.

        A sampler that draws with replacement takes any number. One that
        draws distinct classes can draw at most the classes available (the
        K - 1 other than a row's own, or all K for draws shared by a
        minibatch): a larger int is lowered to that number, which uses
        every class (the sampled sum becomes the exact one), with a
        UserWarning, rather than a ValueError, so that a grid over
        n_sampled_classes or a default of 5 on a three-class problem still
        fits. The value used is ``n_sampled_classes_``.
        """
        if "n_sampled_classes" not in self.get_params(deep=False):
            return
        limit = self._distinct_draw_limit()
        m = self.n_sampled_classes
        if limit is not None and not isinstance(m, str) and m > limit:
            warnings.warn(
                f"{type(self).__name__}: n_sampled_classes={m} is more than "
                f"the {limit} classes a step can draw without replacement "
                f"here; using {limit} (every class: the sampled sum is "
                "then exact).",
                UserWarning,
            )
        self.n_sampled_classes_ = int(self._n_sampled_used())
