# The bound's per-row math, shared with the epochs of _bound_fast.pyx.tp.

cdef double softmax_bound(const double* s, Py_ssize_t K, double* gamma,
                          double* beta, double* kappa, double* U,
                          Py_ssize_t* order) noexcept nogil

cdef int woodbury_solve(double[:, ::1] V, const double* sig,
                        const double* Dg, const double* rhs, Py_ssize_t m,
                        double* out, double[:, ::1] H, double* h,
                        double* z, double[:, ::1] scratch) noexcept nogil
