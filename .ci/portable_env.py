"""Print the environment of CI's second and third test runs, as shell
``export`` lines: the first forces every SIMD dispatch to its generic path
(the package's kernels through SKSOFTMAX_CPU_DISPATCH, NumPy's through
NPY_DISABLE_CPU_FEATURES), the second swaps OpenBLAS's kernels for another
core type's. Run with the argument ``generic`` or ``blas``."""

import sys

import numpy  # noqa: F401  (loads OpenBLAS)
import scipy.linalg  # noqa: F401  (and SciPy's own OpenBLAS)
import threadpoolctl
from numpy._core._multiarray_umath import (
    __cpu_baseline__,
    __cpu_dispatch__,
    __cpu_features__,
)

if sys.argv[1] == "generic":
    found = [
        f
        for f in __cpu_dispatch__
        if __cpu_features__.get(f) and f not in __cpu_baseline__
    ]
    print("export SKSOFTMAX_CPU_DISPATCH=generic")
    print(f"export NPY_DISABLE_CPU_FEATURES='{' '.join(found)}'")
elif sys.argv[1] == "blas":
    cores = {
        info.get("architecture")
        for info in threadpoolctl.threadpool_info()
        if info.get("internal_api") == "openblas"
    }
    # an older core type than the machine's: its kernels run on any newer
    # x86-64 CPU (a newer one forced on an older CPU could crash)
    other = "Sandybridge" if "Haswell" in cores else "Haswell"
    print(f"export OPENBLAS_CORETYPE={other}")
else:
    raise SystemExit("usage: portable_env.py generic|blas")
