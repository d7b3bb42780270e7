"""Plain NumPy references of the kernels, for the tests.

Each function repeats, slowly and densely, exactly the arithmetic of one
Cython kernel, drawing its random numbers from a copy of the kernel's
generator through the same primitives, so the two can be compared to
rounding error.
"""

import pickle

import numpy as np
import scipy.sparse as sp
from scipy.special import expit


def clone_rng(rng):
    """An independent generator in the same state."""
    return pickle.loads(pickle.dumps(rng))


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def umax_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    u,
    rng,
    *,
    m,
    delta,
    vanilla,
    raman=False,
    init_u,
    eta_epoch,
    eta0=None,
    power_t=0.5,
    schedule="constant",
    t=0,
    alpha=0.0,
    bound_w=np.inf,
    bound_u=np.inf,
    weight_log_k=np.inf,
    fit_intercept=True,
    shuffle=True,
):
    """One epoch of Alg. 2 of Fagan & Iyengar (2018) on the per-row loss.

    Returns (W, b, u, objective_sum, weight_sum, t), all new arrays.
    """
    X = dense(X).astype(np.float64)
    W, b, u = W.astype(np.float64), b.astype(np.float64), u.astype(np.float64)
    n, K = X.shape[0], W.shape[0]
    ratio = (K - 1) / m
    order = rng.permutation(n) if shuffle else np.arange(n)
    obj, wsum = 0.0, 0.0
    for i in order:
        t += 1
        eta = eta0 / t**power_t if schedule == "invscaling" else eta_epoch
        ks = rng.sample_classes(K, y[i], m, True)
        x, s = X[i], sw[i]
        scores = W @ x + b
        d = scores[ks] - scores[y[i]]
        lse = np.logaddexp.reduce(np.concatenate([[0.0], d]))
        # Raman et al.'s variable u_bar = u + s_y, read at the current W
        ui = u[i] - scores[y[i]] if raman else u[i]
        if init_u or (not vanilla and ui < lse - delta):
            ui = lse
        e = np.exp(d - ui)
        total = e.sum()
        obj += s * (ui + np.exp(-ui) + ratio * total - 1)
        wsum += s
        if s != 0:
            grad_W = np.zeros_like(W)
            grad_b = np.zeros_like(b)
            for j, k in enumerate(ks):
                grad_W[k] += ratio * e[j] * x
                grad_b[k] += ratio * e[j]
            # the true class: eq. 7, or eq. 8's (e^{s_y - u_bar} - 1) x
            g_y = (np.exp(-ui) - 1) if raman else -ratio * total
            grad_W[y[i]] += g_y * x
            grad_b[y[i]] += g_y
            W = max(0.0, 1 - eta * alpha * s) * W - eta * s * grad_W
            if fit_intercept:
                b = b - eta * s * grad_b
            ui = ui - eta * s * (1 - np.exp(-ui) - ratio * total)
        ui = max(ui, 0.0)
        if alpha > 0:
            ui = min(ui, bound_u, weight_log_k / s if s > 0 else np.inf)
            norm = np.linalg.norm(W)
            if norm > bound_w:
                W = W * (bound_w / norm)
        u[i] = ui + scores[y[i]] if raman else ui
    return W, b, u, obj, wsum, t


def softmax_objective(W, b, X, y, alpha, sw=None):
    """Exact weighted mean log-loss plus alpha/2 ||W||^2."""
    S = dense(X) @ W.T + b
    S = S - S.max(axis=1, keepdims=True)
    logp = S - np.log(np.exp(S).sum(axis=1, keepdims=True))
    nll = -logp[np.arange(len(y)), y]
    sw = np.ones(len(y)) if sw is None else sw
    return nll @ sw / sw.sum() + 0.5 * alpha * np.sum(W * W)


# ------------------------------------------------ stochastic bound (SBM)
def bound_beta_reference(r):
    """tanh(r/2) / (2r) of Alg. 1 (Choromanska & Jebara 2013), 1/4 at 0."""
    r = abs(float(r))
    if np.isinf(r):
        return 0.0
    if r == 0.0:
        return 0.25
    return np.tanh(r / 2) / (2 * r)


def partition_bound_reference(log_h, F, theta_tilde):
    """Alg. 1 as printed, with z carried in log space: (log z, g, Sigma)."""
    n, d = F.shape
    log_z, g, sigma = -np.inf, np.zeros(d), np.zeros((d, d))
    for yv in range(n):
        log_alpha = log_h[yv] + F[yv] @ theta_tilde
        r = log_alpha - log_z
        beta = bound_beta_reference(r)
        kappa = expit(r)
        lv = F[yv] - g
        sigma += beta * np.outer(lv, lv)
        g = g + kappa * lv
        log_z = np.logaddexp(log_z, log_alpha)
    return log_z, g, sigma


def sbm_full_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    M,
    mu,
    rng,
    *,
    surrogate,
    row_scale,
    alpha,
    alpha_b,
    eta,
    batch_size=1,
    fit_intercept=True,
    shuffle=True,
):
    """One epoch of Alg. 2 in the full d-dimensional space, literally.

    theta = vec(W, b) class by class; the features of class c are
    f(c) = e_c (x) x~ built explicitly, and M takes one Sherman-Morrison
    step per class of every row on d-vectors. phi = M mu (the invariant of
    Alg. 2's phi += M xi - N mu). Returns (W, b, M, mu, objective_sum,
    weight_sum): new arrays.
    """
    X = dense(X).astype(np.float64)
    n, D = X.shape
    K = W.shape[0]
    Dp = D + int(fit_intercept)
    T = np.zeros((K, Dp))
    T[:, :D] = W
    if fit_intercept:
        T[:, D] = b
    theta = T.ravel().copy()
    M, mu = M.copy(), mu.copy()
    pen = np.ones((K, Dp))
    if fit_intercept:
        pen[:, D] = 0.0
    pen = pen.ravel()
    order = rng.permutation(n) if shuffle else np.arange(n)
    since = 0
    for idx, i in enumerate(order):
        s = sw[i]
        if s == 0:
            continue
        rs = s * row_scale
        xt = np.append(X[i], 1.0) if fit_intercept else X[i]
        F = np.kron(np.eye(K), xt)
        # classes enumerated by increasing score (stable), as the kernel
        F = F[np.argsort(F @ theta, kind="stable")]
        log_z, g, sigma = partition_bound_reference(np.zeros(K), F, theta)
        # the Sherman-Morrison steps, one per enumerated class
        log_zc, gc = -np.inf, np.zeros(K * Dp)
        for c in range(K):
            r = F[c] @ theta - log_zc
            beta = bound_beta_reference(r)
            lv = F[c] - gc
            q = np.sqrt(rs * beta) * lv
            Mq = M @ q
            M = M - np.outer(Mq, Mq) / (1.0 + q @ Mq)
            gc = gc + expit(r) * lv
            log_zc = np.logaddexp(log_zc, F[c] @ theta)
        grad = g - np.kron(np.eye(K)[y[i]], xt)
        if surrogate:
            mu += rs * (grad - sigma @ theta)
        else:
            mu += rs * (grad + alpha * pen * theta)
        since += 1
        if since < batch_size and idx + 1 < n:
            continue
        since = 0
        phi = M @ mu + (theta if surrogate else 0.0)
        new = theta - eta * phi
        if surrogate and fit_intercept:
            ib = np.arange(K) * Dp + D
            mu[ib] -= alpha_b * (new[ib] - theta[ib])
        theta = new
    T = theta.reshape(K, Dp)
    W, b = T[:, :D].copy(), (T[:, D].copy() if fit_intercept else b.copy())
    scores = X @ W.T + (b if fit_intercept else 0.0)
    nll = np.logaddexp.reduce(scores, axis=1) - scores[np.arange(n), y]
    return W, b, M, mu, float(nll @ sw), float(sw.sum())


def sbm_lowrank_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    V,
    sig,
    Dg,
    mu,
    n_used,
    rng,
    *,
    surrogate,
    row_scale,
    alpha,
    alpha_b,
    eta,
    n_directions=1,
    batch_size=1,
    fit_intercept=True,
    shuffle=True,
):
    """One epoch of the low-rank SBM kernel: V' diag(sig) V + diag(Dg).

    Per row: the largest term of the row's bound is the new direction, the
    others go to the diagonal (l l' <= ||l||_1 diag|l|); the direction's
    residual joins the basis, the core is eigendecomposed (numpy.linalg.eigh)
    and the smallest component moves to the diagonal the same way; the step
    solves with the dense matrix. Returns (W, b, V, sig, Dg, mu, n_used,
    objective_sum, weight_sum).
    """
    X = dense(X).astype(np.float64)
    n, D = X.shape
    K, rank = W.shape[0], V.shape[0]
    Dp = D + int(fit_intercept)
    T = np.zeros((K, Dp))
    T[:, :D] = W
    if fit_intercept:
        T[:, D] = b
    theta = T.ravel().copy()
    V, sig, Dg, mu = V.copy(), sig.copy(), Dg.copy(), mu.copy()
    pen = np.ones((K, Dp))
    if fit_intercept:
        pen[:, D] = 0.0
    pen = pen.ravel()
    order = rng.permutation(n) if shuffle else np.arange(n)
    since = 0
    for idx, i in enumerate(order):
        s = sw[i]
        if s == 0:
            continue
        rs = s * row_scale
        xt = np.append(X[i], 1.0) if fit_intercept else X[i]
        scores = theta.reshape(K, Dp) @ xt
        log_z, gam, us, betas = -np.inf, np.zeros(K), [], []
        for c in np.argsort(scores, kind="stable"):
            r = scores[c] - log_z
            u = -gam
            u[c] += 1.0
            us.append(u)
            betas.append(bound_beta_reference(r))
            gam = gam + expit(r) * u
            log_z = np.logaddexp(log_z, scores[c])
        us, betas = np.array(us), np.array(betas)
        tr = betas * (us**2).sum(1)
        chosen = [
            j
            for j in np.argsort(-tr, kind="stable")[:n_directions]
            if tr[j] > 0
        ]
        dsum = np.zeros(K)
        for j in range(K):
            if j not in chosen and betas[j] > 0:
                dsum += betas[j] * np.abs(us[j]).sum() * np.abs(us[j])
        Dg += rs * np.kron(dsum, np.abs(xt).sum() * np.abs(xt))
        for jstar in chosen:
            q = np.sqrt(rs * betas[jstar]) * np.kron(us[jstar], xt)
            Vm = V[:n_used]
            p = Vm @ q
            res = q - Vm.T @ p
            p2 = Vm @ res
            res -= Vm.T @ p2
            p += p2
            rho = np.linalg.norm(res)
            if rho > 1e-10 * np.linalg.norm(q):
                basis = np.vstack([Vm, res / rho])
                cvec = np.append(p, rho)
                core = np.diag(np.append(sig[:n_used], 0.0))
            else:
                basis, cvec, core = Vm, p, np.diag(sig[:n_used])
            core = core + np.outer(cvec, cvec)
            ev, E = np.linalg.eigh(core)
            kept = min(len(ev), rank)
            V[:kept] = E[:, ::-1][:, :kept].T @ basis
            sig[:kept] = np.maximum(ev[::-1][:kept], 0.0)
            if len(ev) > rank:
                wv = np.sqrt(max(ev[0], 0.0)) * (E[:, 0] @ basis)
                Dg += np.abs(wv).sum() * np.abs(wv)
            n_used = kept
        grad = np.kron(gam - np.eye(K)[y[i]], xt)
        if surrogate:
            S = (us.T * betas) @ us
            mu += rs * (grad - np.kron(S @ scores, xt))
        else:
            mu += rs * (grad + alpha * pen * theta)
        since += 1
        if since < batch_size and idx + 1 < n:
            continue
        since = 0
        Vm = V[:n_used]
        sigma_hat = (Vm.T * sig[:n_used]) @ Vm + np.diag(Dg)
        phi = np.linalg.solve(sigma_hat, mu) + (theta if surrogate else 0.0)
        new = theta - eta * phi
        if surrogate and fit_intercept:
            ib = np.arange(K) * Dp + D
            mu[ib] -= alpha_b * (new[ib] - theta[ib])
        theta = new
    T = theta.reshape(K, Dp)
    W, b = T[:, :D].copy(), (T[:, D].copy() if fit_intercept else b.copy())
    scores = X @ W.T + (b if fit_intercept else 0.0)
    nll = np.logaddexp.reduce(scores, axis=1) - scores[np.arange(n), y]
    return W, b, V, sig, Dg, mu, n_used, float(nll @ sw), float(sw.sum())
