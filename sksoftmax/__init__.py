"""sksoftmax: scikit-learn compatible softmax classifiers for many classes.

Unbiased stochastic solvers whose cost per update does not grow with the
number of classes, returning exact probabilities.
"""

import os as _os

from ._registry import ESTIMATORS as _ESTIMATORS
from ._shared._openmp import openmp_enabled
from .exceptions import DivergenceError

# SKSOFTMAX_CPU_DISPATCH caps the instruction set of the kernels (read by
# sks_cpu_level in _shared/_special.pxd); a typo would silently be ignored
# there, so it is checked here
if _os.environ.get("SKSOFTMAX_CPU_DISPATCH", "") not in ("", "generic", "avx2"):
    raise ValueError(
        "SKSOFTMAX_CPU_DISPATCH must be 'generic' or 'avx2' (or unset), "
        f"got {_os.environ['SKSOFTMAX_CPU_DISPATCH']!r}"
    )

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
