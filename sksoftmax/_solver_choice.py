"""The solver of ``SoftmaxClassifier``: which one, within what memory, built.

- ``choose_solver``: the solver ``solver='auto'`` takes, full-batch
  'lbfgs' for small dense problems, else the exact gradient while a row
  costs few enough multiply-adds and W fits, else SAMPLED_DEFAULT;
- memory sizing: the sampled solver's parameters at memory's limit
  (``memory_params``), whether the undo keeps a snapshot
  (``snapshots_fit``), and ``within_memory`` for any other copy the fit
  would make; ``available_memory`` is the one place the machine's memory
  is read (tests and benchmarks replace it here);
- building: ``make_solver`` (the solver object of a name) and
  ``new_solver`` (a fresh one, its intercepts at the log class prior).
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ._base import _prior_pseudo_weight
from ._exact import ExactSolver
from ._expert_solver import ExpertSolver
from ._full_batch import (
    FULL_BATCH_MAX_MADDS,
    GTOL_PER_TOL,
    MIN_DENSITY,
    FullBatchSolver,
    density,
    n_folds,
)
from ._registry import solver_classes
from ._step_pilot import ETA_NO_PILOT

# The sampled-class solvers: name -> expert estimator class (the registry's
# entries with a solver name). 'exact' is the exact-gradient solver of
# _exact.py, 'lbfgs' the full-batch solver of _full_batch.py.
EXPERT_SOLVERS = solver_classes()
SOLVERS = ("exact", "lbfgs") + tuple(EXPERT_SOLVERS)

# solver='auto': fit takes the exact gradient while a row costs at most
# this many multiply-adds, n_classes x (mean nnz per row + 1): between
# the largest per-row cost of a benchmark set the exact solver won against
# SCENT (5.4e5) and the least of one SCENT won (9.7e5), their geometric
# mean (chosen leave-one-dataset-out by loo_solver_bound.py, since removed;
# in git history)
EXACT_MAX_MADDS = 7.2e5
# partial_fit (one pass a call) takes it while a row costs at most this
# many: a cost cap, so that a call's cost stays near a sampled pass's at
# any number of classes beyond it
STREAM_EXACT_MAX_MADDS = 5e5
# and while the weights and one snapshot take at most this share of the
# memory the machine has
EXACT_MAX_MEMORY_SHARE = 0.5
# the sampled-class solver beyond
SAMPLED_DEFAULT = "scent"
# A fit holds the solver's state (W and the method's W-sized arrays, e.g.
# SCENT's momentum V) and, for the undo of a worse epoch, one snapshot of
# it. With solver='auto', while that state and its snapshot take more than
# EXACT_MAX_MEMORY_SHARE of the memory the sampled solver runs with these
# parameters, which drop its W-sized arrays (SCENT: momentum off, no V);
# and the undo keeps no snapshot (an epoch worse beyond the noise then
# halves the step and is kept) while W and its copy would not fit there
# (``snapshots_fit``)
LOW_MEMORY_PARAMS = {"scent": {"momentum": 1.0}}


def available_memory():
    """Bytes of memory the machine has (0 if unknown)."""
    try:
        import os

        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def within_memory(n_bytes):
    """Whether ``n_bytes`` take at most EXACT_MAX_MEMORY_SHARE of the
    machine's memory (always when the memory is unknown)."""
    available = available_memory()
    return not available or n_bytes <= EXACT_MAX_MEMORY_SHARE * available


def extra_weight_copies(estimator):
    """W-sized arrays a sampled solver's estimator keeps beyond W: SCENT's
    momentum V (momentum < 1), the iterate average (``average``)."""
    params = estimator.get_params()
    momentum = params.get("momentum", 1.0)
    return int(momentum < 1.0) + int(bool(params.get("average", False)))


def row_classes(estimator):
    """Classes a training row of a sampled solver meets per update (its
    scores and gradient cost about this many times (nnz + 1) each): the
    minibatch's in-batch negatives (SCENT's ``batch_size``), else the
    sampled classes plus the row's own."""
    params = estimator.get_params()
    if "negatives" in params and isinstance(params.get("batch_size"), Integral):
        return params["batch_size"]
    sampled = params.get("n_sampled_classes")
    return (sampled if isinstance(sampled, Integral) else 1) + 1


def mean_nnz(X):
    """Mean nonzeros of a row of X (its width when dense)."""
    if sp.issparse(X):
        return X.nnz / max(X.shape[0], 1)
    return float(X.shape[1])


def weight_bytes(n_classes, X):
    """Bytes of W: n_classes x n_features in X's dtype."""
    return float(n_classes) * X.shape[1] * np.dtype(X.dtype).itemsize


def choose_solver(est, n_classes, X, streaming=False):
    """(name, reason) of the solver ``solver='auto'`` takes for the
    estimator ``est``.

    For dense data (at least MIN_DENSITY of X's entries nonzero, in
    either format) while the penalty path (about PATH_PASSES passes
    over the rows) costs at most FULL_BATCH_MAX_MADDS multiply-adds,
    'lbfgs' (not for ``partial_fit``, ``streaming``: one pass a
    call).

    The exact gradient costs n_classes x (nnz + 1) multiply-adds and
    n_classes exponentials per row, and gives each row's full
    information; the sampled solvers cost a few classes per row but
    need many more epochs and, at equal epochs, end further from the
    optimum (benchmarks/results/large_k_*.md). The
    exact solver is taken while a row costs at most EXACT_MAX_MADDS
    multiply-adds (``streaming``: STREAM_EXACT_MAX_MADDS) and its
    weights plus one snapshot fit in EXACT_MAX_MEMORY_SHARE of the
    machine's memory.
    """
    if est.solver != "auto":
        return est.solver, "solver given"
    folds = 0 if streaming else n_folds(
        X.shape[0], n_classes, X, est.validation_fraction
    )
    if folds >= 1:
        share = density(X)
        if share >= MIN_DENSITY:
            return "lbfgs", (
                f"dense data ({share:.0%} of the entries nonzero), "
                f"{X.shape[0]} rows x {n_classes} classes x "
                f"{X.shape[1]} features: the penalty path costs at most"
                f" {FULL_BATCH_MAX_MADDS:.3g} multiply-adds ({folds} "
                "folds)"
            )
    nnz = mean_nnz(X)
    madds = n_classes * (nnz + float(est.fit_intercept))
    memory = 2.0 * weight_bytes(n_classes, X)
    available = available_memory()
    bound = STREAM_EXACT_MAX_MADDS if streaming else EXACT_MAX_MADDS
    if madds > bound:
        return SAMPLED_DEFAULT, (
            f"{n_classes} classes x {nnz:.1f} nonzeros per row = "
            f"{madds:.3g} multiply-adds per row for the exact gradient,"
            f" more than {bound:.3g}"
            + (" (partial_fit: one pass a call)" if streaming else "")
        )
    if available and memory > EXACT_MAX_MEMORY_SHARE * available:
        return SAMPLED_DEFAULT, (
            f"the weights and their snapshot take {memory / 2**30:.1f}"
            f" GiB, more than half of the {available / 2**30:.1f} GiB "
            "of memory"
        )
    return "exact", (
        f"{madds:.3g} multiply-adds per row for the exact gradient "
        f"(at most {bound:.3g})"
    )


def memory_params(est, name, n_classes, X):
    """(params, reason): the parameters ``solver='auto'`` gives the
    sampled solver ``name`` for memory, and why.

    The fit holds the solver's state, W and the method's W-sized
    arrays (``extra_weight_copies``: SCENT's momentum), plus one
    snapshot of it for the undo. While the two take more than
    EXACT_MAX_MEMORY_SHARE of the machine's memory, the method runs
    with LOW_MEMORY_PARAMS, which drop the W-sized arrays (SCENT:
    momentum=1.0, no V); within it, with its defaults.
    """
    low = LOW_MEMORY_PARAMS.get(name)
    if est.solver != "auto" or not low:
        return {}, ""
    default = EXPERT_SOLVERS[name]()
    copies = 1 + extra_weight_copies(default)
    reduced = 1 + extra_weight_copies(default.set_params(**low))
    w_bytes = weight_bytes(n_classes, X)
    available = available_memory()
    need = 2.0 * copies * w_bytes
    if copies == reduced or not available or (
        need <= EXACT_MAX_MEMORY_SHARE * available
    ):
        return {}, ""
    given = ", ".join(f"{k}={v!r}" for k, v in low.items())
    return dict(low), (
        f"; with {given}: W and its {copies - 1} W-sized arrays, twice "
        f"(a snapshot), take {need / 2**30:.1f} GiB, more than "
        f"{EXACT_MAX_MEMORY_SHARE:g} of the {available / 2**30:.1f} GiB "
        f"of memory ({2.0 * reduced * w_bytes / 2**30:.1f} GiB with "
        f"{given})"
    )


def choose_solver_verbosely(est, n_classes, X, streaming=False):
    """Set ``est.solver_`` and the parameters memory asks of it (saying
    why with ``verbose``); returns it."""
    name, reason = choose_solver(est, n_classes, X, streaming)
    est.solver_ = name
    est._solver_params, note = (
        memory_params(est, name, n_classes, X)
        if name not in ("exact", "lbfgs")
        else ({}, "")
    )
    if est.verbose:
        print(f"SoftmaxClassifier: solver {name!r}: {reason}{note}")
    return name


def snapshots_fit(est, X):
    """Whether ``fit`` keeps a snapshot of the solver's state for the
    undo: the state (W and the method's W-sized arrays) twice within
    EXACT_MAX_MEMORY_SHARE of the memory (always when the memory is
    unknown). Without, an epoch worse beyond the held-out rows' noise
    halves the step and is kept, and a diverging epoch raises."""
    solver = est._solver
    copies = 1
    if isinstance(solver, ExpertSolver):
        copies += extra_weight_copies(solver.estimator)
    w_bytes = weight_bytes(est.classes_.shape[0], X)
    return within_memory(2.0 * copies * w_bytes)


def make_solver(est, name, n_threads):
    """The solver object ``name`` with the estimator's parameters."""
    if name == "lbfgs":
        return FullBatchSolver(
            eta=ETA_NO_PILOT if est.eta0 == "auto" else float(est.eta0),
            alpha=float(est.alpha),
            fit_intercept=est.fit_intercept,
            n_threads=n_threads,
            tol=0.0 if est.tol is None else GTOL_PER_TOL * est.tol,
            max_iter=est.max_iter,
        )
    if name == "exact":
        eta = ETA_NO_PILOT if est.eta0 == "auto" else float(est.eta0)
        return ExactSolver(
            eta=eta,
            alpha=float(est.alpha),
            fit_intercept=est.fit_intercept,
            n_threads=n_threads,
            adaptive=est.__dict__.get("step_rule_") != "constant",
        )
    cls = EXPERT_SOLVERS[name]
    params = dict(
        alpha=est.alpha,
        fit_intercept=est.fit_intercept,
        eta0=est.eta0,
        random_state=est._seed(),
        shuffle=est.shuffle,
    )
    if "n_jobs" in cls().get_params():
        params["n_jobs"] = est.n_jobs
    if est.allow_new_classes:
        # the expert adds the classes this estimator adds
        params["allow_new_classes"] = True
    # solver='auto' at memory's limit (memory_params)
    params.update(est.__dict__.get("_solver_params", {}))
    return ExpertSolver(clone(cls(**params)))


def new_solver(est, X, y, sample_weight):
    """A fresh ``est._solver`` of ``est.solver_`` for X's shape and dtype,
    its intercepts at the log class prior of the rows (y,
    sample_weight)."""
    n_classes = est.classes_.shape[0]
    counts = np.bincount(y, weights=sample_weight, minlength=n_classes)
    est._solver = make_solver(est, est.solver_, est._n_threads())
    est._solver.setup(
        n_classes,
        X.shape[1],
        X.dtype,
        prior_intercept(est.fit_intercept, counts),
    )


def prior_intercept(fit_intercept, counts):
    """Log class prior with one pseudo-row spread over the classes
    (a class without rows gets a small, finite intercept), of weight 1
    or the smallest positive class total when that is less
    (``_base._prior_pseudo_weight``)."""
    if not fit_intercept:
        return None
    total = counts.sum()
    if total <= 0:
        return None
    pseudo = _prior_pseudo_weight(counts, 1.0)
    return np.log((counts + pseudo / counts.shape[0]) / (total + pseudo))
