"""Python face of the package's random number generator (see _random.pxd)."""
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
    >>> from sksoftmax._random import RandomState
    >>> a, b = RandomState(3), RandomState(3)
    >>> bool((a.randint(10, 5) == b.randint(10, 5)).all())
    True
    """

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


def _rebuild(s0, s1, s2, s3):
    cdef RandomState r = RandomState.__new__(RandomState)
    r.state.s0 = s0
    r.state.s1 = s1
    r.state.s2 = s2
    r.state.s3 = s3
    return r
