"""What every method's kernel shares, written once (Cython, private).

The estimators and their kernels stay in pairs one folder up
(``_umax.py`` + ``_umax_fast.pyx.tp``, ...); what they have in common lives
here, in layers from the data up, as scikit-learn keeps ``_seq_dataset``
and ``_weight_vector`` in ``sklearn/utils``:

Data and parameters
    ``_dataset`` (``RowDataset64/32``: rows of a C-contiguous array or a
    CSR matrix behind one nogil interface) and ``_weight_matrix``
    (``WeightMatrix64/32``: W with one lazy global scale, lazy L2 decay,
    the running mean of the iterates for ``average=True``, and the
    lock-free writes of threaded epochs), ``_transpose`` (W turned
    between class-major, as the sampled-class solvers train it, and
    feature-major, as prediction reads it, in its own memory).

Randomness
    ``_random`` (xoshiro256** seeded from ``random_state``, uniform and
    bounded draws, shuffles, the alias table of the frequency sampler,
    per-chunk streams of threaded epochs; picklable and skops-safe) and
    ``_lookahead`` (classes drawn a few rows early so that their rows of W
    can be prefetched, and the row loop of the row-wise solvers built on
    it).

Numerics
    ``_special`` (log1p(exp), log-sum-exp, Wright omega, the normal's Mills
    ratio, the bound method's beta, a vectorised exp), ``_codes`` (the
    status and schedule codes, declared once in ``_codes.pxd`` and read
    by the Python side from its compiled module) and ``_sgd_common``
    (step sizes, the overflow threshold).

Step sizes
    ``_adaptive_schedule`` (Kucukelbir et al.'s per-coordinate step, kept
    lazily) and ``_adagrad`` (per-feature AdaGrad for U-max and Implicit
    SGD with lazy per-column L2 decay).

Threads and evaluation
    ``_openmp`` (whether the build has OpenMP, and the threads ``n_jobs``
    means), ``_hogwild.pxd`` (the driver of the lock-free threaded epochs
    of U-max, Implicit SGD and the sampled baselines, which supply their
    per-row or per-minibatch step) and ``_evaluation`` (exact scores,
    probabilities, log-loss and top-k of every estimator, blockwise, on
    ``n_jobs`` threads) and ``_class_blocks`` (the top k, argmax and
    log-partition of sparse rows by blocks of 64 classes, W read in
    place).

Templates (``*.tp``) are expanded by ``setup.py`` into the float64 and
float32 variants; the generated ``.pyx``/``.pxd`` are not committed.
"""
