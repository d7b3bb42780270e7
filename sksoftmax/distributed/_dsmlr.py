"""The fit of DistributedSoftmaxClassifier: DS-MLR epochs over a ring of
workers, its step pilot, parameter mixing, and the checkpoints and
resumption after a lost worker (the design: ``_estimator.py``'s module
docstring)."""

import threading
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from .._epochs import improves
from .._shared._codes import Status
from . import _worker as W

# AdaGrad's epsilon, the exact solver's
EPS = 1e-8
# how often a fit waiting for its tasks checks that its workers are there
POLL_SECONDS = 0.5
# after a lost worker: how long to wait for the cluster to have as many
# workers as before (a nanny restarts a dead worker within seconds), and
# how many resumptions in a row (without a completed epoch) to try
RESUME_WAIT = 30.0
MAX_RESUMES = 3


class _WorkerLost(RuntimeError):
    """A worker of the fit left the cluster (or its results were lost)."""


class DSMLRFit:
    """The epochs of ``DistributedSoftmaxClassifier.fit``: row blocks
    placed on the workers, class blocks moving in a ring, held by the
    estimator's fitted attributes."""

    def _zero_shards(self, client, dtype, intercept):
        """The class blocks at W = 0, made on ``shard_workers_`` by tasks
        (recomputable from their lineage)."""
        return [
            client.submit(
                W.zero_shard, b - a, self.n_features_in_, dtype,
                intercept[a:b].copy(), a, self.n_jobs, workers=[w], pure=False,
            )
            for (a, b), w in zip(self.class_ranges_, self.shard_workers_)
        ]

    def _place_rows(self, client, blocks, sizes, y_enc, dtype, intercept, P):
        """The P row blocks (the input blocks assigned round robin to the
        workers, concatenated there with their encoded labels) and their
        rows' starting log-partitions per class block (W = 0: the block's
        log sum of exp(c_k)), as futures pinned to ``shard_workers_``'s
        worker p."""
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        rows, partials = [], []
        start = {
            "intercept": np.asarray(intercept, np.float64),
            "ranges": np.asarray(self.class_ranges_, dtype=np.intp),
        }
        for p in range(P):
            w = self.shard_workers_[p]
            mine = list(range(p, len(blocks), P))
            pairs = [
                client.submit(
                    W.pair, blocks[i], y_enc[bounds[i] : bounds[i + 1]], pure=False
                )
                for i in mine
            ]
            r = client.submit(
                _row_block, start, dtype, *pairs, workers=[w], pure=False
            )
            rows.append(r)
            partials.append(
                client.submit(W.initial_partials, r, workers=[w], pure=False)
            )
        return rows, partials

    def _fit_mixing(self, client, rows, shards, intercept, y_enc, K, P, eta):
        """Iterative parameter mixing: every worker runs one epoch of the
        exact solver on its rows from the mixed W, then W and b are
        averaged (one W per worker travels each way per epoch)."""
        workers = self.shard_workers_
        rng = check_random_state(self.random_state)
        states = [
            client.submit(
                W.mix_setup, rows[p], K, intercept, eta, float(self.alpha),
                bool(self.fit_intercept), self.n_jobs, workers=[workers[p]],
                pure=False,
            )
            for p in range(P)
        ]
        lse0 = float(np.logaddexp.reduce(intercept.astype(np.float64)))
        best = float(np.mean(lse0 - intercept.astype(np.float64)[y_enc]))
        mixed = None
        no_change = 0
        self.loss_curve_ = []
        self.n_iter_ = 0
        for epoch in range(self.max_iter):
            tic = time.perf_counter()
            seeds = rng.randint(0, 2**31 - 1, size=P)
            results = [
                client.submit(
                    W.mix_epoch, states[p], rows[p], mixed, eta, int(seeds[p]),
                    bool(self.shuffle), workers=[workers[p]], pure=False,
                )
                for p in range(P)
            ]
            new_mixed = client.submit(
                W.mix_average,
                *[
                    client.submit(W.mix_weights, r, workers=[workers[p]],
                                  pure=False)
                    for p, r in enumerate(results)
                ],
                pure=False,
            )
            try:
                sums = self._collect(
                    client, workers,
                    [client.submit(W.mix_summary, r, pure=False) for r in results],
                )
                # ||W||^2 only where the penalty reads it (a pass over W)
                sq = 0.0
                if self.alpha > 0:
                    [sq] = self._collect(
                        client, workers,
                        [client.submit(W.mixed_sq_norm, new_mixed, pure=False)],
                    )
            except _WorkerLost as lost:
                raise RuntimeError(
                    f"{lost} strategy='mixing' does not resume after a lost "
                    "worker: refit (strategy='dsmlr' does, from its "
                    "checkpoints)."
                ) from lost
            loss = sum(s[0] for s in sums) / max(sum(s[1] for s in sums), 1e-300)
            objective = loss + 0.5 * self.alpha * sq
            self.n_iter_ = epoch + 1
            accepted, best, eta, no_change = self._judge_epoch(
                epoch, tic, objective, best, eta, no_change
            )
            if accepted:
                states = [
                    client.submit(W.first, r, workers=[workers[p]], pure=False)
                    for p, r in enumerate(results)
                ]
                mixed = new_mixed
            if self.tol is not None and no_change >= self.n_iter_no_change:
                break
        else:
            self._warn_max_iter()
        self.eta_ = eta
        if mixed is None:
            warnings.warn(
                "DistributedSoftmaxClassifier: every epoch diverged or raised "
                "the objective, the model is the starting one; pass a smaller "
                "eta0.",
                _convergence_warning(),
            )
            self._shards = shards
            return
        # the mixed model, split by classes for prediction
        self._shards = [
            client.submit(
                W.mixed_shard, mixed, lo, hi, self.n_jobs,
                workers=[workers[p % len(workers)]], pure=False,
            )
            for p, (lo, hi) in enumerate(self.class_ranges_)
        ]

    def _judge_epoch(self, epoch, tic, objective, best, eta, no_change):
        """Keep or undo an epoch: (accepted, best, eta, no_change). A worse
        (or non-finite) objective is undone by the caller and halves the
        step; a kept one is recorded in ``loss_curve_`` and, when it
        improves by less than ``tol``, counts towards
        ``n_iter_no_change``."""
        seconds = time.perf_counter() - tic
        if not np.isfinite(objective) or objective > best:
            eta *= 0.5
            if self.verbose:
                print(f"Epoch {epoch + 1}: {seconds:.3f} s, objective "
                      f"{objective:.6g} worse, undone; step -> {eta:.3g}")
            return False, best, eta, no_change + 1
        self.loss_curve_.append(float(objective))
        if self.verbose:
            print(f"Epoch {epoch + 1}: {seconds:.3f} s, objective "
                  f"{objective:.6g}, step {eta:.3g}")
        stalled = not improves(objective, best, self.tol)
        return True, min(best, objective), eta, no_change + 1 if stalled else 0

    def _warn_max_iter(self):
        """The ConvergenceWarning of a fit that used up ``max_iter``."""
        if self.max_iter > 1 and self.tol is not None:
            warnings.warn(
                f"DistributedSoftmaxClassifier: max_iter={self.max_iter} "
                "reached before the objective stopped improving.",
                _convergence_warning(),
            )

    def _eta(self, client, rows, partials, P, dtype, intercept):
        if self.eta0 != "auto":
            return float(self.eta0)
        return self._pilot(client, rows, partials, P, dtype, intercept)

    def _pilot(self, client, rows, partials, P, dtype, intercept):
        """The AdaGrad step scale by the single-process estimator's pilot
        rule (``_step_pilot.pilot``, its constants), each trial a
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

        ring = list(self.shard_workers_)
        sizes = self._collect(
            client, ring, [client.submit(W.n_rows_of, r, pure=False) for r in rows]
        )
        n = int(sum(sizes))
        m = min(PILOT_MAX_ROWS, n // PILOT_ROW_DIVISOR)
        if m < PILOT_MIN_ROWS:
            if self.verbose:
                print(f"eta0='auto': {n} rows are too few for the pilot; "
                      f"using {ETA_NO_PILOT:g}")
            return ETA_NO_PILOT
        rng = check_random_state(self.random_state)
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
            shards = self._zero_shards(client, dtype, intercept)
            offset, ends = 0, None
            for k in range(n_parts):
                sub = [client.submit(W.first, part[k], pure=False,
                                     workers=[ring[p]])
                       for p, part in enumerate(parts)]
                subp = [client.submit(W.second, part[k], pure=False,
                                      workers=[ring[p]])
                        for p, part in enumerate(parts)]
                shards, ends, _ = self._submit_epoch(
                    client, ring, sub, subp, shards, seeds, eta, offset, P
                )
                offset = (offset - 1) % P
            summaries = self._collect(client, ring, list(ends))
            if max(s_[2] for s_ in summaries) != Status.STATUS_OK:
                return np.inf
            loss = sum(s_[0] for s_ in summaries) / max(
                sum(s_[1] for s_ in summaries), 1
            )
            return float(loss) if np.isfinite(loss) else np.inf

        results = pilot_walk(lambda eta: run(eta, 2))
        self.eta0_trials_ = np.array(sorted(results.items()))
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
        if self.verbose:
            tried = ", ".join(f"{e:.3g}: {v:.4g}" for e, v in sorted(results.items()))
            line = f"eta0='auto': pilot on {m} rows, progressive log-loss {{{tried}}}"
            if finals:
                line += f"; on the next {int(cuts[3] - cuts[2])} rows " + ", ".join(
                    f"{e:.3g}: {v:.4g}" for v, e in finals
                )
            print(line + f"; using {eta:.3g}")
        return float(eta)

    def _fit_epochs(self, client, held, eta, P, start, ckpt, source):
        """DS-MLR's epochs, each checkpointed (``ckpt``) once kept; a lost
        worker makes the loop resume from the last completed epoch.
        ``held``: [row blocks, their partial log-partitions], emptied
        here."""
        rows, partials = held
        held.clear()
        # the class blocks start at zero, made on their workers by tasks
        shards = self._zero_shards(client, source[2], source[3])
        rng = check_random_state(self.random_state)
        ring = list(self.shard_workers_)
        n_workers = len(set(ring))
        self.loss_curve_ = []
        self.n_iter_ = 0
        self.eta_ = eta
        best, no_change, offset, epoch = start, 0, 0, 0
        # the loop's state after the last completed epoch, the point a lost
        # worker resumes from ('saved': the checkpoint holds class blocks;
        # before the first kept epoch they are zeros, remade by tasks)
        done = self._loop_state(epoch, best, eta, no_change, offset, rng, False)
        failures = 0
        # a test hook (not a parameter): called as hook(self, epoch) after
        # each completed epoch
        hook = getattr(self, "_after_epoch", None)
        while epoch < self.max_iter:
            try:
                tic = time.perf_counter()
                seeds = rng.randint(0, 2**63 - 1, size=(P, P), dtype=np.int64)
                blocks, ends, new_partials = self._submit_epoch(
                    client, ring, rows, partials, shards, seeds, eta, offset, P
                )
                if ckpt is not None:
                    # the undo reads the checkpoint: the workers keep only
                    # the blocks in flight, not those of the epoch's start
                    shards = None
                # block q ends the epoch on the worker of round P - 1
                holders = [ring[(q - offset + 1) % P] for q in range(P)]
                objective = self._epoch_objective(
                    client, ring, blocks, ends, holders
                )
                self.n_iter_ = epoch + 1
                # a worse epoch (or an overflow) is undone: the partial
                # log-partitions of its start are still held, its blocks
                # are in the checkpoint (or still held without one)
                accepted, best, eta, no_change = self._judge_epoch(
                    epoch, tic, objective, best, eta, no_change
                )
                if accepted:
                    shards = blocks
                    partials = new_partials
                    offset = (offset - 1) % P
                    if ckpt is not None:
                        self._save_checkpoint(client, ring, ckpt, epoch + 1,
                                              shards, partials)
                elif ckpt is not None:
                    shards = self._restore_shards(
                        client, ckpt, done["saved"], ring, offset, source
                    )
                # an undone epoch's blocks leave the workers now, not when
                # the next epoch rebinds these names
                blocks = ends = new_partials = None
            except _WorkerLost as lost:
                failures += 1
                if ckpt is None:
                    raise RuntimeError(
                        f"{lost} The fit ran with checkpoint=False and cannot "
                        "resume: refit, or fit with checkpoint=True."
                    ) from lost
                if failures > MAX_RESUMES:
                    raise RuntimeError(
                        f"{lost} {MAX_RESUMES} resumptions in a row failed; "
                        "giving up."
                    ) from lost
                epoch, best, eta, no_change, offset = (
                    done["epoch"], done["best"], done["eta"],
                    done["no_change"], done["offset"],
                )
                warnings.warn(
                    f"DistributedSoftmaxClassifier: {lost} Resuming from the "
                    f"checkpoint of epoch {epoch} (the last completed).",
                    RuntimeWarning,
                )
                rng.set_state(done["rng"])
                self.loss_curve_ = list(done["curve"])
                self.n_iter_ = epoch
                client, ring, rows, partials, shards = self._resume(
                    client, ckpt, done, source, P, n_workers
                )
                continue
            failures = 0
            epoch += 1
            done = self._loop_state(
                epoch, best, eta, no_change, offset, rng,
                done["saved"] or (accepted and ckpt is not None),
            )
            # the worker holding each class block now
            self._ring_holders = [ring[(q - offset) % P] for q in range(P)]
            if hook is not None:
                hook(self, epoch)
            if self.tol is not None and no_change >= self.n_iter_no_change:
                break
        else:
            self._warn_max_iter()
        if not self.loss_curve_:
            warnings.warn(
                "DistributedSoftmaxClassifier: every epoch overflowed or "
                "raised the objective, the model is the starting one; pass "
                "a smaller eta0.",
                _convergence_warning(),
            )
        self.eta_ = eta
        # where each block is now: worker (q - offset) mod P of the ring
        self.shard_workers_ = [ring[(q - offset) % P] for q in range(P)]
        self._shards = shards

    def _loop_state(self, epoch, best, eta, no_change, offset, rng, saved):
        return {
            "epoch": epoch, "best": best, "eta": eta, "no_change": no_change,
            "offset": offset, "rng": rng.get_state(),
            "curve": list(self.loss_curve_), "saved": saved,
        }

    def _submit_epoch(self, client, ring, rows, partials, shards, seeds, eta,
                      offset, P):
        """Submit the P rounds of one epoch: in round r worker p trains
        block (p + offset + r) mod P, which then moves to worker p - 1;
        each sub-epoch refreshes its rows' partial log-partition of the
        block it trained. Returns the futures of the epoch's blocks, of its
        rows' summaries and of their partial log-partitions."""
        blocks = list(shards)
        partials = list(partials)
        parts = [[] for _ in range(P)]
        base = {
            "eta": eta,
            "alpha": float(self.alpha),
            "fit_intercept": bool(self.fit_intercept),
            "shuffle": bool(self.shuffle),
            "eps": EPS,
        }
        done = [None] * P
        for r in range(P):
            new = [None] * P
            for p in range(P):
                q = (p + offset + r) % P
                opts = dict(base, seed=int(seeds[p, r]))
                # worker p starts round r once worker p - 1 has finished
                # round r - 1, which read the block p made in round r - 2:
                # no worker runs ahead and piles up blocks made for a slow
                # neighbour (it holds the one it made, the one it trains)
                after = () if done[(p - 1) % P] is None else (done[(p - 1) % P],)
                res = client.submit(
                    W.subepoch, rows[p], blocks[q], partials[p], q, opts, *after,
                    workers=[ring[p]], pure=False,
                )
                new[q] = client.submit(W.first, res, workers=[ring[p]], pure=False)
                parts[p].append(
                    client.submit(W.second, res, workers=[ring[p]], pure=False)
                )
                partials[p] = client.submit(
                    W.update_partials, partials[p], q, parts[p][-1],
                    workers=[ring[p]], pure=False,
                )
            done = [
                client.submit(W.token, part[-1], workers=[ring[p]], pure=False)
                for p, part in enumerate(parts)
            ]
            blocks = new
        ends = [
            client.submit(W.end_epoch, rows[p], *parts[p], workers=[ring[p]],
                          pure=False)
            for p in range(P)
        ]
        return blocks, ends, partials

    def _epoch_objective(self, client, ring, blocks, ends, holders):
        """The epoch's training objective from its rows' sums (np.inf after
        an overflow); the squared norms computed where the blocks are."""
        summaries = self._collect(client, ring, list(ends))
        if max(s[2] for s in summaries) != Status.STATUS_OK:
            return np.inf
        sq = sum(self._collect(
            client, ring,
            [
                client.submit(W.shard_sq_norm, b, workers=[w], pure=False)
                for b, w in zip(blocks, holders)
            ],
        ))
        loss = sum(s[0] for s in summaries) / sum(s[1] for s in summaries)
        return loss + 0.5 * self.alpha * sq

    # ------------------------------------------------------ checkpoints
    @classmethod
    def _collect(cls, client, ring, futures):
        """``client.gather(futures)``, or _WorkerLost when a worker of the
        ring left the cluster meanwhile (its pinned tasks would wait for it
        forever) or the results were lost with it."""
        from distributed import CancelledError, KilledWorker

        try:
            # waited for by callbacks, not by distributed.wait's timeouts: a
            # TimeoutError's traceback would hold the callers' frames (and
            # the futures in them, whose blocks then stay on the workers)
            # in a reference cycle until the garbage collector runs
            pending = [f for f in futures if not f.done()]
            if pending:
                finished = threading.Event()
                left = [len(pending)]
                lock = threading.Lock()

                def one_done(_):
                    with lock:
                        left[0] -= 1
                        if left[0] == 0:
                            finished.set()

                for f in pending:
                    f.add_done_callback(one_done)
                del pending
                while not finished.wait(POLL_SECONDS):
                    cls._check_ring(client, ring)
            return client.gather(futures)
        except (CancelledError, KilledWorker) as exc:
            # results cancelled for 'lost dependencies', or a task whose
            # workers kept dying: name the worker when it has left
            cls._check_ring(client, ring, exc)
            raise _WorkerLost(f"A worker was lost ({type(exc).__name__}).") from exc
        except _WorkerLost:
            raise
        except Exception as exc:
            cls._check_ring(client, ring, exc)
            raise

    @classmethod
    def _check_ring(cls, client, ring, cause=None):
        lost = sorted(set(ring) - set(cls._workers(client)))
        if lost:
            raise _WorkerLost(
                f"Worker(s) {', '.join(lost)} left the cluster."
            ) from cause

    def _save_checkpoint(self, client, ring, ckpt, epoch, shards, partials):
        """The kept epoch's class blocks (one at a time) and the rows'
        partial log-partitions, written
        to a new slot that replaces the previous one once complete."""
        # in memory: all blocks in one gather; to files: one at a time
        step = P = len(shards)
        if ckpt.directory is not None:
            step = 1
        for lo in range(0, P, step):
            for q, shard in enumerate(
                self._collect(client, ring, list(shards[lo : lo + step])), lo
            ):
                arrays = [shard.coef_, shard.intercept_, *shard.adagrad]
                ckpt.save(epoch, f"shard{q}", arrays)
            del shard, arrays
        for p, part in enumerate(self._collect(client, ring, list(partials))):
            ckpt.save(epoch, f"partials{p}", [part])
        ckpt.commit(epoch)

    def _restore_shards(self, client, ckpt, saved, ring, offset, source):
        """The class blocks of the checkpoint (zeros before the first kept
        epoch), block q placed on worker (q - offset) mod P of the ring."""
        P = len(ring)
        where = [ring[(q - offset) % P] for q in range(P)]
        if not saved:
            self.shard_workers_ = where
            return self._zero_shards(client, source[2], source[3])
        shards = []
        for q, ((lo, _), w) in enumerate(zip(self.class_ranges_, where)):
            arrays = client.scatter(ckpt.load(f"shard{q}"), workers=[w], hash=False)
            shards.append(client.submit(
                W.shard_from_arrays, lo, self.n_jobs, *arrays,
                workers=[w], pure=False,
            ))
        return shards

    def _resume(self, client, ckpt, done, source, P, n_workers):
        """The fit's state on the workers rebuilt after a loss: wait (up to
        RESUME_WAIT seconds) for the cluster to have its workers back (a
        nanny restarts a dead worker), then place the row blocks anew on
        the workers there (from X: in-memory blocks were scattered and lost
        with their worker) and the checkpoint's blocks and partial
        log-partitions."""
        X, y_enc, dtype, intercept, n_blocks = source
        try:
            client.wait_for_workers(n_workers, timeout=RESUME_WAIT)
        except TimeoutError:
            pass
        workers = self._workers(client)
        ring = [workers[p % len(workers)] for p in range(P)]
        self.shard_workers_ = ring
        blocks, _ = self._row_blocks(client, X, n_blocks)
        sizes = self._collect(
            client, ring, [client.submit(W.n_rows, b, pure=False) for b in blocks]
        )
        rows, partials = self._place_rows(
            client, blocks, sizes, y_enc, dtype, intercept, P
        )
        if done["saved"]:
            partials = [
                client.scatter(
                    ckpt.load(f"partials{p}")[0], workers=[ring[p]], hash=False
                )
                for p in range(P)
            ]
        shards = self._restore_shards(
            client, ckpt, done["saved"], ring, done["offset"], source
        )
        return client, ring, rows, partials, shards


def _convergence_warning():
    from sklearn.exceptions import ConvergenceWarning

    return ConvergenceWarning


def _row_block(start, dtype, *pairs):
    """A worker's row block from its (X, y_enc) pieces: one X (CSR or
    dense, ``dtype``), the labels, and each row's view of every class
    block at W = 0 (``start``: the intercepts and the blocks' ranges;
    ``W.initial_partials_of``)."""
    X, y = W.concat_rows(*pairs)
    if sp.issparse(X):
        X = X.astype(dtype, copy=False).tocsr()
    else:
        X = np.ascontiguousarray(X, dtype=dtype)
    y = np.asarray(y, dtype=np.intp)
    return {"X": X, "y": y, "partials": W.initial_partials_of(y, **start)}
