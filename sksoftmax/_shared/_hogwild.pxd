# Lock-free row-parallel epochs (Recht, Re, Wright & Niu 2011, "Hogwild!")
# shared by the U-max, Implicit SGD and sampled-softmax kernels: the epoch
# driver is written here once, each solver supplies its per-row (or
# per-minibatch) step.
#
# An epoch's rows (in the shuffled order) are cut into chunks of
# HOGWILD_CHUNK rows (or one minibatch); the threads take chunks
# dynamically and run the serial step on each, reading and writing W
# without locks: a sparse row touches few entries of W, so two threads
# rarely write the same entry, and Hogwild's analysis bounds the effect of
# the collisions that do happen. What is not sparse is kept off the
# threads:
#
# - W's lazy global scale (the L2 shrinkage), ||W||^2 and App. B's
#   projection, the iterate average and the error checks are per-epoch
#   bookkeeping that every row would write: each chunk sums its part
#   privately (``EpochSums``) and the epoch merges the sums between
#   *rounds* of HOGWILD_ROUND_CHUNKS chunks per thread, with the threads
#   joined. A row's shrinkage is thus applied at the end of its round (the
#   rows of a round step from the round's starting scale; each sees the
#   product ``pend`` of the factors of the round's earlier units, not yet
#   applied to W), and the rows of a round enter the average with the
#   round's final iterate, as a minibatch's rows do;
# - every chunk draws its classes from its own random stream, seeded from
#   one number drawn from the estimator's generator per epoch and the
#   chunk's index, so the draws do not depend on which thread runs the
#   chunk (the result still does, through the timing of the writes: a
#   threaded fit is reproducible in distribution only).
# The per-chunk streams are ``chunk_stream`` of _random.pxd.
#
# A solver hands ``hogwild_epoch`` a ``HogwildPlan``: its epoch state
# (``solver``, opaque here), the function that runs one chunk's rows and
# the function that multiplies in one unit's shrinkage factor. The
# functions are plain C function pointers; they are called once per chunk
# and once per unit, the rows' own loop staying inside the solver's
# chunk function (``lookahead_rows`` of _lookahead.pxd for the row-wise
# solvers), so the indirection costs nothing measurable.
from libc.math cimport sqrt, isfinite
from libc.stdlib cimport calloc, free
from libc.stdint cimport uint64_t
from cython.parallel cimport prange, threadid

from sksoftmax._shared._codes cimport STATUS_OK, STATUS_NONFINITE
from sksoftmax._shared._random cimport rng_state, rng_next, chunk_stream
from sksoftmax._shared._weight_matrix cimport WeightMatrix64, WeightMatrix32

cdef enum:
    HOGWILD_CHUNK = 64
    HOGWILD_ROUND_CHUNKS = 16


cdef struct EpochSums:
    # what the rows of a chunk (or of a one-thread epoch) add up; a step
    # adds to these, a failing one sets status, bad_row and bad_value
    double objective
    double weight
    # Hogwild steps: their change of ||W||^2, in the units of the round's
    # start
    double sq_delta
    double bad_value
    long long n_evals       # a solver's own count (Implicit SGD: g's)
    Py_ssize_t bad_row
    int status


# the rows order[r0:r1] of one chunk, drawing from ``stream``, the thread's
# scratch ``tid``; ``pend[r]``: the pending shrinkage of the chunk's unit r
# (see above); ``stop`` is set by a failing chunk and read by the others
# at each row. Returns the status (also in ``sums``).
ctypedef int (*hogwild_chunk_fn)(
    const void* solver, Py_ssize_t r0, Py_ssize_t r1, int tid,
    rng_state* stream, const double* pend, int* stop,
    EpochSums* sums) noexcept nogil

# ``factor`` times the L2 shrinkage factor of unit ``unit`` of the epoch
# (a row, or a minibatch)
ctypedef double (*hogwild_shrink_fn)(
    const void* solver, Py_ssize_t unit, double factor) noexcept nogil


cdef struct HogwildPlan:
    const void* solver
    hogwild_chunk_fn run_chunk
    hogwild_shrink_fn shrink
    const Py_ssize_t* order
    Py_ssize_t n_rows
    Py_ssize_t unit_rows        # rows per unit: 1, or the minibatch size
    Py_ssize_t chunk_units      # units per chunk
    int n_threads
    double alpha                # > 0: units shrink W; ||W||^2 exact at end
    # App. B's projection of W between rounds (INFINITY: none)
    double bound_w


ctypedef fused HogwildWeights:
    WeightMatrix64
    WeightMatrix32


cdef inline EpochSums epoch_sums() noexcept nogil:
    """Sums at zero, no failure. Returned by value: assigned in a
    ``prange`` body, the sums are then private to the thread."""
    cdef EpochSums s
    s.objective = 0.0
    s.weight = 0.0
    s.sq_delta = 0.0
    s.bad_value = 0.0
    s.n_evals = 0
    s.bad_row = -1
    s.status = STATUS_OK
    return s


cdef inline int hogwild_epoch(HogwildWeights wm, const HogwildPlan* p,
                              rng_state* rng, long long* t,
                              EpochSums* total) except -1:
    """One epoch of ``p`` on ``p.n_threads`` threads; returns its status.

    Draws the epoch's seed from ``rng`` (after the caller's shuffle of
    ``p.order``). Rounds of HOGWILD_ROUND_CHUNKS chunks per thread; each
    chunk sums its objective, weight, change of ||W||^2 and count
    privately and stops at its first bad row. Between rounds: ||W||^2
    updated, the units' L2 shrinkage applied as one factor, App. B's
    projection, the round's rows averaged at the round's iterate, errors
    reported (the first bad chunk in row order). ``total`` receives the
    sums; ``t`` (rows before the epoch) moves on by the epoch's rows when
    it succeeds.
    """
    cdef Py_ssize_t n_units = (p.n_rows + p.unit_rows - 1) // p.unit_rows
    cdef Py_ssize_t n_chunks = (n_units + p.chunk_units - 1) // p.chunk_units
    cdef Py_ssize_t per_round = HOGWILD_ROUND_CHUNKS * p.n_threads
    cdef Py_ssize_t chunk_rows = p.chunk_units * p.unit_rows
    cdef Py_ssize_t first, last, c, cc, u, r0, r1
    cdef int status = STATUS_OK
    cdef int stop = 0
    cdef double factor
    cdef uint64_t epoch_seed
    cdef rng_state stream
    cdef EpochSums sums
    # per chunk: its sums (written once per chunk, so no two threads share
    # a line for long); per unit of a round: the product of the shrinkage
    # factors of the round's earlier units (1 without a penalty)
    cdef EpochSums* chunk_sums = <EpochSums*>calloc(max(n_chunks, 1),
                                                    sizeof(EpochSums))
    cdef double* pend = <double*>calloc(per_round * p.chunk_units,
                                        sizeof(double))
    total[0] = epoch_sums()
    if chunk_sums == NULL or pend == NULL:
        free(chunk_sums)
        free(pend)
        raise MemoryError()
    with nogil:
        epoch_seed = rng_next(rng)
        first = 0
        while first < n_chunks and status == STATUS_OK:
            last = min(first + per_round, n_chunks)
            # each unit's shrinkage, applied at the end of the round as one
            # factor (the units see the pending part)
            factor = 1.0
            for u in range(first * p.chunk_units,
                           min(last * p.chunk_units, n_units)):
                pend[u - first * p.chunk_units] = factor
                if p.alpha > 0.0:
                    factor = p.shrink(p.solver, u, factor)
            for c in prange(first, last, schedule="dynamic", chunksize=1,
                            num_threads=p.n_threads):
                stream = chunk_stream(epoch_seed, c)
                sums = epoch_sums()
                sums.status = p.run_chunk(
                    p.solver, c * chunk_rows,
                    min((c + 1) * chunk_rows, p.n_rows), threadid(),
                    &stream, &pend[(c - first) * p.chunk_units], &stop,
                    &sums)
                chunk_sums[c] = sums
            # merge the round, in chunk order
            for cc in range(first, last):
                if chunk_sums[cc].status != STATUS_OK:
                    status = chunk_sums[cc].status
                    total.bad_row = chunk_sums[cc].bad_row
                    total.bad_value = chunk_sums[cc].bad_value
                    break
                total.objective += chunk_sums[cc].objective
                total.weight += chunk_sums[cc].weight
                total.n_evals += chunk_sums[cc].n_evals
                wm.sq_norm = max(wm.sq_norm + chunk_sums[cc].sq_delta, 0.0)
            if status != STATUS_OK:
                break
            r0 = first * chunk_rows
            r1 = min(last * chunk_rows, p.n_rows)
            if p.alpha > 0.0:
                wm.scale_by(factor)
                if wm.sq_norm > p.bound_w * p.bound_w:
                    wm.scale_by(p.bound_w / sqrt(wm.sq_norm))
            if not isfinite(wm.sq_norm):
                status = STATUS_NONFINITE
                total.bad_row = p.order[r0]
                total.bad_value = wm.sq_norm
                break
            wm.average_rows(t[0] + r1, r1 - r0)
            first = last
    free(chunk_sums)
    free(pend)
    total.status = status
    if status == STATUS_OK:
        # the merged ||W||^2 summed changes measured at stale dot products
        # (other threads' writes in between); the exact value for the
        # penalty and App. B's projection, once per epoch
        if p.alpha > 0.0:
            wm.recompute_sq_norm()
        t[0] += p.n_rows
    return status
