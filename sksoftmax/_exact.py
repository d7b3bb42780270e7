"""Exact-gradient softmax SGD with per-feature AdaGrad-norm steps (private).

:class:`ExactSolver` holds the state of the exact-gradient solver and runs
its epochs through the Cython kernel ``_exact_fast``; an estimator drives
it (``setup``, then ``epoch`` and ``finalize`` per pass).

The model is p(y = k | x) = softmax_k(x . w_k + b_k), its weights stored
transposed (``Wt``, shape (D, K)): a nonzero x_j touches the contiguous
row ``Wt[j, :]``, so a row costs O(nnz K) in vectorised axpys, every class
with its exact gradient. A row i of weight s > 0 with scores z,
probabilities p = softmax(z) and gradient coefficients
c_k = s (p_k - [k = y_i]) (the row's gradient for w_k is c_k x_i) adds
``x_ij^2 sum_k c_k^2`` to feature j's accumulator G_j and steps
``Wt[j, :] -= eta / sqrt(eps + G_j) x_ij c``; the intercepts, with one
accumulator G_b += sum_k c_k^2, step ``b -= eta / sqrt(eps + G_b) c``.
AdaGrad's steps shrink as G grows, so a constant ``eta`` converges.

**Lazy exact L2 decay.** The penalty alpha/2 ||W||^2 (intercepts not
penalised) is applied as the exact flow of its gradient at each row: every
feature j decays by exp(-eta_j alpha s) per row of weight s, with
eta_j = eta / sqrt(eps + G_j). Between two rows that touch feature j,
G_j and hence eta_j do not change, so the decays of the rows in between
multiply to

    exp(-eta_j alpha (tau - tau_last_j)),

tau being the cumulative weight of the rows seen and tau_last_j its value
when feature j was last brought up to date. A row therefore decays only
its own features, just before it reads them, and :meth:`ExactSolver.finalize`
decays all the others up to the current tau: the weights are then exactly
those of decaying every feature at every row, at O(nnz K) per row instead
of O(D K).

The progressive loss an epoch returns is measured on each row before the
row's update: on a first pass, an estimate of the held-out log-loss.

Threads (``n_threads > 1``) run lock-free "Hogwild" epochs: see the
kernel's docstring (``_exact_fast.pyx.tp``) for what is shared and how the
intercepts are merged.
"""

import numpy as np
import scipy.sparse as sp

from ._exact_fast import (
    exact_epoch32,
    exact_epoch64,
    exact_finalize32,
    exact_finalize64,
)
from ._new_classes import grow_rows
from ._shared._codes import Status
from ._shared._dataset import make_dataset
from .exceptions import DivergenceError

# eps of the steps eta / sqrt(eps + G) (as learning_rate='adagrad')
EPS = 1e-8

# the kernel's status codes (_codes.pxd)
_WHAT = {
    Status.STATUS_OVERFLOW: "a row's log-loss exceeded 700 (its probability "
    "underflowed)",
    Status.STATUS_NONFINITE: "a score or the log-sum-exp became inf or NaN",
}


class ExactSolver:
    """State and epochs of exact-gradient softmax SGD (AdaGrad-norm steps).

    Parameters
    ----------
    eta : float
        Base step size (> 0). Feature j steps by ``eta / sqrt(eps + G_j)``;
        no single step moves a weight by more than ``eta``. It may be
        changed between epochs: the decay pending from earlier epochs is
        first brought up to date with the old value.
    alpha : float, default=0.0
        L2 penalty of the objective ``mean log-loss + alpha/2 ||W||^2``
        (intercepts not penalised), applied by lazy exact decay.
    fit_intercept : bool, default=True
        Whether the intercepts are learnt; otherwise ``b`` stays as set up.
    n_threads : int, default=1
        Threads of an epoch; above 1 a lock-free (Hogwild) epoch, which is
        reproducible in distribution only.
    adaptive : bool, default=True
        Per-feature AdaGrad-norm steps; False: every weight steps by
        ``eta`` times its gradient (plain SGD, exact gradient), which
        needs a decaying ``eta`` to converge.

    Attributes
    ----------
    Wt : ndarray of shape (n_features, n_classes)
        The transposed weights (float32 or float64). Exact only after
        :meth:`finalize` when ``alpha > 0``.
    b : ndarray of shape (n_classes,)
        The intercepts, same dtype.
    G : ndarray of shape (n_features,), float64
        Per-feature AdaGrad accumulators.
    Gb : float
        The intercepts' accumulator.
    tau_last : ndarray of shape (n_features,), float64
        Cumulative row weight up to which each feature is decayed.
    tau : float
        Cumulative weight of the rows seen with a penalty.

    Examples
    --------
    >>> import numpy as np
    >>> from sksoftmax._exact import ExactSolver
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]] * 10)
    >>> y = np.array([0, 1] * 10)
    >>> solver = ExactSolver(eta=0.5, alpha=0.01)
    >>> solver.setup(2, 2, np.float64)
    >>> for _ in range(5):
    ...     loss, weight = solver.epoch(X, y, np.ones(20), np.arange(20))
    >>> solver.finalize()
    >>> (X @ solver.coef_view().T + solver.b).argmax(axis=1)[:4]
    array([0, 1, 0, 1])
    """

    # threads: intercepts and G_b stepped per chunk on a private copy and
    # merged at the chunk's end (False: Hogwild writes by every row)
    chunk_intercept = True

    def __init__(self, *, eta, alpha=0.0, fit_intercept=True, n_threads=1,
                 adaptive=True):
        self.eta = eta
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.n_threads = n_threads
        self.adaptive = adaptive

    # ------------------------------------------------------------- state
    def setup(self, n_classes, n_features, dtype, intercept=None):
        """Allocate the state of a fresh fit.

        Parameters
        ----------
        n_classes, n_features : int
            K and D.
        dtype : {np.float32, np.float64}
            Dtype of ``Wt`` and ``b``, which must be that of X.
        intercept : array-like of shape (n_classes,), default=None
            Initial intercepts (copied, cast); zeros by default.
        """
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise TypeError(f"dtype must be float32 or float64, got {dtype}")
        # calloc'ed: a page is zeroed when first written, as writing the
        # zeros here would (the same page faults), without the extra pass,
        # and never for features no row has
        self.Wt = np.zeros((n_features, n_classes), dtype=dtype)
        if intercept is None:
            self.b = np.zeros(n_classes, dtype=dtype)
        else:
            self.b = np.array(intercept, dtype=dtype, copy=True).reshape(-1)
            if self.b.shape[0] != n_classes:
                raise ValueError(
                    f"intercept has {self.b.shape[0]} entries, "
                    f"expected {n_classes}"
                )
        self._b0 = self.b.copy()
        self.G = np.zeros(n_features, dtype=np.float64)
        self.Gb = 0.0
        self.tau_last = np.zeros(n_features, dtype=np.float64)
        self.tau = 0.0
        # the (eta, alpha) of the decay pending since the last finalize
        self._decay_params = (float(self.eta), float(self.alpha))

    def reset(self):
        """Back to the state :meth:`setup` left, in place: no allocation,
        no copy of W (the step pilot restarts each trial this way).

        Only the rows of ``Wt`` of features that were updated are zeroed:
        a feature's weights move only in an update that also adds to its
        ``G`` (a positive squared gradient norm), so ``G[j] == 0`` means
        ``Wt[j]`` is still zero. On sparse rows a pilot's trials touch a
        fraction of the features, and zeroing all of ``Wt`` per trial was
        the pilot's largest cost after its epochs at large D x K.
        """
        touched = np.flatnonzero(self.G)
        if 2 * touched.shape[0] > self.G.shape[0]:
            self.Wt.fill(0)
        elif touched.shape[0]:
            self.Wt[touched] = 0
        np.copyto(self.b, self._b0)
        self.G.fill(0)
        self.Gb = 0.0
        self.tau_last.fill(0)
        self.tau = 0.0
        self._decay_params = (float(self.eta), float(self.alpha))

    def _options(self, eta, alpha):
        return {
            "eta": float(eta),
            "alpha": float(alpha),
            "eps": EPS,
            "adaptive": bool(self.adaptive),
            "fit_intercept": bool(self.fit_intercept),
            "n_threads": max(int(self.n_threads), 1),
            "chunk_intercept": bool(self.chunk_intercept),
        }

    def _check_params(self):
        eta, alpha = float(self.eta), float(self.alpha)
        if not (np.isfinite(eta) and eta > 0):
            raise ValueError(f"eta must be a positive float, got {self.eta!r}")
        if not (np.isfinite(alpha) and alpha >= 0):
            raise ValueError(
                f"alpha must be a non-negative float, got {self.alpha!r}")
        return eta, alpha

    # ------------------------------------------------------------ epochs
    def epoch(self, X, y, sample_weight, order):
        """One pass over the rows ``X[order]``, updating the state in place.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features) or CSR matrix
            C-contiguous or CSR, of the dtype of ``Wt``.
        y : ndarray of shape (n_samples,)
            Class codes in [0, n_classes).
        sample_weight : ndarray of shape (n_samples,), float64, or None
            Row weights (None: ones); rows of weight 0 are skipped.
        order : ndarray of int
            Rows to visit, in order (a permutation or any index array).

        Returns
        -------
        loss_sum : float
            sum_i s_i log-loss_i over the visited rows, each measured
            before its own update (the progressive loss).
        weight_sum : float
            sum_i s_i over the visited rows.

        Raises
        ------
        DivergenceError
            When a score became non-finite or a row's loss exceeded 700:
            eta is far too large. The state is then partly updated.

        Notes
        -----
        The L2 decay stays pending: call :meth:`finalize` before reading
        ``Wt``.
        """
        eta, alpha = self._check_params()
        if (eta, alpha) != self._decay_params:
            # the pending decay ran under the old step and penalty
            self._finalize_with(*self._decay_params)
            self._decay_params = (eta, alpha)
        Wt = self.Wt
        n_features, n_classes = Wt.shape[0], self.b.shape[0]
        if X.dtype != Wt.dtype:
            raise TypeError(f"X has dtype {X.dtype}, the model {Wt.dtype}")
        if X.shape[1] != n_features:
            raise ValueError(
                f"X has {X.shape[1]} features, the model {n_features}")
        n = X.shape[0]
        y = np.ascontiguousarray(y, dtype=np.intp)
        if sample_weight is None:
            sample_weight = np.ones(n)
        sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
        order = np.ascontiguousarray(order, dtype=np.intp).reshape(-1)
        if y.shape != (n,) or sample_weight.shape != (n,):
            raise ValueError("y and sample_weight must have n_samples entries")
        if order.size:
            if order.min() < 0 or order.max() >= n:
                raise ValueError("order holds a row index out of range")
            used = y[order]
            if used.min() < 0 or used.max() >= n_classes:
                raise ValueError(f"y must hold codes in [0, {n_classes})")
        ds = make_dataset(X if sp.issparse(X) else np.asarray(X),
                          sample_weight)
        scalars = np.array([self.tau, self.Gb], dtype=np.float64)
        kernel = exact_epoch64 if Wt.dtype == np.float64 else exact_epoch32
        status, loss_sum, weight_sum, bad_row, bad_value = kernel(
            ds, Wt, self.b, self.G, self.tau_last, scalars, y, order,
            self._options(eta, alpha))
        self.tau, self.Gb = float(scalars[0]), float(scalars[1])
        if status != 0:
            raise DivergenceError(
                f"ExactSolver diverged at row {bad_row}: "
                f"{_WHAT.get(status, f'status {status}')} "
                f"(value {bad_value:.6g}). The step size is too large for "
                f"this problem: lower eta (now {eta:g})."
            )
        return float(loss_sum), float(weight_sum)

    def blend(self, other, weight):
        """Move the model to ``(1 - weight) * self + weight * other``.

        ``other`` is a solver of the same shape (another run on the same
        problem). Both are finalized first; the weights and intercepts
        are averaged in place, the rest of the state (accumulators, decay
        clock) stays this solver's. The log-loss is convex in (W, b), so
        the blend's loss is at most the weighted mean of the two models'
        losses, on any rows.
        """
        weight = float(weight)
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight must be in [0, 1], got {weight!r}")
        n_classes = self.b.shape[0]
        if (other.b.shape[0] != n_classes
                or other.Wt.shape[0] != self.Wt.shape[0]):
            raise ValueError("blend needs a solver of the same shape")
        self.finalize()
        other.finalize()
        mine, theirs = self.Wt[:, :n_classes], other.Wt[:, :n_classes]
        dtype = self.Wt.dtype.type
        mine *= dtype(1.0 - weight)
        mine += dtype(weight) * theirs
        self.b *= dtype(1.0 - weight)
        self.b += dtype(weight) * other.b.astype(self.b.dtype, copy=False)

    def _finalize_with(self, eta, alpha):
        if alpha <= 0 or self.Wt.size == 0:
            return
        kernel = (exact_finalize64 if self.Wt.dtype == np.float64
                  else exact_finalize32)
        kernel(self.Wt, self.G, self.tau_last, float(self.tau),
               self._options(eta, alpha))

    def finalize(self):
        """Bring the lazy L2 decay of every feature up to date.

        ``Wt`` is then the exact model. Idempotent: a second call changes
        nothing.
        """
        self._finalize_with(*self._decay_params)

    def end_fit(self):
        """The fit is over: nothing to do, ``Wt`` is already stored
        feature-major, the layout prediction reads fastest."""

    def coef_view(self):
        """The weights as a (n_classes, n_features) view of ``Wt`` (no copy).

        Returns
        -------
        coef : ndarray of shape (n_classes, n_features)
            ``Wt.T``, F-contiguous (after :meth:`grow`, the first
            n_classes columns of ``Wt``, transposed); call
            :meth:`finalize` first when ``alpha > 0``.
        """
        n_classes = self.b.shape[0]
        if self.Wt.shape[1] == n_classes:
            return self.Wt.T
        return self.Wt[:, :n_classes].T

    def grow(self, n_classes, intercept=None):
        """Add classes, up to ``n_classes``: their columns of W zero,
        their intercepts ``intercept`` (the new ones' values; zeros by
        default).

        ``Wt`` keeps spare columns: while it has room only the new
        columns are written; otherwise it is copied once into an array
        with twice the columns (O(D) amortised per added class). Its
        first ``b.shape[0]`` columns are the classes (the kernel reads
        ``Wt``'s row stride).
        """
        n_old = self.b.shape[0]
        n_features, capacity = self.Wt.shape
        if n_classes > capacity:
            capacity = max(n_classes, 2 * capacity, 8)
            Wt = np.empty((n_features, capacity), dtype=self.Wt.dtype)
            Wt[:, :n_old] = self.Wt[:, :n_old]
            Wt[:, n_old:] = 0
            self.Wt = Wt
        else:
            self.Wt[:, n_old:n_classes] = 0
        new_b = 0 if intercept is None else np.asarray(intercept)
        self.b = grow_rows(self.b, n_classes, new_b)
        self._b0 = grow_rows(self._b0, n_classes, new_b)

    # --------------------------------------------------- best-epoch state
    _STATE = ("Wt", "b", "G", "Gb", "tau_last", "tau", "_decay_params")

    def snapshot(self, into=None):
        """Copies of the whole state (not eta, alpha, nor n_threads).

        Parameters
        ----------
        into : dict, default=None
            A snapshot no longer needed, whose arrays are overwritten
            instead of allocating new ones (a fresh array of W's size costs
            its page faults).

        Returns
        -------
        snap : dict
            For :meth:`restore`.
        """
        snap = {}
        for name in self._STATE:
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                old = None if into is None else into.get(name)
                if (
                    isinstance(old, np.ndarray)
                    and old.shape == value.shape
                    and old.dtype == value.dtype
                ):
                    np.copyto(old, value)
                    value = old
                else:
                    value = value.copy()
            snap[name] = value
        return snap

    def restore(self, snap):
        """Set the state from a :meth:`snapshot` (copied into the current
        arrays where they have the snapshot's shape: ``snap`` can be
        restored again)."""
        for name in self._STATE:
            value = snap[name]
            if isinstance(value, np.ndarray):
                current = getattr(self, name, None)
                if (
                    isinstance(current, np.ndarray)
                    and current.shape == value.shape
                    and current.dtype == value.dtype
                    and current.flags.writeable
                ):
                    np.copyto(current, value)
                    continue
                value = value.copy()
            setattr(self, name, value)
