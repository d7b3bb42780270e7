"""The step pilot of DistributedSoftmaxClassifier's fit: the single-process
estimator's pilot rule (``_step_pilot``), each trial a DS-MLR pass on the
cluster."""

import numpy as np
from sklearn.utils import check_random_state

from .._shared._codes import Status
from . import _worker as W


def cluster_pilot(fit, client, rows, partials, P, dtype, intercept):
    """The AdaGrad step scale of ``fit`` (a DistributedSoftmaxClassifier)
    by the single-process estimator's pilot rule (``_step_pilot.pilot``,
    its constants), each trial a
    DS-MLR pass over a sample of the rows from W = 0 on the cluster.

    Stage 1: every candidate of ``pilot_walk`` (PILOT_ETAS, walking on
    along the grid past an end while the winner is there) trains on
    the first m / 2 rows
    of a random order (each worker's share of them from its own row
    block) and is scored by the progressive log-loss of the next
    m / 2, m = min(PILOT_MAX_ROWS, n / 5); stage 2: the leader and
    its neighbours on the grid (the single-process rule: the two best)
    go on over the next PILOT_RACE_ROWS x m rows, the lower
    progressive log-loss there wins. The fit then starts from W = 0
    with the winner: the pilot costs about two epochs at n = 5 m, less
    beyond (at most 6 m + 15 m rows), and holds no W of its own
    besides the trial's blocks.
    """
    from .._step_pilot import (
        ETA_NO_PILOT,
        PILOT_MAX_ROWS,
        PILOT_MIN_ROWS,
        PILOT_RACE_ROWS,
        PILOT_ROW_DIVISOR,
        pilot_walk,
    )

    ring = list(fit.shard_workers_)
    sizes = fit._collect(
        client, ring, [client.submit(W.n_rows_of, r, pure=False) for r in rows]
    )
    n = int(sum(sizes))
    m = min(PILOT_MAX_ROWS, n // PILOT_ROW_DIVISOR)
    if m < PILOT_MIN_ROWS:
        if fit.verbose:
            print(f"eta0='auto': {n} rows are too few for the pilot; "
                  f"using {ETA_NO_PILOT:g}")
        return ETA_NO_PILOT
    rng = check_random_state(fit.random_state)
    # each worker's share of the parts (first, second, race), as row
    # blocks of its own rows in a random order
    cuts = np.array([0, m // 2, m, (1 + PILOT_RACE_ROWS) * m], dtype=float)
    parts = []
    for p in range(P):
        share = np.minimum(np.round(cuts * sizes[p] / n).astype(int), sizes[p])
        order = rng.permutation(sizes[p])
        parts.append([
            client.submit(
                W.take_rows, rows[p], partials[p], order[a:b],
                workers=[ring[p]], pure=False,
            )
            for a, b in zip(share[:-1], share[1:])
        ])
    seeds = rng.randint(0, 2**63 - 1, size=(P, P), dtype=np.int64)

    def run(eta, n_parts):
        """The progressive log-loss of the last of the first
        ``n_parts`` parts, each a DS-MLR pass from where the previous
        left the blocks, the first from W = 0."""
        shards = fit._zero_shards(client, dtype, intercept)
        offset, ends = 0, None
        for k in range(n_parts):
            sub = [client.submit(W.first, part[k], pure=False,
                                 workers=[ring[p]])
                   for p, part in enumerate(parts)]
            subp = [client.submit(W.second, part[k], pure=False,
                                  workers=[ring[p]])
                    for p, part in enumerate(parts)]
            shards, ends, _ = fit._submit_epoch(
                client, ring, sub, subp, shards, seeds, eta, offset, P
            )
            offset = (offset - 1) % P
        summaries = fit._collect(client, ring, list(ends))
        if max(s_[2] for s_ in summaries) != Status.STATUS_OK:
            return np.inf
        loss = sum(s_[0] for s_ in summaries) / max(
            sum(s_[1] for s_ in summaries), 1e-300
        )
        return float(loss) if np.isfinite(loss) else np.inf

    results = pilot_walk(lambda eta: run(eta, 2))
    fit.eta0_trials_ = np.array(sorted(results.items()))
    ranked = sorted((v, e) for e, v in results.items() if v < np.inf)
    if not ranked:
        return min(results)
    # stage 2 races the leader and its finite neighbours on the grid
    # (the single-process rule races the two best): stage 1's short
    # horizon can tie its neighbours, and which of them races then
    # decides the step
    etas = sorted(results)
    lead = etas.index(ranked[0][1])
    racers = [
        e for e in etas[max(lead - 1, 0) : lead + 2] if results[e] < np.inf
    ]
    finals = []
    if len(racers) > 1 and cuts[2] < n:
        finals = sorted((run(e, 3), e) for e in racers)
        eta = finals[0][1]
    else:
        eta = ranked[0][1]
    if fit.verbose:
        tried = ", ".join(f"{e:.3g}: {v:.4g}" for e, v in sorted(results.items()))
        line = f"eta0='auto': pilot on {m} rows, progressive log-loss {{{tried}}}"
        if finals:
            line += f"; on the next {int(cuts[3] - cuts[2])} rows " + ", ".join(
                f"{e:.3g}: {v:.4g}" for v, e in finals
            )
        print(line + f"; using {eta:.3g}")
    return float(eta)
