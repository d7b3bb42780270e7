"""Classes that arrive in a stream, ``allow_new_classes=True`` (private).

scikit-learn's ``partial_fit`` needs every class on its first call; with
``allow_new_classes=True`` a later call may bring labels not seen before,
and the model grows by those classes. This module holds the growth once,
for every estimator:

- the labels: ``classes_`` keeps the classes of the first call sorted and
  appends the new ones in order of arrival (the new labels of one call
  sorted among themselves), so that no row of W ever moves; while
  ``classes_`` stays sorted (new labels larger than all before, e.g.
  integer codes in increasing order) the encoding keeps its fast paths,
  otherwise a sorted lookup (``_class_lookup``: the sorted labels and
  their codes, O(K log K) per call that adds classes) encodes the labels;
- the per-class arrays: every array whose leading axis runs over the
  classes is the first K rows of a buffer with spare capacity
  (:func:`grow_rows`). Adding classes writes only the new rows while the
  buffer has room, and copies the K rows into a buffer twice as large
  when it has not: O(D) amortised per added class, never an O(K D) copy
  per class. A C-contiguous buffer's first K rows are themselves
  C-contiguous, so the kernels take the view as they took the array.

An estimator grows its class counts and its training state
(``_solver.TrainingState.grow`` and its methods' subclasses: the weights,
intercepts, iterate averages, SCENT's momentum, augment and reduce's
per-coordinate step state), each array through :func:`grow_per_class`;
per-feature state (AdaGrad accumulators) and per-row state do not grow.
The class-frequency sampler's table is rebuilt from the grown counts (a
new ``_class_count_version``).
"""

import mmap

import numpy as np
from sklearn.utils.multiclass import unique_labels

ALLOW_NEW_CLASSES_CONSTRAINT = {"allow_new_classes": ["boolean"]}

# the smallest buffer a growth allocates, in classes
_MIN_CAPACITY = 8


def lazy_zeros(shape, dtype):
    """Zeros whose memory the OS backs a small page at a time, when first
    written: room for rows that are used one by one, or never.

    NumPy asks for transparent huge pages on large arrays; the first write
    to one of them then zeroes 2 MB (and may compact memory to find it):
    at 100,000 classes of 1,000 float64 features, SCENT's momentum rows,
    first written as classes first move, cost a 20,000-row call up to 1.8x
    its 10,000-class figure that way (``bench_partial_fit.py
    --expert-calls``). An anonymous mapping advised against huge pages
    (Linux; elsewhere ``np.zeros``) backs 4 KB at each first write."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    if nbytes < 2**22 or not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.zeros(shape, dtype=dtype)
    region = mmap.mmap(-1, nbytes)
    region.madvise(mmap.MADV_NOHUGEPAGE)
    return np.ndarray(shape, dtype=dtype, buffer=region)


def grow_rows(array, n_rows, fill=0, capacity=0):
    """``array`` grown to ``n_rows`` rows (leading axis), the new rows set
    to ``fill``.

    ``array`` is the first rows of its base buffer when an earlier growth
    made it so: the buffer is then reused while it has room (only the new
    rows are written). Otherwise a buffer of max(n_rows, 2 x current rows)
    rows is allocated and the current rows copied once; ``capacity``: at
    least this many rows (an array that will grow to a known size, e.g.
    one row per class: a zero-filled buffer's spare rows cost no memory
    until written, and no later growth copies). Returns the view of the
    first ``n_rows`` rows (C-contiguous).
    """
    n_old = array.shape[0]
    if n_rows < n_old:
        raise ValueError("grow_rows cannot shrink an array")
    buf = array.base
    if not (
        isinstance(buf, np.ndarray)
        and buf.flags.c_contiguous
        and buf.flags.writeable
        and buf.dtype == array.dtype
        and buf.ndim == array.ndim
        and buf.shape[1:] == array.shape[1:]
        and buf.shape[0] >= n_rows
        and array.flags.c_contiguous
        and buf.__array_interface__["data"][0]
        == array.__array_interface__["data"][0]
    ):
        capacity = max(n_rows, 2 * n_old, _MIN_CAPACITY, capacity)
        # calloc'ed for a zero fill (the new rows are then zero already,
        # their pages zeroed when first written), else written; the spare
        # rows are mapped when first used
        zero = np.isscalar(fill) and fill == 0
        shape = (capacity,) + array.shape[1:]
        if zero and capacity > n_rows:
            buf = lazy_zeros(shape, array.dtype)
        else:
            buf = (np.zeros if zero else np.empty)(shape, dtype=array.dtype)
        buf[:n_old] = array
    else:
        zero = False  # a reused buffer's spare rows may hold anything
    out = buf[:n_rows]
    if not zero:
        out[n_old:] = fill
    return out


def _label_kind(dtype):
    if dtype.kind in "US":
        return "strings"
    if dtype.kind in "biuf":
        return "numbers"
    return None


def _element_kinds(labels):
    return {"strings" if isinstance(v, str) else "numbers" for v in labels}


def check_label_kind(classes, y, elementwise=False):
    """ValueError when the labels ``y`` and ``classes`` mix strings and
    numbers (by dtype; ``elementwise``: also the elements of object
    arrays)."""
    kinds = []
    for labels in (classes, y):
        kind = _label_kind(labels.dtype)
        if kind is not None:
            kinds.append({kind})
        elif elementwise:
            kinds.append(_element_kinds(labels[:1] if labels is classes
                                        else labels))
    seen = set().union(*kinds) if kinds else set()
    if len(seen) > 1:
        raise ValueError(
            "Labels must be of one type: the classes seen so far are "
            f"{'/'.join(sorted(kinds[0]))} ({classes[:5]!r}) and y holds "
            f"{'/'.join(sorted(kinds[-1]))}; mixing strings and numbers is "
            "not supported."
        )


def check_one_type(y):
    """ValueError when an object array of labels mixes strings and
    numbers (scikit-learn's target check calls it 'unknown')."""
    if y.dtype.kind == "O" and len(_element_kinds(y)) > 1:
        raise ValueError(
            "Labels must be of one type: y mixes strings and numbers "
            f"({y[:5]!r})."
        )


def new_labels(classes, unknown):
    """The distinct labels of ``unknown`` (labels not in ``classes``),
    sorted, in ``classes``' type (a string dtype widened as needed).

    Raises ValueError when a label mixes strings and numbers with the
    classes, or a number cannot be represented in their dtype (a float
    label for integer classes)."""
    check_label_kind(classes, unknown, elementwise=True)
    labels = unique_labels(unknown) if unknown.dtype.kind == "O" else (
        np.unique(unknown))
    if classes.dtype.kind in "biuf":
        cast = labels.astype(classes.dtype)
        if not np.array_equal(cast, labels):
            raise ValueError(
                f"y holds labels {labels[:5]!r} that are not of the classes' "
                f"type ({classes.dtype}): labels must be of one type."
            )
        labels = cast
    return labels


def encode_with_lookup(lookup, y):
    """(codes, known) of labels ``y`` through ``_class_lookup``: codes
    (intp, arbitrary where unknown) and a mask of the known labels."""
    sorted_labels, codes = lookup
    pos = np.searchsorted(sorted_labels, y)
    np.minimum(pos, sorted_labels.shape[0] - 1, out=pos)
    known = sorted_labels[pos] == y
    return codes[pos].astype(np.intp, copy=False), np.asarray(known)


def append_classes(est, labels):
    """Append ``labels`` (new, sorted, from :func:`new_labels`) to
    ``est.classes_``; keeps ``_class_lookup`` (None while classes_ is
    sorted). Returns the number of classes before."""
    classes = est.classes_
    n_old = classes.shape[0]
    grown = np.concatenate([classes, labels])
    lookup = est.__dict__.get("_class_lookup")
    if lookup is None and (n_old == 0 or labels[0] > classes[-1]):
        # still sorted: the encoders' fast paths stay valid
        est._class_lookup = None
    else:
        order = np.argsort(grown, kind="stable")
        est._class_lookup = (grown[order], order.astype(np.intp))
    est.classes_ = grown
    return n_old


def stream_labels(est, y, y_enc, known, classes=None):
    """Codes of the batch's labels, adding the unknown ones as classes.

    ``y_enc`` and ``known``: the estimator's encoding of ``y`` against its
    current ``classes_``. ``classes`` (a later call's ``classes``
    argument) may list further labels to add. Returns ``(y_enc, labels)``:
    the codes, the new ones numbered after the current classes, and the
    new labels (to pass to :func:`append_classes`), without changing
    the estimator.
    """
    parts = [y[~known]]
    if classes is not None:
        classes = np.asarray(classes)
        if classes.ndim != 1:
            raise ValueError("classes must be a 1-d array of labels.")
        check_label_kind(est.classes_, classes, elementwise=True)
        lookup = est.__dict__.get("_class_lookup")
        if lookup is None:
            lookup = (est.classes_, np.arange(est.classes_.shape[0]))
        parts.append(classes[~encode_with_lookup(lookup, classes)[1]])
    unknown = np.concatenate(parts) if len(parts) > 1 else parts[0]
    if unknown.shape[0] == 0:
        return y_enc, unknown[:0]
    labels = new_labels(est.classes_, unknown)
    y_enc = np.array(y_enc, dtype=np.intp)  # never the caller's y
    if not known.all():
        y_enc[~known] = est.classes_.shape[0] + np.searchsorted(
            labels, y[~known].astype(labels.dtype)
        )
    return y_enc, labels


def grow_per_class(array, n_old, n_new, fill, per_class=1, name="array"):
    """``array``, of ``per_class`` rows per class, grown from ``n_old`` to
    ``n_new`` classes by :func:`grow_rows` (new rows ``fill``).

    A RuntimeError when its rows are not ``n_old * per_class``: every
    per-class array of a model follows its classes."""
    if array.shape[0] != n_old * per_class:
        raise RuntimeError(
            f"{name} has {array.shape[0]} rows, expected {n_old * per_class}"
        )
    return grow_rows(array, n_new * per_class, fill)


def check_allow_new_classes(est):
    """``allow_new_classes``, refused (ValueError) by methods whose state
    cannot grow (``est._new_classes_refusal``: why; None when it can)."""
    allow = bool(est.allow_new_classes)
    reason = est._new_classes_refusal if allow else None
    if reason:
        raise ValueError(
            f"{type(est).__name__} does not support "
            f"allow_new_classes=True: {reason}"
        )
    return allow
