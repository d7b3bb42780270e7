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

from sksoftmax._shared._random import AliasTable


def clone_rng(rng):
    """An independent generator in the same state."""
    return pickle.loads(pickle.dumps(rng))


def dense(X):
    return X.toarray() if sp.issparse(X) else np.asarray(X)


def random_problem(fmt, dtype, n=40, d=12, K=7, density=0.4, seed=0):
    """A small random CSR (or dense) problem with one empty row and one
    zero-weight row: (X, y, sample_weight)."""
    rng = np.random.default_rng(seed)
    X = sp.random(
        n,
        d,
        density=density,
        format="csr",
        random_state=seed,
        data_rvs=rng.standard_normal,
    ).astype(dtype)
    # one empty row: kernels must cope with nnz == 0
    X = sp.vstack([X, sp.csr_matrix((1, d), dtype=dtype)], format="csr")
    y = rng.integers(0, K, X.shape[0]).astype(np.intp)
    sw = rng.uniform(0.5, 2.0, X.shape[0])
    sw[3] = 0.0
    if fmt == "dense":
        X = np.ascontiguousarray(X.toarray())
    return X, y, sw


def _visiting_order(rng, n, shuffle, order):
    """The rows of an epoch in visiting order, drawn as the kernels draw.

    ``order=None``: a fresh permutation of range(n) (or range(n)). An
    array: the estimator's order, kept across the epochs of one ``fit``
    and shuffled in place by the kernel, which this repeats: Fisher-Yates
    moves positions whatever they hold, so shuffling ``order`` in place
    gives ``order[rng.permutation(n)]`` for the same draws.
    """
    if order is None:
        return rng.permutation(n) if shuffle else np.arange(n)
    if shuffle:
        order[:] = order[rng.permutation(n)]
    return order.copy()


def _record(iterates, W, b):
    """Append a copy of the iterate (W, b) to ``iterates`` unless None:
    one entry per row, after the row's last change to W and b."""
    if iterates is not None:
        iterates.append((W.copy(), b.copy()))


# eps of learning_rate='adagrad' (sksoftmax/_adagrad.pxd.tp)
ADAGRAD_EPS = 1e-8


def new_adagrad(n_features):
    """The accumulators of learning_rate='adagrad': {'G': (D,), 'Gb': (1,)},
    updated in place by the references."""
    return {"G": np.zeros(n_features), "Gb": np.zeros(1)}


def _adagrad_decay(adagrad, W, eta, alpha, s):
    """Row weight s's L2 decay of every column under adagrad, densely:
    W[:, j] *= exp(-eta alpha s / sqrt(eps + G_j)) where G_j > 0 (before
    the row's accumulation)."""
    if alpha <= 0 or s == 0:
        return W
    G = adagrad["G"]
    rate = np.where(G > 0, eta * alpha * s / np.sqrt(ADAGRAD_EPS + G), 0.0)
    return W * np.exp(-rate)[None, :]


def _adagrad_accumulate(adagrad, x, c2, fit_intercept):
    """G += x^2 c2 (G_b += c2); returns (p, p_b), p = 1 / sqrt(eps + G)."""
    adagrad["G"] += x * x * c2
    if fit_intercept:
        adagrad["Gb"] += c2
    return (
        1.0 / np.sqrt(ADAGRAD_EPS + adagrad["G"]),
        1.0 / np.sqrt(ADAGRAD_EPS + adagrad["Gb"][0]),
    )


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
    sampler=None,
    order=None,
    iterates=None,
    adagrad=None,
):
    """One epoch of Alg. 2 of Fagan & Iyengar (2018) on the per-row loss.

    ``adagrad``: None, or the accumulators of ``new_adagrad`` for
    learning_rate='adagrad' (updated in place): every column decays by
    exp(-eta alpha s p_j) first (p_j = 1 / sqrt(eps + G_j), columns with
    G_j > 0), then G_j += x_j^2 s^2 sum_k coef_k^2 (G_b likewise) and W's
    column j steps by eta p_j times the gradient, the intercepts by
    eta p_b; ||W|| <= bound_w is projected once, after the epoch.

    ``sampler``: None (uniform over the classes other than y_i, weight
    (K-1)/m) or an AliasTable of q over all classes (weight 1/(m q_k),
    none for a draw of y_i). ``order``, ``iterates``: see
    ``_visiting_order`` and ``_record``. Returns (W, b, u, objective_sum,
    weight_sum, t), all new arrays.
    """
    X = dense(X).astype(np.float64)
    W, b, u = W.astype(np.float64), b.astype(np.float64), u.astype(np.float64)
    n, K = X.shape[0], W.shape[0]
    ratio = (K - 1) / m
    order = _visiting_order(rng, n, shuffle, order)
    obj, wsum = 0.0, 0.0
    for i in order:
        t += 1
        eta = eta0 / t**power_t if schedule == "invscaling" else eta_epoch
        if sampler is None:
            ks = rng.sample_classes(K, y[i], m, True)
            weight = np.full(m, ratio)
        else:
            ks = rng.sample_alias(sampler, m)
            weight = np.where(ks == y[i], 0.0, 1 / (m * sampler.q[ks]))
        x, s = X[i], sw[i]
        if adagrad is not None:
            W = _adagrad_decay(adagrad, W, eta, alpha, s)
        scores = W @ x + b
        d = scores[ks] - scores[y[i]]
        # the U-max rule over the sampled classes other than y_i (with q:
        # each distinct class once)
        d_rule = d[ks != y[i]]
        if sampler is not None:
            _, first = np.unique(ks[ks != y[i]], return_index=True)
            d_rule = d_rule[first]
        lse = np.logaddexp.reduce(np.concatenate([[0.0], d_rule]))
        # Raman et al.'s variable u_bar = u + s_y, read at the current W
        ui = u[i] - scores[y[i]] if raman else u[i]
        if init_u or (not vanilla and ui < lse - delta):
            ui = lse
        # weighted terms of the estimate of sum_{k != y} e^{d_k - u}
        e = weight * np.exp(d - ui)
        total = e.sum()
        obj += s * (ui + np.exp(-ui) + total - 1)
        wsum += s
        if s != 0:
            grad_W = np.zeros_like(W)
            grad_b = np.zeros_like(b)
            for j, k in enumerate(ks):
                grad_W[k] += e[j] * x
                grad_b[k] += e[j]
            # the true class: eq. 7, or eq. 8's (e^{s_y - u_bar} - 1) x
            g_y = (np.exp(-ui) - 1) if raman else -total
            grad_W[y[i]] += g_y * x
            grad_b[y[i]] += g_y
            if adagrad is not None:
                # grad_b holds each class's coefficient c_k / s
                p, p_b = _adagrad_accumulate(
                    adagrad, x, s * s * (grad_b @ grad_b), fit_intercept
                )
                W = W - eta * s * grad_b[:, None] * (p * x)[None, :]
                if fit_intercept:
                    b = b - eta * s * p_b * grad_b
            else:
                W = max(0.0, 1 - eta * alpha * s) * W - eta * s * grad_W
                if fit_intercept:
                    b = b - eta * s * grad_b
            ui = ui - eta * s * (1 - np.exp(-ui) - total)
        ui = max(ui, 0.0)
        if alpha > 0:
            ui = min(ui, bound_u, weight_log_k / s if s > 0 else np.inf)
            norm = np.linalg.norm(W)
            if norm > bound_w and adagrad is None:
                W = W * (bound_w / norm)
        u[i] = ui + scores[y[i]] if raman else ui
        _record(iterates, W, b)
    if adagrad is not None and alpha > 0:
        norm = np.linalg.norm(W)
        if norm > bound_w:
            W = W * (bound_w / norm)
    return W, b, u, obj, wsum, t


def implicit_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    u,
    rng,
    *,
    init_u,
    eta_epoch,
    eta0=None,
    power_t=0.5,
    schedule="constant",
    t=0,
    alpha=0.0,
    fit_intercept=True,
    shuffle=True,
    order=None,
    iterates=None,
    sampler=None,
    adagrad=None,
    raise_u=False,
):
    """One epoch of Implicit SGD, Alg. 1 (m = 1, uniform sampler).

    Written from App. E.1 with SciPy: the ridge's proximal map shrinks W by
    1/(1 + e alpha), e = eta s_i; moving z = s_k - s_y costs (z - z_bar)^2
    / C, gamma = 1/C; u' is the root of
    g(u) = e - e e^{-u} + u - u_old - gamma a(u),
    a(u) = omega(log(e (K-1) / gamma) + z_bar - u) (scipy's wrightomega),
    found by brentq on a bracket widened until g changes sign; then
    w_k -= gamma a x / (1 + e alpha), w_y += the same, b_k -= gamma a,
    b_y += gamma a. Rows of weight zero move nothing (their u is set by the
    U-max rule on a first visit). ``order``, ``iterates``: see
    ``_visiting_order`` and ``_record``. Returns (W, b, u, objective_sum,
    weight_sum, t), all new arrays.

    ``sampler``: an AliasTable of q over all classes (m = 1): the weight
    K - 1 becomes 1 / q_k, and a draw of y_i moves u alone,
    u' = u - e + omega(log e + e - u). ``adagrad``: the accumulators of
    ``new_adagrad`` (learning_rate='adagrad'): the columns decay by
    exp(-eta alpha s p_j) (no 1 / (1 + e alpha) shrinkage), G takes the
    gradient at the current point, c = s w e^{z_bar - u} for k and -c for
    y_i (G_j += 2 c^2 x_j^2), and the implicit step is taken in the metric
    diag(eta p_j)^-1: C = 2 sum_j p_j x_j^2 + 2 p_b, w_k -= gamma a p * x,
    b_k -= gamma a p_b (y_i: +). ``raise_u``: on a later visit u_old is
    max(u_i, log(1 + e^{z_bar})) (max(u_i, 0) for a hit), taken after the
    ridge's shrinkage and before G's update.
    """
    from scipy.optimize import brentq
    from scipy.special import wrightomega

    X = dense(X).astype(np.float64)
    W, b, u = W.astype(np.float64), b.astype(np.float64), u.astype(np.float64)
    n, K = X.shape[0], W.shape[0]
    order = _visiting_order(rng, n, shuffle, order)
    obj, wsum = 0.0, 0.0
    for i in order:
        t += 1
        eta = eta0 / t**power_t if schedule == "invscaling" else eta_epoch
        if sampler is None:
            k = rng.sample_classes(K, y[i], 1, True)[0]
            log_w = np.log(K - 1)
        else:
            k = rng.sample_alias(sampler, 1)[0]
            log_w = -np.log(sampler.q[k])
        x, s, yi = X[i], sw[i], y[i]
        e = eta * s
        hit = k == yi
        if e == 0.0:
            if init_u:
                scores = W @ x + b
                u[i] = (
                    0.0 if hit else np.logaddexp(0.0, scores[k] - scores[yi])
                )
            _record(iterates, W, b)
            continue
        if adagrad is not None:
            shrink = 1.0
            W = _adagrad_decay(adagrad, W, eta, alpha, s)
        else:
            shrink = 1.0 / (1.0 + e * alpha)
            W = W * shrink
        scores = W @ x + b
        z_bar = scores[k] - scores[yi]
        rule = 0.0 if hit else np.logaddexp(0.0, z_bar)
        if init_u:
            u_old = rule
        elif raise_u:
            u_old = max(u[i], rule)
        else:
            u_old = u[i]
        if hit:
            ui = u_old - e + wrightomega(np.log(e) + e - u_old).real
            u[i] = ui
            obj += s * (ui + np.exp(-ui) - 1.0)
            wsum += s
            _record(iterates, W, b)
            continue
        if adagrad is not None:
            coef = s * np.exp(min(log_w + z_bar - u_old, 300.0))
            p, p_b = _adagrad_accumulate(
                adagrad, x, 2.0 * coef * coef, fit_intercept
            )
            x_curv, b_curv, step_x = p @ (x * x), p_b, p * x
        else:
            x_curv, b_curv, step_x = (x @ x) * shrink, 1.0, x * shrink
        gamma = 1.0 / (2.0 * x_curv + (2.0 * b_curv if fit_intercept else 0))
        log_c = np.log(e) + log_w - np.log(gamma)

        def g(v):
            a = wrightomega(log_c + z_bar - v).real
            return e - e * np.exp(-v) + v - u_old - gamma * a

        lo, hi, width = u_old - 1.0, u_old + 1.0, 1.0
        while g(lo) > 0:
            lo -= width
            width *= 2
        while g(hi) < 0:
            hi += width
            width *= 2
        ui = brentq(g, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
        c = gamma * wrightomega(log_c + z_bar - ui).real
        W[k] -= c * step_x
        W[yi] += c * step_x
        if fit_intercept:
            b[k] -= c * b_curv
            b[yi] += c * b_curv
        u[i] = ui
        obj += s * (ui + np.exp(-ui) + c / e - 1.0)
        wsum += s
        _record(iterates, W, b)
    return W, b, u, obj, wsum, t


def softmax_objective(W, b, X, y, alpha, sw=None):
    """Exact weighted mean log-loss plus alpha/2 ||W||^2."""
    S = dense(X) @ W.T + b
    S = S - S.max(axis=1, keepdims=True)
    logp = S - np.log(np.exp(S).sum(axis=1, keepdims=True))
    nll = -logp[np.arange(len(y)), y]
    sw = np.ones(len(y)) if sw is None else sw
    return nll @ sw / sw.sum() + 0.5 * alpha * np.sum(W * W)


def sampled_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    rng,
    *,
    loss,
    batch_size,
    m,
    eta_epoch,
    eta0=None,
    power_t=0.5,
    schedule="constant",
    t=0,
    alpha=0.0,
    fit_intercept=True,
    shuffle=True,
    sampler=None,
    order=None,
    iterates=None,
):
    """One epoch of minibatch SGD on the OVE / NCE / importance loss.

    Each loss is written out as its formula and differentiated by hand in
    the plainest way (full score vectors, masks); returns
    (W, b, objective_sum, weight_sum, t), all new arrays. ``sampler``:
    None (m distinct classes, expected counts Q_k = m/K) or an AliasTable
    of q (m draws with replacement, Q_k = m q_k). ``order``: see
    ``_visiting_order``; ``iterates``: the iterate after a minibatch's step
    is recorded once for each of its rows (``_record``).
    """
    X = dense(X).astype(np.float64)
    W, b = W.astype(np.float64), b.astype(np.float64)
    n, K = X.shape[0], W.shape[0]
    order = _visiting_order(rng, n, shuffle, order)
    obj, wsum = 0.0, 0.0
    log_q = np.log(m / K)
    for start in range(0, n, batch_size):
        rows = order[start : start + batch_size]
        eta = (
            eta0 / (t + 1) ** power_t
            if schedule == "invscaling"
            else eta_epoch
        )
        t += len(rows)
        if sampler is None:
            S = rng.sample_classes(K + 1, K, m, False)
            log_Q = np.full(K, log_q)
        else:
            S = rng.sample_alias(sampler, m)
            log_Q = np.log(m * sampler.q)
        grad_W, grad_b = np.zeros_like(W), np.zeros_like(b)
        for i in rows:
            x, s, yi = X[i], sw[i], y[i]
            scores = W @ x + b
            ks = S[S != yi]
            g = np.zeros(K)
            # a class drawn twice has two terms: accumulate, not assign
            if loss == "ove":
                z = scores[ks] - scores[yi]
                value = (np.exp(-log_Q[ks]) * np.logaddexp(0, z)).sum()
                np.add.at(g, ks, np.exp(-log_Q[ks]) / (1 + np.exp(-z)))
                g[yi] = -g.sum()
            elif loss == "nce":
                zy = scores[yi] - log_Q[yi]
                zk = scores[ks] - log_Q[ks]
                value = np.logaddexp(0, -zy) + np.logaddexp(0, zk).sum()
                g[yi] = -1 / (1 + np.exp(zy))
                np.add.at(g, ks, 1 / (1 + np.exp(-zk)))
            else:
                sub = np.concatenate([[scores[yi]], scores[ks]])
                sub = sub - log_Q[np.concatenate([[yi], ks])]
                p = np.exp(sub - np.logaddexp.reduce(sub))
                value = -np.log(p[0])
                g[yi] = p[0] - 1
                np.add.at(g, ks, p[1:])
            obj += s * value
            wsum += s
            grad_W += s * np.outer(g, x)
            grad_b += s * g
        nb = len(rows)
        W = max(0.0, 1 - eta * alpha * sw[rows].sum() / nb) * W
        W = W - eta * grad_W / nb
        if fit_intercept:
            b = b - eta * grad_b / nb
        for _ in rows:
            _record(iterates, W, b)
    return W, b, obj, wsum, t


_SCENT_MODES = {"scent": 0, "sox": 1, "sgd": 2, "bsgd": 3}


def scent_epoch_reference(
    X,
    y,
    sw,
    W,
    b,
    nu,
    V,
    Vb,
    rng,
    *,
    batch_size,
    mode,
    uniform,
    alpha_nu,
    beta,
    eta_epoch,
    eta0=None,
    power_t=0.5,
    schedule="constant",
    t=0,
    alpha=0.0,
    fit_intercept=True,
    shuffle=True,
    warmup=0,
    log_inv_q=None,
):
    """One epoch of Algorithm 26 (SCENT text) with dense NumPy arithmetic.

    ``log_inv_q`` (-log q_k), with in-batch negatives: each negative j
    weighted by (1 - q_y) / (|N_i| q_j), the importance weight of a draw
    from the label frequencies q restricted to the classes other than y_i,
    so that the sum over the negatives estimates sum_{j != y_i} e^{R_ij};
    g_i = (1 + that) / K as with uniform negatives.

    Written from the algorithm, not from the kernel: the full score matrix
    of each minibatch, the negatives as explicit lists of classes, the nu
    update in the text's own log-sum-exp form (shift by R_max), the
    gradient of the minibatch loss and momentum on W and b as dense
    matrices. Returns (W, b, nu, V, Vb, objective_sum, weight_sum, t).
    """
    X = dense(X).astype(np.float64)
    W, b = W.astype(np.float64), b.astype(np.float64)
    nu, V, Vb = nu.copy(), V.astype(np.float64), Vb.astype(np.float64)
    n, K = X.shape[0], W.shape[0]
    weighted = log_inv_q is not None and not uniform
    order = rng.permutation(n) if shuffle else np.arange(n)
    obj, wsum = 0.0, 0.0
    for start in range(0, n, batch_size):
        rows = order[start : start + batch_size]
        nb = len(rows)
        # a zero-weight row is no negative and moves no class
        draws = rng.randint(K, nb) if uniform else y[rows][sw[rows] > 0]
        S = X[rows] @ W.T + b  # (nb, K) scores
        GW = np.zeros_like(W)
        Gb = np.zeros_like(b)
        for r, i in enumerate(rows):
            neg = [k for k in draws if k != y[i]]
            if not neg:
                continue
            R = S[r, neg] - S[r, y[i]]
            rmax = R.max()
            mean_shifted = np.exp(R - rmax).mean()
            if weighted:
                q = np.exp(-log_inv_q)
                # per-draw weights of the estimate of sum_{j != y} e^{R_j}
                cw = (1 - q[y[i]]) / (len(neg) * q[neg])
                rest = (cw * np.exp(R)).sum()
            if mode == "bsgd" and weighted:
                loss = np.log1p(rest)
                p = cw * np.exp(R - loss)
            elif mode == "bsgd":
                c = K - 1 if uniform else len(neg)
                loss = np.logaddexp(
                    0.0, np.log(c) + rmax + np.log(mean_shifted)
                )
                p = c / len(neg) * np.exp(R - loss)
            else:
                if weighted:  # g = (1 + rest) / K
                    log_g = np.log1p(rest) - np.log(K)
                    c1 = cw / K
                elif uniform:  # g = (1 + (K-1) mean e^R) / K
                    log_g = np.logaddexp(
                        -np.log(K),
                        np.log((K - 1) / K) + rmax + np.log(mean_shifted),
                    )
                    c1 = (K - 1) / K / len(neg)
                else:
                    log_g = rmax + np.log(mean_shifted)
                    c1 = 1.0 / len(neg)
                old = nu[i]
                if np.isnan(old):
                    new = log_g
                elif mode == "scent":
                    # the text: log(e^{-R_max} + a mean e^{R - R_max}) + R_max
                    # and log(1 + a e^nu) = nu + log(e^{-nu} + a)
                    a = alpha_nu
                    if uniform or weighted:
                        first = np.log(np.exp(-log_g) + a) + log_g
                    else:
                        first = np.log(np.exp(-rmax) + a * mean_shifted) + rmax
                    second = (
                        old + np.log(np.exp(-old) + a)
                        if old > 0
                        else np.log1p(a * np.exp(old))
                    )
                    new = old + first - second
                elif mode == "sox":
                    a = alpha_nu * np.exp(-old)
                    new = (
                        old
                        + np.logaddexp(0, np.log(a) + log_g)
                        - np.log1p(alpha_nu)
                    )
                else:
                    new = old - alpha_nu * (1 - np.exp(log_g - old))
                nu[i] = new
                loss = (
                    np.exp(log_g - new)
                    + new
                    - 1
                    + (np.log(K) if uniform or weighted else 0)
                )
                p = c1 * np.exp(R - new)
            obj += sw[i] * loss
            wsum += sw[i]
            g = sw[i] / nb
            for k, pk in zip(neg, p):
                GW[k] += g * pk * X[i]
                Gb[k] += g * pk
            GW[y[i]] -= g * p.sum() * X[i]
            Gb[y[i]] -= g * p.sum()
        t += nb
        eta = eta0 / t**power_t if schedule == "invscaling" else eta_epoch
        if t < warmup:  # linear warmup over the model's first rows
            eta *= t / warmup
        touched = np.unique(
            np.concatenate([y[rows][sw[rows] > 0], draws]).astype(np.intp)
        )
        if alpha > 0:
            W = max(0.0, 1 - eta * alpha * sw[rows].sum() / nb) * W
        if beta < 1:
            V[touched] = (1 - beta) * V[touched] + beta * GW[touched]
            Vb[touched] = (1 - beta) * Vb[touched] + beta * Gb[touched]
            step, step_b = V, Vb
        else:
            step, step_b = GW, Gb
        W[touched] -= eta * step[touched]
        if fit_intercept:
            b[touched] -= eta * step_b[touched]
    return W, b, nu, V, Vb, obj, wsum, t


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
            lambda z: np.exp(
                -0.5 * z * z - 0.5 * np.log(2 * np.pi) - log_ndtr(z)
            ),
        )
    return (
        lambda e: -np.logaddexp(0, -e) - np.logaddexp(0, e),
        lambda e: 1 - 2 * expit(e),
        lambda z: -np.logaddexp(0, -z),
        lambda z: expit(-z),
    )


# The kernel stores the 'kucukelbir' schedule's s as u = s / 0.9^(t - t_base),
# t_base = 512 floor(t / 512), -1 for "no gradient yet"; the reference keeps
# the paper's s at the step it was last updated.
AR_REBASE = 512


def ar_adapt_to_s(adapt, n_steps):
    """(s, step of s) from the kernel's state after ``n_steps`` steps."""
    s = np.where(adapt < 0, np.nan, adapt * 0.9 ** (n_steps % AR_REBASE))
    return s, np.full(adapt.shape, float(n_steps))


def ar_s_to_adapt(s, last, n_steps):
    """The kernel's state after ``n_steps`` steps from (s, step of s)."""
    base = AR_REBASE * (n_steps // AR_REBASE)
    return np.where(np.isnan(s), -1.0, s * 0.9 ** (base - last))


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
    natural_local=False,
):
    """One epoch of Ruiz et al.'s Alg. 1 (softmax) or Alg. 2, densely.

    ``natural_local``: Alg. 2's local step is the package's natural-gradient
    step on q's precision and mean (see the kernel's _ar_local_row) instead
    of the paper's gradient step.

    Returns (W, b, local, adapt, objective_sum, weight_sum, t, n_steps).
    """
    from scipy.special import expit, logsumexp

    X = dense(X).astype(np.float64)
    W, b = W.astype(np.float64), b.astype(np.float64)
    local = local.copy()
    n, K, D = X.shape[0], W.shape[0], X.shape[1]
    adagrad = schedule == "adagrad"
    if adapt is not None and not adagrad:
        s_last, last = ar_adapt_to_s(adapt, n_steps)
    elif adapt is not None:
        # AdaGrad's state is s itself (-1: no gradient yet)
        s_last = np.where(adapt < 0, np.nan, adapt)
    ratio = (K - 1) / m
    order = rng.permutation(n) if shuffle else np.arange(n)
    obj, wsum = 0.0, 0.0
    if model != "softmax":
        log_pdf, dlog_pdf, log_cdf, dlog_cdf = ar_noise(model)
    for b0 in range(0, n, batch_size):
        rows = np.sort(order[b0 : b0 + batch_size])
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
                if natural_local:
                    z = eps - d
                    r = dlog_cdf(z)
                    if model == "probit":
                        kappa = np.clip(r * (z + r), 0.0, 1.0)
                        kappa0, var_u = 1.0, 1.0
                    else:
                        kappa = expit(z) * expit(-z)
                        kappa0 = 2.0 * expit(eps) * expit(-eps)
                        var_u = np.pi**2 / 3.0
                    curv = kappa0 + ratio * kappa.sum()
                    lam = (1.0 - a_t) / (sig * sig * var_u) + a_t * curv
                    lam = max(lam, 1e-4)
                    mu = mu + a_t * dl / lam
                    mu = np.clip(
                        mu,
                        min(d.min(), 0.0) - 1.0,
                        max(d.max(), 0.0) + np.log(2.0 * (K - 1)) + 2.1,
                    )
                    # softplus^-1 of the new scale
                    gam = np.log(np.expm1(1.0 / np.sqrt(lam * var_u)))
                else:
                    mu = mu + a_t * dl
                    gam = gam + a_t * (dl * u + 1.0 / sig) * expit(gam)
                local[i, :2] = mu, gam
                eps = mu + np.logaddexp(0.0, gam) * ar_draw_noise(rng, model)
                c = ratio * dlog_cdf(eps - d)
            coefs.append(np.concatenate([[-c.sum()], c]))
            wsum += s
            sum_s += s
        grad = np.zeros((K, D + 1))
        for r, i in enumerate(rows):
            if sw[i] == 0:
                continue
            for k, c in zip(np.concatenate([[y[i]], ks[r]]), coefs[r]):
                grad[k, :D] += sw[i] * c * X[i]
                grad[k, D] += sw[i] * c
        if adagrad:
            # Duchi et al.'s sum on the minibatch's summed gradient, rho_0
            # constant, the penalty at the rate rho_0
            W = max(0.0, 1 - eta0 * alpha * sum_s / nb) * W
            if not fit_intercept:
                grad[:, D] = 0.0
            for k, f in zip(*np.nonzero(grad)):
                idx = k * (D + 1) + f
                g = grad[k, f]
                sv = g * g if np.isnan(s_last[idx]) else s_last[idx] + g * g
                s_last[idx] = sv
                step = eta0 * g / (1 + np.sqrt(sv))
                if f == D:
                    b[k] -= step
                else:
                    W[k, f] -= step
            continue
        if schedule != "kucukelbir":
            eta = eta0 / t**power_t if schedule == "invscaling" else eta_epoch
            W = (
                max(0.0, 1 - eta * alpha * sum_s / nb) * W
                - eta / nb * grad[:, :D]
            )
            if fit_intercept:
                b = b - eta / nb * grad[:, D]
            continue
        rho = (
            eta0
            * decay ** np.floor(n_steps / 2000)
            * n_steps ** (-0.5 + 1e-16)
        )
        W = max(0.0, 1 - rho * alpha * sum_s / nb) * W
        grad *= n / nb
        if not fit_intercept:
            grad[:, D] = 0.0
        # Kucukelbir et al.'s recursion as written: s_t = 0.1 g^2 + 0.9
        # s_{t-1}, s = g^2 at a coordinate's first nonzero gradient; a
        # coordinate without gradient only decays
        for k, f in zip(*np.nonzero(grad)):
            idx = k * (D + 1) + f
            g = grad[k, f]
            if np.isnan(s_last[idx]):
                sv = g * g
            else:
                sv = 0.1 * g * g + 0.9 ** (n_steps - last[idx]) * s_last[idx]
            s_last[idx], last[idx] = sv, n_steps
            step = rho * g / (1 + np.sqrt(sv))
            if f == D:
                b[k] -= step
            else:
                W[k, f] -= step
    if adapt is not None and adagrad:
        adapt = np.where(np.isnan(s_last), -1.0, s_last)
    elif adapt is not None:
        adapt = ar_s_to_adapt(s_last, last, n_steps)
    return W, b, local, adapt, obj, wsum, t, n_steps


def softmax_ar_bound(psi, y, log_eta):
    """Eq. 8 of Ruiz et al. per row: 1 - log eta - eta*/eta."""
    from scipy.special import logsumexp

    d = psi - psi[np.arange(psi.shape[0]), y][:, None]
    log_eta_star = logsumexp(d, axis=1)  # includes e^0 for k = y
    return 1.0 - log_eta - np.exp(log_eta_star - log_eta)


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


def _sbm_pack(W, b, fit_intercept):
    """theta = vec([W | b]) class by class, and the mask of penalised
    coordinates (the intercepts are not)."""
    K, D = W.shape
    Dp = D + int(fit_intercept)
    T = np.zeros((K, Dp))
    T[:, :D] = W
    pen = np.ones((K, Dp))
    if fit_intercept:
        T[:, D] = b
        pen[:, D] = 0.0
    return T.ravel(), pen.ravel()


def _sbm_unpack(theta, b, X, y, fit_intercept):
    """(W, b, per-row log-loss) from theta; b is kept if not fitted."""
    K, D = b.shape[0], X.shape[1]
    T = theta.reshape(K, D + int(fit_intercept))
    W, b = T[:, :D].copy(), (T[:, D].copy() if fit_intercept else b.copy())
    scores = X @ W.T + (b if fit_intercept else 0.0)
    nll = np.logaddexp.reduce(scores, axis=1) - scores[np.arange(len(y)), y]
    return W, b, nll


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
    theta, pen = _sbm_pack(W, b, fit_intercept)
    M, mu = M.copy(), mu.copy()
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
    W, b, nll = _sbm_unpack(theta, b, X, y, fit_intercept)
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
    theta, pen = _sbm_pack(W, b, fit_intercept)
    V, sig, Dg, mu = V.copy(), sig.copy(), Dg.copy(), mu.copy()
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
    W, b, nll = _sbm_unpack(theta, b, X, y, fit_intercept)
    return W, b, V, sig, Dg, mu, n_used, float(nll @ sw), float(sw.sum())


# ------------------------------------------- unbiasedness of sampled steps
# K = 7 classes with very unequal counts: q spans a factor of 400
SAMPLER_COUNTS = np.array([400.0, 150, 60, 25, 10, 3, 0])


def gradient_problem(seed=0):
    """Rows x_i, labels (the most frequent class, a middling and a rare
    one), W, b and u_i a little above each row's log-normaliser."""
    rng = np.random.default_rng(seed)
    K, d = len(SAMPLER_COUNTS), 4
    X = rng.standard_normal((3, d))
    y = np.array([0, 3, 5], dtype=np.intp)
    W = 0.5 * rng.standard_normal((K, d))
    b = 0.3 * rng.standard_normal(K)
    S = X @ W.T + b
    lse = np.logaddexp.reduce(S - S[np.arange(3), y][:, None], axis=1)
    return X, y, W, b, lse + 0.2


def sampler_table(sampler):
    """None (uniform) or the alias table of SAMPLER_COUNTS + 1."""
    return None if sampler == "uniform" else AliasTable(SAMPLER_COUNTS + 1)


def double_sum_gradient(x, y, W, b, u, s=1.0):
    """f_i = u + e^{-u} + sum_{k != y} e^{d_k - u} - 1 (eq. 6, per row,
    weight s) and its gradient in (W, b, u), flattened in that order."""
    d = W @ x + b
    d = d - d[y]
    e = np.exp(d - u)
    e[y] = 0.0
    g_W = np.outer(e, x)
    g_W[y] = -e.sum() * x
    g_b = e.copy()
    g_b[y] = -e.sum()
    f = u + np.exp(-u) + e.sum() - 1
    grad = np.concatenate([g_W.ravel(), g_b, [1 - np.exp(-u) - e.sum()]])
    return s * f, s * grad


def monte_carlo_z(samples, exact):
    """z-scores (mean - exact) / standard error, per coordinate.

    ``samples`` has one draw per row. The standard error comes from the
    sample itself; coordinates that never vary must equal ``exact`` to
    rounding and get z = 0 (or inf if they do not).
    """
    samples = np.asarray(samples, dtype=np.float64)
    mean = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    diff = mean - exact
    scale = 1e-9 * np.maximum(1.0, np.abs(exact))
    fixed = se <= scale
    z = np.where(fixed, 0.0, diff / np.where(fixed, 1.0, se))
    z[fixed & (np.abs(diff) > scale)] = np.inf
    return z


# ---- exact-gradient solver with AdaGrad-norm steps (sksoftmax/_exact.py) ----

# eps of the steps eta / sqrt(eps + G) (sksoftmax/_exact.py)
EXACT_EPS = 1e-8


def new_exact_state(n_classes, n_features, intercept=None):
    """A fresh state of ``ExactSolver.setup`` in float64, as a dict."""
    return {
        "Wt": np.zeros((n_features, n_classes)),
        "b": (
            np.zeros(n_classes)
            if intercept is None
            else np.array(intercept, dtype=np.float64)
        ),
        "G": np.zeros(n_features),
        "Gb": 0.0,
        "tau_last": np.zeros(n_features),
        "tau": 0.0,
    }


def _exact_copy(state):
    return {
        k: (v.astype(np.float64) if isinstance(v, np.ndarray) else float(v))
        for k, v in state.items()
    }


def exact_step(eta, G, adaptive=True):
    """The steps of accumulators G: eta / sqrt(eps + G) (AdaGrad-norm), or
    eta for every one without ``adaptive``."""
    G = np.asarray(G, dtype=np.float64)
    return eta / np.sqrt(EXACT_EPS + G) if adaptive else np.full_like(G, eta)


def exact_finalize_reference(state, *, eta, alpha, adaptive=True):
    """Decay every feature with G_j > 0 from tau_last_j to tau (new dict)."""
    st = _exact_copy(state)
    if alpha > 0:
        G, tl = st["G"], st["tau_last"]
        rate = np.where(
            G > 0,
            alpha * (st["tau"] - tl) * exact_step(eta, G, adaptive),
            0.0,
        )
        st["Wt"] *= np.exp(-rate)[:, None]
        tl[:] = st["tau"]
    return st


def exact_epoch_reference(
    X, y, sw, state, order, *, eta, alpha=0.0, fit_intercept=True, lazy=True,
    adaptive=True,
):
    """One epoch of the exact solver's steps 1-5 over the rows ``order``.

    ``state``: a dict as ``new_exact_state`` (not modified); the row's
    "nonzero features" are the stored entries of a CSR row, every column of
    a dense one. ``lazy=True`` keeps the kernel's lazy decay (a feature
    decays from tau_last_j when a row touches it; ``exact_finalize_reference``
    does the rest). ``lazy=False`` decays every feature with G_j > 0 by
    exp(-eta alpha s / sqrt(eps + G_j)) at every row of weight s, the
    definition the lazy form must reproduce (tau_last then always equals
    tau). ``adaptive=False``: every step is eta itself (``exact_step``).
    Computed in float64. Returns (state, loss_sum, weight_sum).
    """
    st = _exact_copy(state)
    Wt, b, G, tl = st["Wt"], st["b"], st["G"], st["tau_last"]
    Gb, tau = st["Gb"], st["tau"]
    Xd = dense(X).astype(np.float64)
    D = Xd.shape[1]
    loss_sum = weight_sum = 0.0
    for i in order:
        s = sw[i]
        if s == 0:
            continue
        if sp.issparse(X):
            idx = X.indices[X.indptr[i] : X.indptr[i + 1]]
        else:
            idx = np.arange(D)
        x = Xd[i, idx]
        # 1: the L2 decay
        if alpha > 0:
            tau += s
            if lazy:
                for j in idx:
                    if G[j] > 0:
                        Wt[j] *= np.exp(
                            -alpha * (tau - tl[j]) * exact_step(eta, G[j], adaptive)
                        )
                    tl[j] = tau
            else:
                rate = np.where(
                    G > 0, alpha * s * exact_step(eta, G, adaptive), 0.0
                )
                Wt *= np.exp(-rate)[:, None]
                tl[:] = tau
        # 2: scores and the progressive loss, before the update
        z = b + x @ Wt[idx]
        m = z.max()
        lse = m + np.log(np.exp(z - m).sum())
        loss_sum += s * (lse - z[y[i]])
        weight_sum += s
        # 3: coefficients
        c = s * np.exp(z - lse)
        c[y[i]] -= s
        c2 = c @ c
        # 4: per-feature AdaGrad-norm steps (idx holds distinct features)
        G[idx] += x * x * c2
        Wt[idx] -= (exact_step(eta, G[idx], adaptive) * x)[:, None] * c[None, :]
        # 5: intercepts
        if fit_intercept:
            Gb += c2
            b -= exact_step(eta, Gb, adaptive) * c
    st["Gb"], st["tau"] = Gb, tau
    return st, loss_sum, weight_sum
