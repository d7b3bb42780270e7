"""OpenMP threads: what ``n_jobs`` means, and whether the build has OpenMP.

The kernels' parallel loops (``prange``) take their thread count from
:func:`effective_n_threads`. Without OpenMP (see setup.py) the loops run on
one thread and ``openmp_enabled()`` is False.
"""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int sks_openmp_enabled(void) { return 1; }
    static int sks_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int sks_openmp_enabled(void) { return 0; }
    static int sks_max_threads(void) { return 1; }
    #endif
    """
    int sks_openmp_enabled() nogil
    int sks_max_threads() nogil


def openmp_enabled():
    """Whether sksoftmax was built with OpenMP (multi-threaded kernels).

    Returns
    -------
    enabled : bool
        False when the compiler had no OpenMP: every estimator then runs
        on one thread whatever its ``n_jobs``.

    Examples
    --------
    >>> from sksoftmax import openmp_enabled
    >>> isinstance(openmp_enabled(), bool)
    True
    """
    return bool(sks_openmp_enabled())


def max_threads():
    """Threads an OpenMP region may use now: the cores, or fewer under
    ``OMP_NUM_THREADS`` or a threadpoolctl limit."""
    return int(sks_max_threads())


def effective_n_threads(n_jobs):
    """Threads for ``n_jobs``, as in scikit-learn.

    None means 1; -1 all the threads OpenMP may use (``max_threads``); -2
    all but one, and so on; a positive int is taken as given. Without
    OpenMP the answer is 1.
    """
    if n_jobs is None:
        return 1
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError("n_jobs == 0 has no meaning; use None, -1 or >= 1.")
    if not sks_openmp_enabled():
        return 1
    if n_jobs < 0:
        return max(1, max_threads() + 1 + n_jobs)
    return n_jobs
