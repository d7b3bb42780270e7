"""A planted softmax problem: sparse count features whose labels' posterior
is exactly a linear softmax."""


import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from ._loaders import _INT32_MAX


def _make_rng(random_state):
    if isinstance(random_state, np.random.Generator):
        return random_state
    # A Generator seeded from sklearn's RandomState keeps the usual
    # random_state semantics (int, RandomState, None) with the faster
    # Generator samplers.
    seed = check_random_state(random_state).randint(0, _INT32_MAX)
    return np.random.default_rng(seed)


def _distinct_topics(rng, n_classes, n_features, n_informative):
    """Draw, per class, n_informative distinct features uniformly at random.

    Floyd's algorithm, vectorised over classes: n_informative passes of
    O(n_classes * n_informative) each, whatever n_features is, where a
    permutation per class would cost O(n_classes * n_features).
    """
    topics = np.empty((n_classes, n_informative), dtype=np.int32)
    for c, j in enumerate(range(n_features - n_informative, n_features)):
        t = rng.integers(0, j + 1, size=n_classes, dtype=np.int32)
        taken = (topics[:, :c] == t[:, None]).any(axis=1)
        topics[:, c] = np.where(taken, j, t)
    topics.sort(axis=1)
    return topics


def _sample_from_cdf(rng, cdf, size):
    # side="right" never returns an index of zero mass; u < 1 = cdf[-1]
    # keeps the result in range.
    return np.searchsorted(cdf, rng.random(size), side="right")


def make_softmax_classification(
    n_samples=1000,
    n_features=1000,
    n_classes=100,
    density=0.01,
    *,
    n_informative=5,
    topic_weight=0.5,
    background_exponent=1.0,
    class_exponent=0.0,
    class_weights=None,
    random_state=None,
    return_coef=False,
    dtype=np.float64,
):
    """Sparse counts and labels from a planted, exactly softmax, model.

    The class comes first: ``y ~ prior``. Then a bag of
    ``L = 1 + Poisson(density * n_features - 1)`` words, L independent of
    the class: each word is, with probability ``lam = topic_weight``, drawn
    uniformly from the ``n_informative`` distinct topic features S_y of the
    class (drawn at random per class), and otherwise from a background
    distribution shared by all classes, ``bg_j`` proportional to
    ``(j + 1) ** -background_exponent``. The features are the word counts.

    So p(x | y = k) is multinomial with
    ``theta_kj = (1 - lam) bg_j + lam / n_informative [j in S_k]``, and Bayes'
    rule gives exactly (the multinomial coefficient, p(L) and the background
    term are the same for every class and cancel)::

        p(y = k | x) = softmax_k(x . w_k + b_k),
        w_kj = log(theta_kj / ((1 - lam) bg_j))   (nonzero on S_k only),
        b_k = log prior_k.

    Binarising or normalising the counts would break this exactness, so X
    holds the raw counts. ``topic_weight`` plays the part of a class
    separation: near 0 the classes are indistinguishable, near 1 a few words
    identify the class.

    Time and memory are O(nnz(X) + n_classes * n_informative); no step costs
    O(n_classes) per row or O(n_classes * n_features), so a million classes
    is cheap.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of rows.
    n_features : int, default=1000
        Number of features (vocabulary size).
    n_classes : int, default=100
        Number of classes; every class has a coefficient row, observed or not.
    density : float in (0, 1], default=0.01
        Expected words per row divided by n_features; repeated words merge,
        so the fraction of nonzeros is a little smaller.
    n_informative : int, default=5
        Topic features per class, at most n_features.
    topic_weight : float in (0, 1), default=0.5
        Probability that a word comes from the class's topic (``lam``).
    background_exponent : float, default=1.0
        Zipf exponent of the background word distribution (0: uniform).
    class_exponent : float, default=0.0
        Zipf exponent of the class prior, ``prior_k`` proportional to
        ``(k + 1) ** -class_exponent`` (0: uniform).
    class_weights : array-like of shape (n_classes,), default=None
        Positive class prior, up to normalisation; overrides
        ``class_exponent``.
    random_state : int, RandomState, Generator or None, default=None
        Seed or generator; an int gives the same data on every call.
    return_coef : bool, default=False
        Also return the true coefficients and intercepts.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the values of X (exact small integers either way).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Word counts, canonical CSR with int32 indices; no empty row.
    y : ndarray of shape (n_samples,), dtype int64
    coef : scipy.sparse.csr_matrix of shape (n_classes, n_features)
        Only with ``return_coef``: float64, n_informative entries per row.
        The true posterior is ``softmax(X @ coef.T + intercept)``.
    intercept : ndarray of shape (n_classes,)
        Only with ``return_coef``: the log class prior.

    Examples
    --------
    >>> import numpy as np
    >>> from sksoftmax.datasets import make_softmax_classification
    >>> X, y, coef, b = make_softmax_classification(
    ...     100, 50, 10, density=0.1, random_state=0, return_coef=True)
    >>> X.shape, coef.shape, int(y.max()) < 10
    ((100, 50), (10, 50), True)
    >>> scores = (X @ coef.T).toarray() + b
    >>> p = np.exp(scores - scores.max(axis=1, keepdims=True))
    >>> p /= p.sum(axis=1, keepdims=True)  # the exact p(y | x)
    >>> bool(np.allclose(p.sum(axis=1), 1.0))
    True
    """
    if min(n_samples, n_features, n_informative) < 1 or n_classes < 2:
        raise ValueError(
            "need n_samples, n_features, n_informative >= 1 and "
            f"n_classes >= 2; got {n_samples}, {n_features}, "
            f"{n_informative} and {n_classes}"
        )
    if n_features > _INT32_MAX:
        raise ValueError(f"n_features={n_features} does not fit int32")
    if n_informative > n_features:
        raise ValueError(
            f"n_informative={n_informative} > n_features={n_features}"
        )
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density}")
    if not 0 < topic_weight < 1:
        raise ValueError(f"topic_weight must be in (0, 1), got {topic_weight}")
    rng = _make_rng(random_state)
    lam = float(topic_weight)

    if class_weights is not None:
        prior = np.asarray(class_weights, dtype=np.float64).ravel()
        if prior.shape != (n_classes,):
            raise ValueError(
                f"class_weights has {prior.size} entries, expected {n_classes}"
            )
        # A zero-prior class would get an intercept of -inf.
        if not (np.isfinite(prior).all() and (prior > 0).all()):
            raise ValueError("class_weights must be positive and finite")
        uniform = False
    else:
        uniform = class_exponent == 0
        prior = np.arange(1, n_classes + 1, dtype=np.float64) ** -float(
            class_exponent
        )
    prior /= prior.sum()
    if uniform:
        y = rng.integers(0, n_classes, size=n_samples, dtype=np.int64)
    else:
        cdf = np.cumsum(prior)
        cdf /= cdf[-1]
        y = _sample_from_cdf(rng, cdf, n_samples).astype(np.int64)

    bg = np.arange(1, n_features + 1, dtype=np.float64) ** -float(
        background_exponent
    )
    bg /= bg.sum()
    topics = _distinct_topics(rng, n_classes, n_features, n_informative)

    # The length must not depend on the class, or p(L | y) would enter the
    # posterior and break its linearity in x.
    lengths = 1 + rng.poisson(max(density * n_features - 1.0, 0.0), n_samples)
    rows = np.repeat(np.arange(n_samples, dtype=np.int64), lengths)
    n_words = rows.shape[0]
    bg_cdf = np.cumsum(bg)
    bg_cdf /= bg_cdf[-1]
    words = _sample_from_cdf(rng, bg_cdf, n_words).astype(np.int64)
    from_topic = np.flatnonzero(rng.random(n_words) < lam)
    slot = rng.integers(0, n_informative, size=from_topic.shape[0])
    words[from_topic] = topics[y[rows[from_topic]], slot]

    # Merge repeated words into counts: sort by (row, word) in one key, then
    # count runs. rows is already grouped, so this is a per-row sort.
    key = rows * n_features + words
    del rows, words
    key.sort()
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    counts = np.diff(np.r_[starts, n_words]).astype(dtype)
    key = key[starts]
    row_of = key // n_features
    indptr = np.zeros(n_samples + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_of, minlength=n_samples), out=indptr[1:])
    idx_dtype = np.int32 if key.shape[0] <= _INT32_MAX else np.int64
    X = sp.csr_matrix(
        (
            counts,
            (key - row_of * n_features).astype(idx_dtype),
            indptr.astype(idx_dtype),
        ),
        shape=(n_samples, n_features),
        copy=False,
    )
    if not return_coef:
        return X, y

    # Each class row holds its n_informative distinct, sorted topic columns.
    nnz = n_classes * n_informative
    coef_idx = np.int32 if nnz <= _INT32_MAX else np.int64
    coef_data = np.log1p(lam / (n_informative * (1.0 - lam) * bg[topics]))
    coef = sp.csr_matrix(
        (
            coef_data.ravel(),
            topics.ravel().astype(coef_idx, copy=False),
            np.arange(0, nnz + 1, n_informative, dtype=coef_idx),
        ),
        shape=(n_classes, n_features),
        copy=False,
    )
    return X, y, coef, np.log(prior)
