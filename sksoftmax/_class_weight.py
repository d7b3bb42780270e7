"""``class_weight`` of every estimator: one weight per class, multiplying
the sample weights of the class's rows (scikit-learn's semantics).

Everything downstream (the kernels, the class-prior start, the class
counts ``class_count_`` that the frequency samplers draw from, the 'auto'
steps, the held-out scores) sees only the product, so a fit with
``class_weight`` is the fit with ``sample_weight`` times the weight of
each row's class, bit for bit. Why the stochastic gradients stay unbiased
for the weighted objective: doc/user_guide/choosing.rst, "Background".
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
        if (
            arr is not None
            and arr.ndim == 1
            and _same_kind(arr.dtype, classes.dtype)
        ):
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


def _dict_entries(class_weight, classes, allow_unknown=False):
    """(class indices, weights) of a class_weight dict, validated; O(len
    log K) for keys and labels both numbers or both strings. Keys that
    are not classes are left out when ``allow_unknown`` (a stream that
    may still meet them: ``allow_new_classes``)."""
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
    if (
        unknown.any()
        and not allow_unknown
        and np.unique(idx[~unknown]).shape[0] < classes.shape[0]
    ):
        names = [keys[j] for j in np.flatnonzero(unknown)[:10]]
        raise ValueError(
            f"class_weight has keys that are not classes: {names!r} (the "
            f"{classes.shape[0]} classes are {classes[:10].tolist()!r}"
            + ("..." if classes.shape[0] > 10 else "")
            + "). Use the labels of y as keys; keys of absent classes are "
            "allowed only when every class has a key."
        )
    return idx[~unknown], values[~unknown]


def class_weight_vector(class_weight, classes, label_weights):
    """The weight of each class, shape (n_classes,), or None for None.

    'balanced': ``n / (n_classes * n_k)`` as scikit-learn's
    ``compute_class_weight(..., sample_weight=...)`` (LogisticRegression's
    rule), bit for bit: n_k the sum of the sample weights of class k's
    rows in ``label_weights``, n their total, n_classes the classes with
    ``n_k > 0``; a class without weight gets 1 (its rows all weigh 0).
    A dict: the weight of each label given, 1 for the others.
    """
    if class_weight is None:
        return None
    weight = np.ones(classes.shape[0], dtype=np.float64)
    if isinstance(class_weight, str):
        # 'balanced' (the parameter constraints reject other strings)
        counts = np.asarray(label_weights, dtype=np.float64)
        present = counts > 0
        n_present = int(np.count_nonzero(present))
        if n_present:
            # the sum over the present classes only, as compute_class_weight
            # sums its bincount of them
            seen = counts[present]
            weight[present] = seen.sum() / (n_present * seen)
    elif class_weight:
        idx, values = _dict_entries(class_weight, classes)
        weight[idx] = values
    return weight


def weigh_fit_rows(estimator, classes, y_enc, sample_weight):
    """``fit``'s rows: ``sample_weight`` times the weight of each row's
    class (a new array; the one given is not changed), or
    ``sample_weight`` itself without ``class_weight``. 'balanced' from
    these rows; a ValueError when no row keeps a positive weight."""
    class_weight = estimator.class_weight
    if class_weight is None:
        return sample_weight
    counts = None
    if isinstance(class_weight, str):
        counts = np.bincount(
            y_enc, weights=sample_weight, minlength=classes.shape[0]
        )
    weight = class_weight_vector(class_weight, classes, counts)
    out = sample_weight * weight[y_enc]
    if not np.any(out > 0):
        raise ValueError(
            f"class_weight={class_weight!r} gives every training row zero "
            "weight."
        )
    return out


def weigh_stream_rows(estimator, y_enc, sample_weight, first):
    """``partial_fit``'s rows: as ``weigh_fit_rows``, in O(rows +
    len(class_weight)) per call, no pass over the K classes.

    'balanced' follows the classes' sample weights over every
    ``partial_fit`` call so far, this one included: the per-class sums
    ``estimator._label_weight_sums``, their total and the number of
    classes with a positive sum, all reset on the first call. A call's
    rows of class k get ``n / (n_seen * n_k)`` from them, n_seen the
    classes seen so far (a class not seen yet has no row in the call).
    Once every class has been seen this is ``fit``'s rule on all the rows
    streamed (the total is summed call by call, so it may differ from
    ``compute_class_weight``'s in the last bit).
    """
    n_classes = estimator.classes_.shape[0]
    sums = getattr(estimator, "_label_weight_sums", None)
    if first or sums is None or sums.shape[0] > n_classes:
        sums = estimator._label_weight_sums = np.zeros(n_classes)
        estimator._label_weight_seen = (0.0, 0)
    elif sums.shape[0] < n_classes:
        # classes appended by allow_new_classes: their sums start at zero,
        # the others' history is kept (classes_ only ever grows at its end)
        sums = estimator._label_weight_sums = np.concatenate(
            [sums, np.zeros(n_classes - sums.shape[0])]
        )
    total, n_seen = estimator._label_weight_seen
    unseen = sums[y_enc] == 0
    np.add.at(sums, y_enc, sample_weight)
    # the classes first seen in this call, counted without sorting: the
    # weights of such a class's rows over its new sum add up to 1
    new = unseen & (sums[y_enc] > 0)
    n_seen += round(float(np.sum(sample_weight[new] / sums[y_enc[new]])))
    total += float(sample_weight.sum())
    estimator._label_weight_seen = (total, n_seen)
    class_weight = estimator.class_weight
    if class_weight is None:
        return sample_weight
    if isinstance(class_weight, str):
        row_sums = sums[y_enc]
        with np.errstate(divide="ignore"):
            weight = np.where(
                row_sums > 0, total / (n_seen * row_sums), 1.0
            )
    else:
        weight = np.ones(y_enc.shape[0], dtype=np.float64)
        if class_weight:
            lookup = estimator.__dict__.get("_class_lookup")
            allow = bool(getattr(estimator, "allow_new_classes", False))
            if lookup is None:
                idx, values = _dict_entries(
                    class_weight, estimator.classes_, allow
                )
            else:
                # classes_ grown out of order (allow_new_classes): the
                # keys are searched in its sorted copy
                sorted_labels, codes = lookup
                idx, values = _dict_entries(class_weight, sorted_labels, allow)
                idx = codes[idx]
            order = np.argsort(idx, kind="stable")
            idx, values = idx[order], values[order]
            pos = np.minimum(np.searchsorted(idx, y_enc), idx.shape[0] - 1)
            hit = idx[pos] == y_enc
            weight[hit] = values[pos[hit]]
    return sample_weight * weight
