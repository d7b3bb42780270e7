"""sksoftmax: scikit-learn compatible softmax classifiers for many classes.

Unbiased stochastic solvers whose cost per update does not grow with the
number of classes, returning exact probabilities.
"""

from ._augment_reduce import (
    ARLogisticClassifier,
    ARProbitClassifier,
    ARSoftmaxClassifier,
)
from ._bound import StochasticBoundClassifier
from ._implicit import ImplicitSGDClassifier
from ._shared._openmp import openmp_enabled
from ._softmax import SoftmaxClassifier
from ._sampled import SampledSoftmaxClassifier
from ._scent import SCENTClassifier
from ._umax import UMaxSoftmaxClassifier
from .exceptions import DivergenceError

__version__ = "0.1.0.dev0"

__all__ = [
    "SoftmaxClassifier",
    "ARLogisticClassifier",
    "ARProbitClassifier",
    "ARSoftmaxClassifier",
    "ImplicitSGDClassifier",
    "SampledSoftmaxClassifier",
    "SCENTClassifier",
    "StochasticBoundClassifier",
    "UMaxSoftmaxClassifier",
    "DivergenceError",
    "openmp_enabled",
    "__version__",
]
