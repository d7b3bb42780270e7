"""``class_weight`` of every estimator: one weight per class, multiplying
the sample weights of the class's rows (scikit-learn's semantics).

Everything downstream (the kernels, the class-prior start, the class
counts ``class_count_`` that the frequency samplers draw from, the 'auto'
steps, the held-out scores) sees only the product, so a fit with
``class_weight`` is the fit with ``sample_weight`` times the weight of
each row's class, bit for bit. Why the stochastic gradients stay unbiased
for the weighted objective: doc/design.md, "Class weights".
"""

import numpy as np
from sklearn.utils._param_validation import StrOptions

CLASS_WEIGHT_CONSTRAINTS = {
    "class_weight": [StrOptions({"balanced"}), dict, None],
}


def _same_kind(a, b):
    """Whether labels of dtypes a and b compare as numbers or as strings
    of one type (then a vectorised search is exact)."""
    numeric = "iufb"
    if a.kind in numeric and b.kind in numeric:
        return True
    return a.kind == b.kind and a.kind in "US"


def _key_indices(keys, classes):
    """Index into the sorted ``classes`` of each dict key; -1 for a key
    that is not a class. O(len(keys) log K) when keys and classes are
    numbers or strings alike, else a Python lookup."""
    if classes.dtype.kind != "O" and keys:
        try:
            arr = np.asarray(keys)
        except (TypeError, ValueError):
            arr = None
        if arr is not None and arr.ndim == 1 and _same_kind(arr.dtype, classes.dtype):
            idx = np.searchsorted(classes, arr)
            idx[idx == classes.shape[0]] = 0
            return np.where(classes[idx] == arr, idx, -1).astype(np.intp)
    lookup = {c: i for i, c in enumerate(classes.tolist())}
    out = np.empty(len(keys), dtype=np.intp)
    for j, key in enumerate(keys):
        try:
            out[j] = lookup.get(key, -1)
        except TypeError:  # an unhashable key cannot be a label
            out[j] = -1
    return out


def _dict_weights(class_weight, classes):
    keys = list(class_weight)
    try:
        values = np.asarray(list(class_weight.values()), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"class_weight values must be numbers; got {class_weight!r}."
        ) from exc
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise ValueError(
            "class_weight values must be finite and non-negative; got "
            f"{values[j]!r} for class {keys[j]!r}."
        )
    idx = _key_indices(keys, classes)
    unknown = idx < 0
    # scikit-learn's rule (compute_class_weight): keys that are not
    # classes are an error unless every class has a key, so that one dict
    # serves every cross-validation split, including one missing a class
    if unknown.any() and np.unique(idx[~unknown]).shape[0] < classes.shape[0]:
        names = [keys[j] for j in np.flatnonzero(unknown)[:10]]
        raise ValueError(
            f"class_weight has keys that are not classes: {names!r} (the "
            f"{classes.shape[0]} classes are {classes[:10].tolist()!r}"
            + ("..." if classes.shape[0] > 10 else "")
            + "). Use the labels of y as keys; keys of absent classes are "
            "allowed only when every class has a key."
        )
    weight = np.ones(classes.shape[0], dtype=np.float64)
    weight[idx[~unknown]] = values[~unknown]
    return weight


def class_weight_vector(class_weight, classes, label_weights):
    """The weight of each class, shape (n_classes,), or None for None.

    'balanced': ``n / (n_classes * n_k)`` as scikit-learn's
    ``compute_class_weight(..., sample_weight=...)`` (LogisticRegression's
    rule): n_k the sum of the sample weights of class k's rows in
    ``label_weights``, n their total, n_classes the classes with
    ``n_k > 0``; a class without weight gets 1 (its rows all weigh 0).
    A dict: the weight of each label given, 1 for the others.
    """
    if class_weight is None:
        return None
    if isinstance(class_weight, str):
        # 'balanced' (the parameter constraints reject other strings)
        counts = np.asarray(label_weights, dtype=np.float64)
        present = counts > 0
        weight = np.ones(classes.shape[0], dtype=np.float64)
        n_present = int(np.count_nonzero(present))
        if n_present:
            weight[present] = counts.sum() / (n_present * counts[present])
        return weight
    return _dict_weights(class_weight, classes)


def weigh_rows(class_weight, classes, y_enc, sample_weight, label_weights=None):
    """``sample_weight`` times the weight of each row's class (a new
    array; the one given is not changed), or ``sample_weight`` itself when
    ``class_weight`` is None.

    ``label_weights``: the per-class sums of sample weights that
    'balanced' follows; None (``fit``) takes this call's rows.
    """
    if class_weight is None:
        return sample_weight
    if label_weights is None and isinstance(class_weight, str):
        label_weights = np.bincount(
            y_enc, weights=sample_weight, minlength=classes.shape[0]
        )
    weight = class_weight_vector(class_weight, classes, label_weights)
    return sample_weight * weight[y_enc]


def weigh_fit_rows(estimator, classes, y_enc, sample_weight):
    """``fit``'s rows weighted by ``estimator.class_weight``; a ValueError
    when the class weights leave no row of positive weight."""
    out = weigh_rows(estimator.class_weight, classes, y_enc, sample_weight)
    if out is not sample_weight and not np.any(out > 0):
        raise ValueError(
            f"class_weight={estimator.class_weight!r} gives every training "
            "row zero weight."
        )
    return out


def weigh_stream_rows(estimator, y_enc, sample_weight, first):
    """``partial_fit``'s rows weighted by ``estimator.class_weight``.

    'balanced' follows the classes' sample weights over every
    ``partial_fit`` call so far, this one included, kept in
    ``estimator._label_weight_sums`` (reset on the first call): each
    call's rows get ``n / (n_seen * n_k)`` of the rows seen up to then,
    n_seen the classes seen (classes not seen yet have no rows in the
    call). Once every class has been seen this is ``fit``'s rule on all
    the rows streamed.
    """
    n_classes = estimator.classes_.shape[0]
    sums = getattr(estimator, "_label_weight_sums", None)
    if first or sums is None or sums.shape[0] != n_classes:
        sums = estimator._label_weight_sums = np.zeros(n_classes)
    np.add.at(sums, y_enc, sample_weight)
    return weigh_rows(
        estimator.class_weight, estimator.classes_, y_enc, sample_weight, sums
    )
