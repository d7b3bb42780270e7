"""Class sampling in proportion to class frequency, for the estimators that
sample classes (U-max, Implicit SGD and the sampled-softmax baselines).

``sampler='frequency'`` draws class k with probability
q_k proportional to (n_k + 1) ** sampler_power, n_k the weighted count
``class_count_`` of the labels seen so far, over all K classes. The kernels
draw from q in O(1) through its alias table (``_random.AliasTable``, built
in O(K)) and weight each draw by 1 / (m q_k), which keeps the double-sum
gradients unbiased (see each kernel's module docstring).
"""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._random import AliasTable

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

    def _class_sampler(self):
        """The alias table of q, or None for the uniform sampler.

        Built when ``class_count_`` or ``sampler_power`` changed since the
        last call, else reused: the base class replaces ``class_count_``
        by a new array whenever the counts change (once per ``fit``, once
        per ``partial_fit`` call), so the table is rebuilt at most once
        per call whatever the number of epochs. The cache keeps a
        reference to the counts it was built from, so the identity test
        cannot be fooled by a recycled ``id``.
        """
        if self.sampler == "uniform":
            return None
        cache = getattr(self, "_sampler_cache", None)
        counts, power = self.class_count_, float(self.sampler_power)
        if cache is None or cache[0] is not counts or cache[1] != power:
            table = AliasTable(frequency_weights(counts, power))
            cache = self._sampler_cache = (counts, power, table)
        return cache[2]
