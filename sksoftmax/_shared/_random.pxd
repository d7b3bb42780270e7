# The one random number generator of the package: xoshiro256** (Blackman &
# Vigna 2018) seeded through splitmix64, and its class samplers. Everything
# here is inline and nogil so that kernels draw numbers inside their per-row
# loops without touching Python.
from libc.stdint cimport uint64_t


ctypedef struct rng_state:
    uint64_t s0
    uint64_t s1
    uint64_t s2
    uint64_t s3


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t _splitmix64(uint64_t* x) noexcept nogil:
    x[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline void rng_seed(rng_state* st, uint64_t seed) noexcept nogil:
    # splitmix64 spreads any seed (0 included) over the 256-bit state, which
    # xoshiro needs to be non-zero.
    cdef uint64_t x = seed
    st.s0 = _splitmix64(&x)
    st.s1 = _splitmix64(&x)
    st.s2 = _splitmix64(&x)
    st.s3 = _splitmix64(&x)


cdef inline uint64_t rng_next(rng_state* st) noexcept nogil:
    cdef uint64_t result = _rotl(st.s1 * 5, 7) * 9
    cdef uint64_t t = st.s1 << 17
    st.s2 ^= st.s0
    st.s3 ^= st.s1
    st.s1 ^= st.s2
    st.s0 ^= st.s3
    st.s2 ^= t
    st.s3 = _rotl(st.s3, 45)
    return result


cdef inline double rng_uniform(rng_state* st) noexcept nogil:
    """Uniform double in [0, 1) with 53 random bits."""
    return <double>(rng_next(st) >> 11) * (1.0 / 9007199254740992.0)


cdef inline rng_state chunk_stream(uint64_t epoch_seed,
                                   Py_ssize_t chunk) noexcept nogil:
    """The stream of chunk ``chunk`` of a threaded epoch (``_hogwild.pxd``).

    Each chunk of rows draws from its own stream, so that the draws do not
    depend on which thread runs it. The chunk index is mixed through
    splitmix64 before seeding: seeding with epoch_seed + chunk directly
    would give neighbouring chunks shifted copies of one splitmix sequence,
    hence shared state words. Returned by value: assigned in a ``prange``
    body, it is then private to the thread.
    """
    cdef uint64_t x = epoch_seed ^ (<uint64_t>chunk
                                    * <uint64_t>0xD1B54A32D192ED03ULL)
    cdef uint64_t seed = _splitmix64(&x)
    cdef rng_state st
    rng_seed(&st, seed)
    return st


cdef inline Py_ssize_t rng_randint(rng_state* st, Py_ssize_t n) noexcept nogil:
    """Uniform integer in [0, n), n >= 1, without modulo bias.

    Draws below 2**64 mod n are rejected so that every residue is equally
    likely; the rejection probability is below n / 2**64.
    """
    cdef uint64_t un = <uint64_t>n
    cdef uint64_t threshold = (<uint64_t>0 - un) % un
    cdef uint64_t r = rng_next(st)
    while r < threshold:
        r = rng_next(st)
    return <Py_ssize_t>(r % un)


cdef inline void rng_shuffle(rng_state* st, Py_ssize_t* a,
                             Py_ssize_t n) noexcept nogil:
    """Fisher-Yates shuffle of a[0:n] in place."""
    cdef Py_ssize_t i, j, tmp
    for i in range(n - 1, 0, -1):
        j = rng_randint(st, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp


cdef inline void sample_classes_with_replacement(
        rng_state* st, Py_ssize_t n_classes, Py_ssize_t exclude,
        Py_ssize_t m, Py_ssize_t* out) noexcept nogil:
    """m classes drawn uniformly with replacement from {0..K-1} - exclude.

    Needs n_classes >= 2. Drawing from K-1 values and stepping over
    ``exclude`` keeps one draw per class (no rejection loop).
    """
    cdef Py_ssize_t j, r
    for j in range(m):
        r = rng_randint(st, n_classes - 1)
        if r >= exclude:
            r += 1
        out[j] = r


cdef inline void sample_classes_without_replacement(
        rng_state* st, Py_ssize_t n_classes, Py_ssize_t exclude,
        Py_ssize_t m, Py_ssize_t* out) noexcept nogil:
    """m distinct classes drawn uniformly from {0..K-1} minus exclude.

    Floyd's algorithm: one draw per output and O(m^2) membership tests,
    whatever K is. Needs 1 <= m <= K - 1.
    """
    cdef Py_ssize_t n = n_classes - 1
    cdef Py_ssize_t j, t, q, filled = 0
    cdef bint seen
    for j in range(n - m, n):
        t = rng_randint(st, j + 1)
        seen = False
        for q in range(filled):
            if out[q] == t:
                seen = True
                break
        out[filled] = j if seen else t
        filled += 1
    for j in range(m):
        if out[j] >= exclude:
            out[j] += 1


cdef inline void sample_classes_marked(
        rng_state* st, Py_ssize_t n_classes, Py_ssize_t exclude,
        Py_ssize_t m, Py_ssize_t* out, long long* stamp,
        long long mark) noexcept nogil:
    """The draws of ``sample_classes_without_replacement``, in O(m).

    Floyd's algorithm with the same random numbers and the same output,
    but the membership test is a look-up in ``stamp`` (n_classes - 1
    entries; those equal to ``mark`` are taken) instead of a scan of the
    classes drawn so far: for m in the hundreds the scan's O(m^2) per row
    dominates. The caller passes a new ``mark`` per draw, so ``stamp`` is
    never cleared.
    """
    cdef Py_ssize_t n = n_classes - 1
    cdef Py_ssize_t j, t, filled = 0
    for j in range(n - m, n):
        t = rng_randint(st, j + 1)
        if stamp[t] == mark:
            t = j
        stamp[t] = mark
        out[filled] = t
        filled += 1
    for j in range(m):
        if out[j] >= exclude:
            out[j] += 1


cdef inline Py_ssize_t alias_draw(rng_state* st, const double* prob,
                                  const Py_ssize_t* alias,
                                  Py_ssize_t n) noexcept nogil:
    """One draw from Walker's alias table (prob, alias) over n values.

    Column k is picked uniformly and kept with probability prob[k], or
    replaced by its alias: one bounded integer and one uniform double per
    draw, whatever the distribution (tables from ``build_alias_table``).
    Both numbers are always drawn, so the stream advances the same way
    whichever branch is taken.
    """
    cdef Py_ssize_t k = rng_randint(st, n)
    if rng_uniform(st) < prob[k]:
        return k
    return alias[k]


cdef class RandomState:
    cdef rng_state state


cdef class AliasTable:
    # _q: the sampling distribution (sums to one); _prob, _alias: its table
    cdef const double[::1] _q
    cdef const double[::1] _prob
    cdef const Py_ssize_t[::1] _alias
    cdef readonly Py_ssize_t n_classes
    cdef _set(self, q, prob, alias)


cdef struct AliasArrays:
    # an AliasTable's arrays for nogil code: q, and its table (prob,
    # alias); all NULL for the uniform sampler (no table)
    const double* q
    const double* prob
    const Py_ssize_t* alias


cdef inline AliasArrays alias_arrays(AliasTable sampler,
                                     Py_ssize_t n_classes) except *:
    """The arrays of ``sampler`` (None: NULLs), checked to have
    ``n_classes`` classes."""
    cdef AliasArrays a
    a.q = NULL
    a.prob = NULL
    a.alias = NULL
    if sampler is None:
        return a
    if sampler.n_classes != n_classes:
        raise ValueError(f"sampler has {sampler.n_classes} classes, "
                         f"W has {n_classes}")
    a.q = &sampler._q[0]
    a.prob = &sampler._prob[0]
    a.alias = &sampler._alias[0]
    return a
