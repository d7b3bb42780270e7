"""Plain NumPy references of the kernels, for the tests.

Each function repeats, slowly and densely, exactly the arithmetic of one
Cython kernel, drawing its random numbers from a copy of the kernel's
generator through the same primitives, so the two can be compared to
rounding error.
"""

import pickle

import numpy as np
import scipy.sparse as sp


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


# ------------------------------------------------ augment and reduce
_AR_MODELS = {"softmax": 0, "probit": 1, "logistic": 2}


def ar_draw_noise(rng, model):
    """The kernel's draw of u ~ q^(rep), from the same uniforms."""
    if model == "probit":
        u1, u2 = rng.uniform(2)
        return np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2 * np.pi * u2)
    u1 = rng.uniform(1)[0]
    if u1 == 0.0:
        u1 = 2.0**-54
    return np.log(u1) - np.log1p(-u1)


def ar_noise(model):
    """(log phi, d log phi, log Phi, d log Phi) of the noise, in NumPy."""
    from scipy.special import expit, log_ndtr

    if model == "probit":
        return (
            lambda e: -0.5 * e * e - 0.5 * np.log(2 * np.pi),
            lambda e: -e,
            log_ndtr,
            lambda z: np.exp(-0.5 * z * z - 0.5 * np.log(2 * np.pi)
                             - log_ndtr(z)),
        )
    return (
        lambda e: -np.logaddexp(0, -e) - np.logaddexp(0, e),
        lambda e: 1 - 2 * expit(e),
        lambda z: -np.logaddexp(0, -z),
        lambda z: expit(-z),
    )


def ar_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    local,
    rng,
    *,
    model,
    batch_size,
    m,
    init_local,
    schedule,
    eta_epoch=0.1,
    eta0=0.1,
    power_t=0.5,
    decay=0.9,
    t=0,
    n_steps=0,
    local_rate=1.0,
    per_row=True,
    alpha=0.0,
    adapt=None,
    fit_intercept=True,
    shuffle=True,
    dense_rows=False,
):
    """One epoch of Ruiz et al.'s Alg. 1 (softmax) or Alg. 2, densely.

    ``dense_rows``: X came as a dense array, whose rows the kernel reads
    whole, so the adaptive schedule updates (s of) every feature of a
    sampled class, zeros included.

    Returns (W, b, local, adapt, objective_sum, weight_sum, t, n_steps).
    """
    from scipy.special import expit, logsumexp

    X = dense(X).astype(np.float64)
    W, b = W.astype(np.float64), b.astype(np.float64)
    local = local.copy()
    adapt = None if adapt is None else adapt.copy()
    n, K, D = X.shape[0], W.shape[0], X.shape[1]
    ratio = (K - 1) / m
    order = rng.permutation(n) if shuffle else np.arange(n)
    obj, wsum = 0.0, 0.0
    if model != "softmax":
        log_pdf, dlog_pdf, log_cdf, dlog_cdf = ar_noise(model)
    for b0 in range(0, n, batch_size):
        rows = order[b0 : b0 + batch_size]
        nb = rows.shape[0]
        n_steps += 1
        a_t = min(1.0, local_rate * (1.0 + n_steps) ** -0.9)
        ks = [rng.sample_classes(K, y[i], m, False) for i in rows]
        coefs = []
        sum_s = 0.0
        for r, i in enumerate(rows):
            t += 1
            s = sw[i]
            if per_row:
                a_t = min(1.0, local_rate * (1.0 + local[i, 2]) ** -0.9)
            local[i, 2] += 1
            psi = W @ X[i] + b
            d = psi[ks[r]] - psi[y[i]]
            if model == "softmax":
                log_eta_t = np.logaddexp(0.0, np.log(ratio) + logsumexp(d))
                if init_local:
                    le = log_eta_t
                else:
                    le = np.logaddexp(
                        np.log1p(-a_t) + local[i, 0], np.log(a_t) + log_eta_t
                    )
                obj += s * (le + np.exp(log_eta_t - le) - 1.0)
                c = ratio * np.exp(d - le)
                local[i, 0] = le
            else:
                mu, gam = local[i, :2]
                sig = np.logaddexp(0.0, gam)
                u = ar_draw_noise(rng, model)
                eps = mu + sig * u
                dl = dlog_pdf(eps) + ratio * dlog_cdf(eps - d).sum()
                logp = log_pdf(eps) + ratio * log_cdf(eps - d).sum()
                obj += s * (log_pdf(u) - np.log(sig) - logp)
                mu = mu + a_t * dl
                gam = gam + a_t * (dl * u + 1.0 / sig) * expit(gam)
                local[i, :2] = mu, gam
                eps = mu + np.logaddexp(0.0, gam) * ar_draw_noise(rng, model)
                c = ratio * dlog_cdf(eps - d)
            coefs.append(np.concatenate([[-c.sum()], c]))
            wsum += s
            sum_s += s
        grad = np.zeros((K, D + 1))
        touched = np.zeros((K, D + 1), dtype=bool)
        for r, i in enumerate(rows):
            if sw[i] == 0:
                continue
            for k, c in zip(np.concatenate([[y[i]], ks[r]]), coefs[r]):
                grad[k, :D] += sw[i] * c * X[i]
                grad[k, D] += sw[i] * c
                touched[k, :D] |= (X[i] != 0) | dense_rows
                touched[k, D] |= fit_intercept
        if schedule != "adaptive":
            eta = eta0 / t**power_t if schedule == "invscaling" else eta_epoch
            W = max(0.0, 1 - eta * alpha * sum_s / nb) * W - eta / nb * grad[
                :, :D
            ]
            if fit_intercept:
                b = b - eta / nb * grad[:, D]
            continue
        rho = (
            eta0 * decay ** np.floor(n_steps / 2000) * n_steps ** (-0.5 + 1e-16)
        )
        W = max(0.0, 1 - rho * alpha * sum_s / nb) * W
        grad *= n / nb
        for k, f in zip(*np.nonzero(touched)):
            idx = k * (D + 1) + f
            g = grad[k, f]
            s_old, last = adapt[idx]
            sv = g * g if last == 0 else (
                0.1 * g * g + 0.9 ** (n_steps - last) * s_old
            )
            adapt[idx] = sv, n_steps
            step = rho * g / (1 + np.sqrt(sv))
            if f == D:
                b[k] -= step
            else:
                W[k, f] -= step
    return W, b, local, adapt, obj, wsum, t, n_steps


def softmax_ar_bound(psi, y, log_eta):
    """Eq. 8 of Ruiz et al. per row: 1 - log eta - eta*/eta."""
    from scipy.special import logsumexp

    d = psi - psi[np.arange(psi.shape[0]), y][:, None]
    log_eta_star = logsumexp(d, axis=1)  # includes e^0 for k = y
    return 1.0 - log_eta - np.exp(log_eta_star - log_eta)
