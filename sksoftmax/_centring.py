"""Dense rows centred by their column means for ``SoftmaxClassifier``.

The exact solver fits dense rows (with intercepts) centred: the same
objective, per-feature steps then invariant to a column's offset as well
as its scale. ``column_shift`` decides the means (or None), ``centred``
makes the centred copy, and ``shift_intercepts`` moves the model between
centred coordinates and the rows' own.
"""

import numpy as np
import scipy.sparse as sp

from ._solver_choice import EXACT_MAX_MEMORY_SHARE, within_memory


def column_shift(est, X, sample_weight):
    """m, the weighted column means by which the exact solver of the
    estimator ``est`` centres dense rows (with intercepts), or None: the
    rows are then used as they are. The caller centres a copy
    (``centred``); X itself is not modified.

    Per-feature AdaGrad steps are invariant to a feature's scale, not
    to its offset: on uncentred columns (tabular data) the exact
    solver ends well above LogisticRegression (the user guide,
    "Centring dense columns"). The penalty is on W, which the shift does not
    change, so the objective is the same. Not when the means are all
    zero, nor when the copy would take more than
    EXACT_MAX_MEMORY_SHARE of the memory (X is then fitted as it is).
    ``partial_fit`` centres its dense rows by the means of ``fit`` or
    of its first batch (``_row_shift``), so that its passes continue
    in the same coordinates.
    """
    if sp.issparse(X) or not est.fit_intercept or X.shape[0] == 0:
        return None
    total = sample_weight.sum()
    w = sample_weight / total if total > 0 else None
    mean = np.average(X, axis=0, weights=w).astype(np.float64)
    if not np.any(mean):
        return None
    if not within_memory(X.nbytes):
        if est.verbose:
            print(
                "Dense rows not centred: their copy would take more "
                f"than {EXACT_MAX_MEMORY_SHARE:g} of the memory"
            )
        return None
    if est.verbose:
        print("Dense rows centred (their column means go into the "
              "intercepts at the end of the fit)")
    return mean


def centred(X, shift):
    """A copy of the dense rows X less the column means ``shift``, in X's
    dtype."""
    return np.subtract(X, shift.astype(X.dtype), dtype=X.dtype)


def shift_intercepts(solver, shift, sign):
    """b += sign W m: the solver's model in centred coordinates (+1) or
    back in the rows' own (-1), in place."""
    solver.finalize()
    moved = solver.coef_view().astype(np.float64) @ shift
    b = solver.b
    b[...] = (b.astype(np.float64) + sign * moved).astype(b.dtype)
