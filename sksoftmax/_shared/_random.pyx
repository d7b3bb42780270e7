"""Python face of the package's random number generator (see _random.pxd)
and the alias tables of its non-uniform class sampler."""
import numpy as np

from libc.stdint cimport uint64_t


cdef class RandomState:
    """Holds one xoshiro256** stream that kernels draw from without the GIL.

    Parameters
    ----------
    seed : int
        Any integer in [0, 2**64); equal seeds give equal streams.

    Examples
    --------
    >>> from sksoftmax._shared._random import RandomState
    >>> a, b = RandomState(3), RandomState(3)
    >>> bool((a.randint(10, 5) == b.randint(10, 5)).all())
    True
    """

    def __cinit__(self):
        # a generator made without __init__ (``__new__``, as skops and other
        # state-dict loaders do) starts from seed 0's stream, never from the
        # all-zero state, on which xoshiro returns zeros for ever and the
        # bounded-integer draw would never end
        rng_seed(&self.state, 0)

    def __init__(self, seed=0):
        rng_seed(&self.state, <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF))

    @classmethod
    def from_random_state(cls, random_state):
        """Seed from anything ``sklearn.utils.check_random_state`` accepts."""
        from sklearn.utils import check_random_state
        rs = check_random_state(random_state)
        return cls(int(rs.randint(0, 2**63 - 1, dtype=np.int64)))

    def __reduce__(self):
        return (_rebuild, (self.state.s0, self.state.s1, self.state.s2,
                           self.state.s3))

    def __getstate__(self):
        """The stream position, for state-dict persistence (skops): the four
        64-bit words of the xoshiro256** state."""
        return {"state": [int(self.state.s0), int(self.state.s1),
                          int(self.state.s2), int(self.state.s3)]}

    def __setstate__(self, state):
        words = state.get("state") if isinstance(state, dict) else None
        _set_state(self, _checked_words(words))

    def chunk_streams(self, Py_ssize_t n_chunks):
        """The streams of a threaded epoch's first ``n_chunks`` chunks.

        Draws the epoch's one number from this stream, as a threaded
        kernel does after its shuffle, and returns the generators that its
        chunks 0, 1, ... draw their classes from (``chunk_stream`` of
        _random.pxd); for the tests' references.
        """
        cdef uint64_t epoch_seed = rng_next(&self.state)
        cdef RandomState r
        out = []
        for c in range(n_chunks):
            r = RandomState.__new__(RandomState)
            r.state = chunk_stream(epoch_seed, c)
            out.append(r)
        return out

    def uniform(self, Py_ssize_t n):
        """n uniform draws in [0, 1)."""
        out = np.empty(n, dtype=np.float64)
        cdef double[::1] o = out
        cdef Py_ssize_t i
        with nogil:
            for i in range(n):
                o[i] = rng_uniform(&self.state)
        return out

    def randint(self, Py_ssize_t high, Py_ssize_t n):
        """n uniform integers in [0, high)."""
        if high < 1:
            raise ValueError(f"high must be >= 1, got {high}")
        out = np.empty(n, dtype=np.intp)
        cdef Py_ssize_t[::1] o = out
        cdef Py_ssize_t i
        with nogil:
            for i in range(n):
                o[i] = rng_randint(&self.state, high)
        return out

    def permutation(self, Py_ssize_t n):
        """A uniformly random permutation of range(n)."""
        out = np.arange(n, dtype=np.intp)
        cdef Py_ssize_t[::1] o = out
        if n > 1:
            with nogil:
                rng_shuffle(&self.state, &o[0], n)
        return out

    def sample_classes(self, Py_ssize_t n_classes, Py_ssize_t exclude,
                       Py_ssize_t m, bint replace=True):
        """m classes from {0..n_classes-1} without ``exclude``."""
        if n_classes < 2 or not 0 <= exclude < n_classes:
            raise ValueError(
                "need n_classes >= 2 and 0 <= exclude < n_classes")
        if not replace and not 1 <= m <= n_classes - 1:
            raise ValueError(
                "without replacement m must be in [1, n_classes-1]")
        out = np.empty(m, dtype=np.intp)
        cdef Py_ssize_t[::1] o = out
        if m == 0:
            return out
        if replace:
            sample_classes_with_replacement(&self.state, n_classes,
                                            exclude, m, &o[0])
        else:
            sample_classes_without_replacement(&self.state, n_classes,
                                               exclude, m, &o[0])
        return out

    def sample_alias(self, AliasTable table not None, Py_ssize_t n):
        """n draws with replacement from ``table``'s distribution.

        The kernels' own draws (``alias_draw``), one after another.
        """
        out = np.empty(n, dtype=np.intp)
        cdef Py_ssize_t[::1] o = out
        cdef Py_ssize_t i
        with nogil:
            for i in range(n):
                o[i] = alias_draw(&self.state, &table._prob[0],
                                  &table._alias[0], table.n_classes)
        return out


def _checked_words(words):
    """Four integers in [0, 2**64), not all zero, or a ValueError."""
    try:
        words = [int(w) for w in words]
    except (TypeError, ValueError):
        words = None
    if words is None or len(words) != 4:
        raise ValueError(
            "a RandomState's state is four 64-bit integers, got "
            f"{words!r}")
    if not all(0 <= w < 2**64 for w in words):
        raise ValueError(
            f"a RandomState's state words must be in [0, 2**64), got {words}")
    if not any(words):
        raise ValueError(
            "the all-zero state is not a valid xoshiro256** state (it "
            "returns zeros for ever); the saved model's generator was lost")
    return words


cdef _set_state(RandomState r, list words):
    r.state.s0 = <uint64_t>words[0]
    r.state.s1 = <uint64_t>words[1]
    r.state.s2 = <uint64_t>words[2]
    r.state.s3 = <uint64_t>words[3]


def _rebuild(s0, s1, s2, s3):
    cdef RandomState r = RandomState.__new__(RandomState)
    _set_state(r, _checked_words((s0, s1, s2, s3)))
    return r


def build_alias_table(weights):
    """Walker's alias table of the distribution proportional to ``weights``.

    Vose's O(n) construction (Vose 1991): the weights are scaled to mean
    one; a column below one ("small") is filled up from a column above
    ("large"), whose excess shrinks by what it gave, until every column
    holds exactly one unit. Drawing is then O(1) (``alias_draw``): column k
    uniformly, kept with probability ``prob[k]``, else ``alias[k]``. The
    large column's new excess is computed as (large + small) - 1, the
    order that keeps rounding from accumulating (Vose, Sec. 4); columns
    left over at the end are one up to rounding and keep themselves.

    Parameters
    ----------
    weights : array-like of shape (n,)
        Non-negative, finite, with a positive sum.

    Returns
    -------
    prob : ndarray of shape (n,), float64
        Probability of keeping column k.
    alias : ndarray of shape (n,), intp
        The value column k gives otherwise.

    Examples
    --------
    >>> from sksoftmax._shared._random import build_alias_table
    >>> prob, alias = build_alias_table([1.0, 3.0])
    >>> prob.tolist(), alias.tolist()
    ([0.5, 1.0], [1, 1])
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] == 0:
        raise ValueError("weights must be a non-empty 1-D array")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    total = w.sum()
    if not total > 0:
        raise ValueError("weights must have a positive sum")
    cdef Py_ssize_t n = w.shape[0]
    cdef double[::1] scaled = w * (n / total)
    prob = np.empty(n, dtype=np.float64)
    alias = np.empty(n, dtype=np.intp)
    cdef double[::1] p = prob
    cdef Py_ssize_t[::1] a = alias
    cdef Py_ssize_t[::1] small = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] large = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t k, lo, hi, n_small = 0, n_large = 0
    with nogil:
        for k in range(n):
            if scaled[k] < 1.0:
                small[n_small] = k
                n_small += 1
            else:
                large[n_large] = k
                n_large += 1
        while n_small > 0 and n_large > 0:
            n_small -= 1
            lo = small[n_small]
            hi = large[n_large - 1]
            p[lo] = scaled[lo]
            a[lo] = hi
            scaled[hi] = (scaled[hi] + scaled[lo]) - 1.0
            if scaled[hi] < 1.0:
                n_large -= 1
                small[n_small] = hi
                n_small += 1
        while n_large > 0:
            n_large -= 1
            p[large[n_large]] = 1.0
            a[large[n_large]] = large[n_large]
        while n_small > 0:
            n_small -= 1
            p[small[n_small]] = 1.0
            a[small[n_small]] = small[n_small]
    return prob, alias


cdef class AliasTable:
    """A class distribution q and its alias table, for the kernels.

    Kernels take one (or None for their uniform sampler), draw from it with
    ``alias_draw`` and read ``q`` for their importance weights.

    Parameters
    ----------
    weights : array-like of shape (n_classes,)
        Non-negative, finite, positive sum; q = weights / sum(weights).

    Attributes
    ----------
    q, prob, alias : ndarray of shape (n_classes,)
        The distribution and its table (see ``build_alias_table``).
    n_classes : int

    Examples
    --------
    >>> from sksoftmax._shared._random import AliasTable, RandomState
    >>> table = AliasTable([1.0, 0.0, 3.0])
    >>> table.q.tolist()
    [0.25, 0.0, 0.75]
    >>> int((RandomState(0).sample_alias(table, 1000) == 1).sum())
    0
    """

    def __init__(self, weights):
        prob, alias = build_alias_table(weights)
        w = np.asarray(weights, dtype=np.float64)
        self._set(w / w.sum(), prob, alias)

    cdef _set(self, q, prob, alias):
        self._q = q
        self._prob = prob
        self._alias = alias
        self.n_classes = q.shape[0]

    @property
    def q(self):
        return np.asarray(self._q)

    @property
    def prob(self):
        return np.asarray(self._prob)

    @property
    def alias(self):
        return np.asarray(self._alias)

    def __reduce__(self):
        return (_rebuild_alias_table, (self.q, self.prob, self.alias))

    def __getstate__(self):
        """q and its table, for state-dict persistence (skops)."""
        return {"q": self.q, "prob": self.prob, "alias": self.alias}

    def __setstate__(self, state):
        if not isinstance(state, dict):
            raise ValueError(f"an AliasTable's state is a dict, got {state!r}")
        _fill_alias_table(self, state.get("q"), state.get("prob"),
                          state.get("alias"))


cdef _fill_alias_table(AliasTable table, q, prob, alias):
    """Set a table after checking what the kernels rely on: equal lengths,
    q a distribution, prob in [0, 1], aliases in range (a kernel reads
    ``alias[k]`` without bounds checks)."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    prob = np.ascontiguousarray(prob, dtype=np.float64)
    alias = np.ascontiguousarray(alias, dtype=np.intp)
    n = q.shape[0] if q.ndim == 1 else -1
    if (n < 1 or prob.shape != (n,) or alias.shape != (n,)
            or not np.all(np.isfinite(q)) or np.any(q < 0)
            or not abs(q.sum() - 1.0) < 1e-9
            or np.any(~(prob >= 0)) or np.any(prob > 1)
            or np.any(alias < 0) or np.any(alias >= n)):
        raise ValueError(
            "an AliasTable's state must be q (a distribution), prob in "
            "[0, 1] and alias in [0, n_classes), all of one length")
    table._set(q, prob, alias)


def _rebuild_alias_table(q, prob, alias):
    cdef AliasTable table = AliasTable.__new__(AliasTable)
    _fill_alias_table(table, q, prob, alias)
    return table
