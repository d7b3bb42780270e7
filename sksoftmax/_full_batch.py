"""The full-batch solver ('lbfgs'): L-BFGS on the exact softmax objective
along a path of L2 penalties chosen on held-out rows (private).

For problems whose every pass is cheap (few rows x classes x features),
a full-batch quasi-Newton fit reaches the regularised optimum that the
stochastic solvers only approach, and the held-out rows can then choose
the penalty instead of the epoch. The objective of one fit is

    sum_i w_i (logsumexp(s_i) - s_iy) + 1/2 sum_j pen_j ||W[:, j]||^2,

``s_i = W x_i + b``, ``w`` normalised to sum 1, ``pen`` a per-feature
penalty: ``alpha`` plus the path's ``lam x shape``, where the shape is
either uniform (the L2 penalty on ``coef_``: 'raw') or each feature's
variance (the L2 penalty on standardised weights, as StandardScaler in
front of a ridge-penalised LogisticRegression: 'std'). Each path starts
at lam = 1 and divides lam by sqrt(10) until the held-out loss has not
improved for PATH_PATIENCE steps; each fit starts from the previous
two extrapolated (the steps are equal in log lam: the secant predicts
the next solution to first order). The profile of the best held-out
loss wins; its lam is the vertex of the parabola through the best point
and its two neighbours in log lam (at most half a step from the best
point: the held-out curve is smooth, its points noisy), and the model is
fitted once more on every row there, from the best point's weights.
With few rows the held-out rows are folds of a cross-validation (every
row held out once at 10 folds) as far as the cost budget allows
(``n_folds``).

L-BFGS runs in centred, preconditioned coordinates ``u_j = q_j w_j``,
``q_j = sqrt(PRECONDITION_SHARE x var_j + pen_j)``: each coordinate's
curvature is then about one, so that unscaled features (pixels 0..16,
a feature in the thousands) converge as fast as scaled ones. The optimum
is that of the objective above whatever q is.

The user guide explains it (``doc/user_guide/softmax_classifier.rst``,
"Small dense problems: the 'lbfgs' penalty path").
"""

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ._exact import ExactSolver
from ._solver import _Model
from .exceptions import DivergenceError

# the path of penalties: lam from PATH_START down by PATH_RATIO per step,
# stopped after PATH_PATIENCE steps without a better held-out loss, at
# most PATH_MAX_STEPS steps (lam = 1e-13)
PATH_START = 1.0
PATH_RATIO = np.sqrt(10.0)
PATH_PATIENCE = 2
PATH_MAX_STEPS = 26
# SoftmaxClassifier's tol is the epoch solvers' relative tolerance on the
# held-out loss; L-BFGS's gradient tolerance is tol times this: 1e-4 at
# tol's default 1e-3, the tolerance the path above was measured at (and
# LogisticRegression's default)
GTOL_PER_TOL = 0.1
# the share of a feature's variance in its preconditioner (convergence
# speed only: the optimum does not depend on it)
PRECONDITION_SHARE = 0.1
# solver='auto' takes 'lbfgs' while one path, about PATH_PASSES passes
# over the rows (two profiles of warm-started fits),
# costs at most FULL_BATCH_MAX_MADDS multiply-adds (n x K x (D + 1) a
# pass); the path runs on more folds of a cross-validation while all of
# them cost at most CV_MAX_MADDS, up to ceil(1 / validation_fraction)
PATH_PASSES = 1000
FULL_BATCH_MAX_MADDS = 2e10
CV_MAX_MADDS = 2e9
# and only for dense data: at least this share of X's entries nonzero
# (whatever X's format). On sparse rows the stochastic exact solver, whose
# per-feature steps and early stopping regularise each feature by its own
# data, ended 4 to 19% below the L2 path (user guide)
MIN_DENSITY = 0.25
PROFILES = ("raw", "std")
# a column's variance at most this share of its second moment is the
# rounding of sq - mean^2 (float64: about 1e-16), taken as zero
VAR_ROUNDING = 1e-10


def pass_madds(n_rows, n_classes, X):
    """Multiply-adds of one pass of the objective over ``n_rows`` rows,
    counted as for dense rows, n x K x (D + 1), whatever X's format (the
    same rows dense or sparse get the same folds, hence the same model)."""
    return float(n_rows) * n_classes * (X.shape[1] + 1.0)


def density(X):
    """Share of X's entries that are nonzero (stored or not)."""
    size = float(X.shape[0]) * X.shape[1]
    if size == 0:
        return 0.0
    if sp.issparse(X):
        return X.count_nonzero() / size
    return np.count_nonzero(X) / size


def n_folds(n_rows, n_classes, X, validation_fraction):
    """Folds of the path's cross-validation: 0 when one path of
    PATH_PASSES passes costs more than FULL_BATCH_MAX_MADDS (no
    'lbfgs'), else as many as CV_MAX_MADDS allows, at least one and at
    most ceil(1 / validation_fraction) (every row held out once)."""
    per_fold = PATH_PASSES * pass_madds(n_rows, n_classes, X)
    if per_fold > FULL_BATCH_MAX_MADDS:
        return 0
    most = int(np.ceil(1.0 / validation_fraction - 1e-9))
    return int(max(1, min(most, CV_MAX_MADDS // max(per_fold, 1.0))))


def _as_float64(X):
    """X in float64 (a float32 feature's square can overflow float32)."""
    if X.dtype == np.float64:
        return X
    return X.astype(np.float64)


def _moments(X, w, center):
    """Weighted column means (zeros without centring) and variances
    (second moments without centring)."""
    X = _as_float64(X)
    if sp.issparse(X):
        mean = np.asarray(X.T @ w).ravel()
        sq = np.asarray(X.multiply(X).T @ w).ravel()
    else:
        mean = X.T @ w
        sq = (X * X).T @ w
    if not center:
        return np.zeros_like(mean), sq
    var = sq - mean * mean
    # a constant column's variance is zero, not the rounding of sq -
    # mean^2 (about 1e-16 sq, of either sign, depending on the order of
    # the sums: dense and sparse rows differed, and the 'std' profile
    # left a column of tiny positive variance unpenalised)
    var[var <= VAR_ROUNDING * sq] = 0.0
    return mean, var


class _Problem:
    """The objective of one fit over rows (X, y, w) in the coordinates of
    a preconditioner (mean m, scales q): the loss, its gradient in u."""

    def __init__(self, X, y, w, n_classes, pen, m, q, fit_intercept):
        self.sparse = sp.issparse(X)
        if self.sparse:
            # centred implicitly (a dense X - m would lose the sparsity):
            # (x - m) / q . u = x / q . u - (m / q) . u
            self.Z = sp.csr_matrix(X @ sp.diags(1.0 / q), dtype=np.float64)
            self.ZT = self.Z.T.tocsr()
            self.mz = m / q
        else:
            self.Z = (np.asarray(X, dtype=np.float64) - m) / q
            # (D, n): the scores are computed class-major, (K, n), so
            # that the per-row reductions run along the long axis
            self.ZT = np.ascontiguousarray(self.Z.T)
        self.y, self.w = y, w
        # (k, i) -> k n + i in the class-major scores (K, n), raveled
        self.flat = y * y.shape[0] + np.arange(y.shape[0])
        self.K, self.D = n_classes, X.shape[1]
        self.pen = pen / (q * q)
        self.m, self.q = m, q
        self.fit_intercept = fit_intercept

    def split(self, u):
        KD = self.K * self.D
        U = u[:KD].reshape(self.K, self.D)
        b = u[KD:] if self.fit_intercept else np.zeros(self.K)
        return U, b

    def __call__(self, u):
        U, b = self.split(u)
        if self.sparse:
            S = np.ascontiguousarray((self.Z @ U.T).T)
            S += (b - U @ self.mz)[:, None]
        else:
            S = U @ self.ZT
            S += b[:, None]
        top = S.max(axis=0)
        S -= top
        np.exp(S, out=S)
        total = S.sum(axis=0)
        # S holds exp(s - top), class-major; a row's probabilities are
        # its column over ``total``
        flat = S.reshape(-1)
        p_y = flat.take(self.flat) / total
        loss = float(-np.log(np.maximum(p_y, 1e-300)) @ self.w)
        U_pen = U * self.pen
        loss += 0.5 * float(np.vdot(U_pen, U))
        S *= self.w / total
        flat[self.flat] -= self.w
        KD = self.K * self.D
        grad = np.empty(KD + (self.K if self.fit_intercept else 0))
        grad_U = grad[:KD].reshape(self.K, self.D)
        if self.sparse:
            grad_U[...] = np.asarray(self.ZT @ S.T).T
            grad_U -= np.outer(S.sum(axis=1), self.mz)
        else:
            np.matmul(S, self.Z, out=grad_U)
        grad_U += U_pen
        if self.fit_intercept:
            S.sum(axis=1, out=grad[KD:])
        return loss, grad

    def to_u(self, W, b):
        u = (W * self.q).ravel()
        if not self.fit_intercept:
            return u
        return np.concatenate([u, b + W @ self.m])

    def from_u(self, u):
        U, b = self.split(u)
        W = U / self.q
        return W, (b - W @ self.m if self.fit_intercept else b)


def lbfgs_fit(X, y, w, n_classes, pen, W, b, *, fit_intercept, tol,
              max_iter):
    """Minimise the objective of the module's docstring from (W, b).

    Parameters
    ----------
    X : ndarray or CSR of shape (n, D)
    y : ndarray of shape (n,)
        Encoded labels 0..n_classes-1.
    w : ndarray of shape (n,)
        Row weights summing to one.
    pen : ndarray of shape (D,)
        Per-feature L2 penalty.
    W, b : ndarray of shape (K, D) and (K,)
        Start (float64; not modified).
    fit_intercept : bool
    tol : float
        L-BFGS's gradient tolerance (in the preconditioned coordinates).
    max_iter : int

    Returns
    -------
    W, b : ndarray
        The minimiser (float64).
    n_iter : int
    converged : bool
    """
    m, var = _moments(X, w, fit_intercept)
    q = np.sqrt(PRECONDITION_SHARE * var + pen)
    q[~(q > 0)] = 1.0
    problem = _Problem(X, y, w, n_classes, pen, m, q, fit_intercept)
    result = minimize(
        problem,
        problem.to_u(W, b),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": int(max_iter), "gtol": float(tol)},
    )
    W, b = problem.from_u(result.x)
    return W, b, int(result.nit), bool(result.success)


def _extrapolate(last, before):
    """The start of a path's next fit: the last solution plus the last
    step, (W, b) each (``before`` None: the last solution)."""
    if before is None:
        return last
    return tuple(2.0 * a - c for a, c in zip(last, before))


def _vertex(trail, lam):
    """The lam of least held-out loss on the parabola (in log lam) through
    ``lam``, the best point of ``trail`` (its (lam, loss) pairs), and its
    two neighbours, within half a step of ``lam``; ``lam`` itself at an
    end of the trail or where the three points do not curve upwards."""
    lams = [t[0] for t in trail]
    j = lams.index(lam)
    if j == 0 or j == len(trail) - 1:
        return lam
    f0, f1, f2 = (trail[i][1] for i in (j - 1, j, j + 1))
    curve = f0 - 2.0 * f1 + f2
    if not (np.isfinite(curve) and curve > 0):
        return lam
    h = np.log(lams[j] / lams[j - 1])
    offset = float(np.clip(0.5 * h * (f0 - f2) / curve,
                           -0.5 * abs(h), 0.5 * abs(h)))
    return float(lam * np.exp(offset))


class FullBatchSolver(ExactSolver):
    """The 'lbfgs' solver: the exact solver's state (``Wt``, ``b``: its
    snapshot, growth and passes serve ``partial_fit`` after the fit),
    filled by L-BFGS along a held-out path of penalties (:meth:`fit`).

    Parameters
    ----------
    eta, alpha, fit_intercept, n_threads
        As :class:`~sksoftmax._exact.ExactSolver`'s (eta: the step of
        exact passes after the fit); ``alpha`` is added to every
        penalty of the path.
    tol : float
        L-BFGS's gradient tolerance.
    max_iter : int
        L-BFGS iterations of each fit at most.
    """

    def __init__(self, *, eta, alpha=0.0, fit_intercept=True, n_threads=1,
                 tol=1e-4, max_iter=100):
        super().__init__(eta=eta, alpha=alpha, fit_intercept=fit_intercept,
                         n_threads=n_threads)
        self.tol = tol
        self.max_iter = max_iter

    def _fit(self, X, y, w, pen, W, b):
        n_classes = self.b.shape[0]
        w = w / w.sum()
        return lbfgs_fit(
            X, y, w, n_classes, pen, W, b,
            fit_intercept=self.fit_intercept,
            tol=self.tol, max_iter=self.max_iter,
        )

    def _start(self):
        W = np.zeros((self.b.shape[0], self.Wt.shape[0]))
        return W, np.array(self._b0, dtype=np.float64)

    def _store(self, W, b):
        self.Wt[...] = W.T
        self.b[...] = b

    def fit(self, X, y, sample_weight, penalty):
        """Fit at the per-feature ``penalty`` from the current model (no
        path: ``early_stopping=False``, or a warm start).

        Returns
        -------
        n_iter : int
        converged : bool
        """
        W = np.asarray(self.Wt.T, dtype=np.float64)
        b = np.asarray(self.b, dtype=np.float64)
        W, b, n_iter, ok = self._fit(X, y, sample_weight, penalty, W, b)
        self._store(W, b)
        return n_iter, ok

    def fit_path(self, X, y, sample_weight, folds, worse, verbose=0):
        """The path of penalties for each profile, scored on the
        held-out rows of ``folds`` (a list of (held-out, training) index
        arrays); the model fitted on every row at the best.

        The 'raw' profile (the L2 penalty on ``coef_``) is kept unless
        its best held-out per-row losses are ``worse(raw, std, p)`` than
        the 'std' profile's (beyond the noise of the held-out rows): on
        a few hundred held-out rows the two can swap by chance.

        Returns
        -------
        record : dict
            ``profile``, ``lam`` (the vertex, ``_vertex``), ``penalty``
            (per feature), ``n_iter`` (of the final fit), ``converged``,
            ``path`` (per profile, the (lam, held-out loss) pairs).
        """
        p = np.concatenate([sample_weight[va] for va, _ in folds])
        if not p.sum() > 0:
            p = np.ones_like(p)
        p = p / p.sum()
        shapes = {}
        _, var = _moments(
            X, sample_weight / sample_weight.sum(), self.fit_intercept
        )
        shapes["raw"] = np.full(X.shape[1], max(var.mean(), 1e-12))
        std = var.copy()
        std[~(std > 0)] = 1.0
        shapes["std"] = std
        best = {}
        record = {"path": {}}
        parts = [(X[tr], y[tr], sample_weight[tr], X[va], y[va],
                  sample_weight[va]) for va, tr in folds]
        for profile in PROFILES:
            starts = [self._start() for _ in folds]
            before = [None for _ in folds]
            lam, bad, trail = PATH_START, 0, []
            best_here = np.inf
            for step in range(PATH_MAX_STEPS):
                pen = float(self.alpha) + lam * shapes[profile]
                losses = []
                for i, (Xt, yt, wt, Xv, yv, wv) in enumerate(parts):
                    W, b, _, _ = self._fit(
                        Xt, yt, wt, pen, *_extrapolate(starts[i], before[i]))
                    # (the first fit's start is no solution of the path)
                    before[i] = starts[i] if step else None
                    starts[i] = (W, b)
                    # the package's exact evaluation, per row
                    losses.append(
                        _Model(W, b)._evaluate(Xv, "nll", y_enc=yv))
                losses = np.concatenate(losses)
                score = float(losses @ p)
                if not np.isfinite(score):
                    score = np.inf
                trail.append((lam, score))
                if score < best_here:
                    best[profile] = (losses, lam, starts[0])
                    best_here, bad = score, 0
                else:
                    bad += 1
                    if bad >= PATH_PATIENCE:
                        break
                lam /= PATH_RATIO
            record["path"][profile] = trail
            if verbose:
                print(
                    f"lbfgs: penalty path ({profile}), held-out log-loss "
                    + ", ".join(f"{lam:.3g}: {s:.4g}" for lam, s in trail)
                )
        if not best:
            raise DivergenceError(
                "the penalty path gave no finite held-out log-loss")
        profile = "raw" if "raw" in best else "std"
        if "std" in best and profile == "raw" and worse(
            best["raw"][0], best["std"][0], p
        ):
            profile = "std"
        _, lam, (W, b) = best[profile]
        lam = _vertex(record["path"][profile], lam)
        pen = float(self.alpha) + lam * shapes[profile]
        W, b, n_iter, ok = self._fit(X, y, sample_weight, pen, W, b)
        self._store(W, b)
        record.update(profile=profile, lam=lam, penalty=pen, n_iter=n_iter,
                      converged=ok)
        return record
