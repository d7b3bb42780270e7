"""Labels: the target checks and encodings of fit and partial_fit (private).

Validation that ``BaseSoftmaxClassifier`` and ``SoftmaxClassifier`` share:
scikit-learn's target checks without its many-classes warning, the
encoding of labels to class indices, the ``classes`` rules of
``partial_fit`` and the canonical form of a CSR matrix.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import (
    check_classification_targets,
    unique_labels,
)

from ._new_classes import (
    check_label_kind,
    check_one_type,
    encode_with_lookup,
    stream_labels,
)


def _check_targets(y):
    """scikit-learn's target check, without its many-classes warning.

    scikit-learn warns when there are more distinct labels than half the
    rows ("y could represent a regression problem"): problems with that
    many classes are what this package is for.

    A 1-D integer ndarray is always 'binary' or 'multiclass', which the
    check accepts: it is passed without the check's two passes of
    ``np.unique`` over the labels, noticeable on millions of labels.
    """
    if isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iu":
        return
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message="The number of unique classes is greater than",
            category=UserWarning,
        )
        check_classification_targets(y)


def _encode_labels(y):
    """``(classes, y_enc)``: the sorted distinct labels and each row's
    index into them (intp), as ``np.unique`` then ``np.searchsorted``.

    Non-negative integer labels no larger than a few times the number of
    rows (class codes, token ids) are counted instead of sorted: O(n + max
    label) against O(n log n).
    """
    y = np.asarray(y)
    n = y.shape[0]
    if y.dtype.kind in "iu" and n and y.min() >= 0 and y.max() < 4 * n + 1024:
        present = np.bincount(y) > 0
        classes = np.flatnonzero(present).astype(y.dtype)
        code = np.cumsum(present, dtype=np.intp) - 1
        return classes, code[y]
    classes = _sorted_distinct(y)
    return classes, np.searchsorted(classes, y).astype(np.intp)


def _sorted_distinct(a):
    """``np.unique(a)`` of a 1-D array; integer and boolean arrays by a
    sort and a mask of the changes (recent NumPy's ``np.unique`` hashes
    them first, much slower on many distinct integers)."""
    if a.dtype.kind not in "iub" or a.shape[0] == 0:
        return np.unique(a)
    s = np.sort(a)
    keep = np.empty(s.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def _check_partial_fit_first_call(clf, classes):
    """scikit-learn's check of ``classes`` in partial_fit, in O(K log K).

    Same rules and messages as
    ``sklearn.utils.multiclass._check_partial_fit_first_call``, whose
    ``unique_labels`` runs a Python generator over the labels (slow at
    many classes); numeric and string labels go through
    ``np.unique`` instead, other labels (object arrays) through
    scikit-learn's function, which also rejects mixed types.
    Returns True on the call that sets ``classes_``.
    """
    seen = getattr(clf, "classes_", None)
    if seen is None and classes is None:
        raise ValueError("classes must be passed on the first call to partial_fit.")
    if classes is None:
        return False
    if (
        isinstance(classes, np.ndarray)
        and classes.ndim == 1
        and classes.dtype.kind in "iufbUS"
    ):
        # one dtype: no mix of label types to reject
        labels = _sorted_distinct(classes)
    else:
        labels = unique_labels(classes)
    if seen is not None:
        if not np.array_equal(seen, labels):
            raise ValueError(
                f"`classes={classes!r}` is not the same as on last call to "
                f"partial_fit, was: {seen!r}"
            )
        return False
    clf.classes_ = labels
    return True


def _canonical_csr(X):
    """X itself when it is dense or canonical CSR; else a canonical copy.

    A caller's matrix is never modified. scipy sorts the indices and sums
    the duplicates of a non-canonical CSR matrix in place, not only in
    ``sum_duplicates`` but in operations that look read-only (``abs(X)``,
    ``X.max()``, comparisons, ``count_nonzero``): fit once left a
    caller's unsorted or duplicated matrix sorted and summed through
    ``abs(X)`` in ``_row_l1_norms``. So the training paths canonicalise
    here, once, on a copy, and then see only canonical rows: duplicates
    mean their sum (scipy's semantics) and the model is the one fitted on
    the canonical form, bit for bit. A canonical matrix, the usual case,
    is used as it is, with no copy (``has_canonical_format`` reads the
    arrays once, O(nnz), and caches the flag on the matrix).
    """
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X



def encode_batch(est, y, classes, first, allow_new):
    """``(y_enc, added)`` of a ``partial_fit`` batch: each label's class
    index (intp; new labels numbered after ``est.classes_`` under
    ``allow_new_classes``) and the new labels to append (None without
    ``allow_new``). Sets ``classes_`` on the first call; raises ValueError
    for labels outside the classes (without ``allow_new``)."""
    if allow_new:
        check_one_type(y)
    if first or y.dtype.kind not in "iub":
        # integer labels are class labels whatever their values (and
        # scikit-learn's check, np.unique over y, costs more the more
        # distinct labels a batch has)
        _check_targets(y)
    extra_classes = None
    if first and classes is None:
        # allow_new_classes: the first batch's labels are the classes
        classes = y
    if allow_new and not first:
        # later calls' classes only add labels (see allow_new_classes)
        extra_classes = classes
    else:
        _check_partial_fit_first_call(est, classes)
    if est.classes_.shape[0] < 2:
        if first:
            est.__dict__.pop("_class_lookup", None)
        raise ValueError(
            f"classes must hold at least 2 classes; got {est.classes_!r}."
        )
    if first:
        est._class_lookup = None
    check_label_kind(est.classes_, y, elementwise=allow_new)
    n_classes = est.classes_.shape[0]
    lookup = est.__dict__.get("_class_lookup")
    if lookup is not None:
        # classes_ grew out of order (allow_new_classes)
        y_enc, known = encode_with_lookup(lookup, y)
    elif (
        y.dtype.kind in "iu"
        and est.classes_.dtype.kind in "iu"
        and est.classes_[0] == 0
        and est.classes_[-1] == n_classes - 1
    ):
        # classes_ is 0..K-1 (sorted and distinct): a label is its own
        # code, O(n) (the binary search below took 0.28 ms of a 4.5 ms
        # call of 1,000 rows at K = 100,000, measured)
        y_enc = y.astype(np.intp, copy=False)
        known = (y_enc >= 0) & (y_enc < n_classes)
    else:
        # O(n log K) against the sorted classes_, no pass over all
        # classes (np.setdiff1d sorted all K of them on every call:
        # 0.02 s of a 0.023 s call of 100 rows at K = 100,000)
        y_enc = np.searchsorted(est.classes_, y)
        known = y_enc < n_classes
        known[known] = est.classes_[y_enc[known]] == y[known]
    added = None
    if allow_new:
        y_enc, added = stream_labels(est, y, y_enc, known, extra_classes)
    elif not known.all():
        unknown = np.unique(y[~known])
        raise ValueError(
            f"y contains labels not in classes {est.classes_!r}: "
            f"{unknown[:10]!r}."
        )
    y_enc = y_enc.astype(np.intp, copy=False)
    return y_enc, added
