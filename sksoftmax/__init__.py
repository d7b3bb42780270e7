"""sksoftmax: scikit-learn compatible softmax classifiers for many classes.

Unbiased stochastic solvers whose cost per update does not grow with the
number of classes, returning exact probabilities.
"""

from ._registry import ESTIMATORS as _ESTIMATORS
from ._shared._openmp import openmp_enabled
from .exceptions import DivergenceError

# the estimators, from the one table of them (_registry.py)
for _entry in _ESTIMATORS:
    globals()[_entry.name] = _entry.load()
del _entry

__version__ = "0.1.0.dev0"

__all__ = [entry.name for entry in _ESTIMATORS] + [
    "DivergenceError",
    "openmp_enabled",
    "__version__",
]
