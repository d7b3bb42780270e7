"""The fit of DistributedSoftmaxClassifier: DS-MLR epochs over a ring of
workers, parameter mixing, the held-out rows and the
stopping (``_stopping.Stopping``), and the checkpoints and resumption
after a lost worker (the design: ``_estimator.py``'s module docstring)."""

import threading
import time
import warnings

import numpy as np
from sklearn.utils import check_random_state

from .._shared._codes import Status
from .._stopping import Stopping
from . import _worker as W
from ._pilot import cluster_pilot

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


class _Ring:
    """The model a DS-MLR epoch starts from, as ``Stopping`` snapshots and
    restores it: the class blocks (futures), the rows' partial
    log-partitions (futures), the ring's offset (block q on worker
    ``ring[(q - offset) % P]``) and the checkpoint slot that holds them
    (the epoch; 0: the start, W = 0, remade by tasks).

    A snapshot keeps the blocks' futures alive on the workers only with
    ``keep_blocks`` (held-out rows, or no checkpoint): a second copy of W
    while the best epoch is not the current one. Without, a restore reads
    the checkpoint, and the workers hold only the blocks in flight."""

    def __init__(self, fit, client, ring, rows, ckpt, source, keep_blocks):
        self.fit, self.ckpt, self.source = fit, ckpt, source
        self.keep_blocks = keep_blocks
        self.rebind(client, ring, rows)
        self.shards = self.partials = None
        self.offset = self.slot = 0

    def rebind(self, client, ring, rows):
        """The cluster, ring and row blocks (anew after a resumption)."""
        self.client, self.ring, self.rows = client, ring, rows

    def propose(self, shards, partials, offset, slot):
        """An epoch's model becomes the current one (``Stopping.check``
        then keeps, snapshots or undoes it)."""
        self.shards, self.partials = shards, partials
        self.offset, self.slot = offset, slot

    def snapshot(self):
        return {
            "slot": self.slot, "offset": self.offset,
            "shards": self.shards if self.keep_blocks and self.slot else None,
            "partials": self.partials if self.slot else None,
        }

    @staticmethod
    def stripped(snap):
        """A snapshot without futures (which a lost worker may have taken
        along): restored from the checkpoint."""
        return dict(snap, shards=None, partials=None)

    def restore(self, snap):
        client, ring, P = self.client, self.ring, len(self.ring)
        self.offset, self.slot = snap["offset"], snap["slot"]
        if snap["shards"] is not None:
            self.shards = list(snap["shards"])
        else:
            self.shards = self.fit._restore_shards(
                client, self.ckpt, self.slot, ring, self.offset, self.source
            )
        if snap["partials"] is not None:
            self.partials = list(snap["partials"])
        elif self.slot:
            self.partials = [
                client.scatter(
                    self.ckpt.load(f"partials{p}", self.slot)[0],
                    workers=[ring[p]], hash=False,
                )
                for p in range(P)
            ]
        else:
            self.partials = [
                client.submit(W.initial_partials, r, workers=[w], pure=False)
                for r, w in zip(self.rows, ring)
            ]

    def holders(self):
        """The worker holding each class block."""
        P = len(self.ring)
        return [self.ring[(q - self.offset) % P] for q in range(P)]


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

    @staticmethod
    def _row_plan(sizes, y_enc, sample_weight, held_out, P):
        """Which rows of each input block train and which are held out.

        ``held_out``: the held-out rows (indices) or None. Returns per
        input block (training rows: index or None for all, their labels
        and weights; held-out rows: index, labels, weights), the input
        blocks of each of the P workers (round robin) and the held-out
        rows' indices in the order the workers' losses are gathered. Rows
        of zero weight are left out of the training blocks (the kernel
        would skip them)."""
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        is_val = np.zeros(y_enc.shape[0], dtype=bool)
        if held_out is not None:
            is_val[held_out] = True
        blocks = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            train = np.flatnonzero(~is_val[lo:hi] & (sample_weight[lo:hi] > 0))
            val = np.flatnonzero(is_val[lo:hi])
            index = None if train.shape[0] == hi - lo else train
            blocks.append((
                (index, y_enc[lo + train], sample_weight[lo + train]),
                (val, y_enc[lo + val], sample_weight[lo + val]),
            ))
        mine = [list(range(p, len(blocks), P)) for p in range(P)]
        order = np.concatenate(
            [bounds[i] + blocks[i][1][0] for p in range(P) for i in mine[p]]
        ).astype(np.intp)
        # the held-out rows' weights, normalised (all zero: equal), so that
        # their losses @ p is the weighted mean (as SoftmaxClassifier's)
        p = sample_weight[order]
        if p.sum() <= 0:
            p = np.ones_like(p)
        return {"blocks": blocks, "mine": mine, "held_out": order,
                "p": p / max(p.sum(), 1e-300)}

    def _place_rows(self, client, blocks, plan, dtype, intercept):
        """The P row blocks (the input blocks' training rows, assigned round
        robin to the workers, concatenated there with their encoded labels
        and weights), their rows' starting log-partitions per class block
        (W = 0: the block's log sum of exp(c_k)), as futures pinned to
        ``shard_workers_``'s worker p; and the held-out rows, kept on the
        same workers: (X, labels) futures of the workers that have some
        (None without held-out rows)."""
        rows, partials, val_X, val_y = [], [], [], []
        start = {
            "intercept": np.asarray(intercept, np.float64),
            "ranges": np.asarray(self.class_ranges_, dtype=np.intp),
        }
        for p, mine in enumerate(plan["mine"]):
            w = self.shard_workers_[p]
            pairs = [
                client.submit(W.pair, blocks[i], *plan["blocks"][i][0][1:],
                              plan["blocks"][i][0][0], pure=False)
                for i in mine
            ]
            r = client.submit(
                _row_block, start, dtype, *pairs, workers=[w], pure=False
            )
            rows.append(r)
            partials.append(
                client.submit(W.initial_partials, r, workers=[w], pure=False)
            )
            held = [
                client.submit(W.pair, blocks[i], *plan["blocks"][i][1][1:],
                              plan["blocks"][i][1][0], pure=False)
                for i in mine if plan["blocks"][i][1][0].shape[0]
            ]
            if held:
                h = client.submit(W.held_out_rows, dtype, *held, workers=[w],
                                  pure=False)
                val_X.append(client.submit(W.first, h, workers=[w], pure=False))
                val_y.append(client.submit(W.second, h, workers=[w], pure=False))
        held_out = None
        if plan["held_out"].shape[0]:
            held_out = {"X": val_X, "y": val_y, "p": plan["p"]}
        return rows, partials, held_out

    # ------------------------------------------------------------ stopping
    def _stopping(self, eta, held_out, model=None, **callables):
        """The fit's ``Stopping``: on the held-out rows' log-loss (a check
        that does not improve halves the step, one worse beyond their
        noise is undone first), or without them on the training objective
        (a check above the best is undone and halves the step)."""
        return Stopping(
            model, eta=eta, tol=self.tol, patience=self.n_iter_no_change,
            weights=None if held_out is None else held_out["p"],
            halve_stalled=held_out is not None, **callables,
        )

    def _monitor(self, client, ring, objective, held_out, shards, workers):
        """(the held-out rows' log-losses, their weighted mean) of the model
        of ``shards`` (on ``workers``; None: anywhere), computed by the
        shards where they are; (None, ``objective``) without held-out rows
        or when the epoch overflowed."""
        if held_out is None or not np.isfinite(objective):
            return None, objective
        merged = self._merged_stats(
            client, held_out["X"], held_out["y"], shards, workers
        )
        nll = [client.submit(W.merged_nll, m, pure=False) for m in merged]
        rows = np.concatenate(self._collect(client, ring, nll))
        return rows, float(rows @ held_out["p"])

    def _record(self, epoch, tic, decision, objective, monitored, eta, next_eta):
        """A kept epoch's training objective in ``loss_curve_`` and
        held-out log-loss in ``validation_loss_``; with ``verbose``, the
        epoch's line."""
        held_out = self.validation_loss_ is not None
        if decision != "undone":
            self.loss_curve_.append(float(objective))
            if held_out:
                self.validation_loss_.append(float(monitored))
        if self.verbose:
            seconds = time.perf_counter() - tic
            line = f"Epoch {epoch + 1}: {seconds:.3f} s, objective {objective:.6g}"
            if held_out:
                line += f", held-out log-loss {monitored:.6g}"
            line += f", step {eta:.3g}"
            if decision == "undone":
                line += ", worse: undone"
            if next_eta != eta:
                line += f"; step -> {next_eta:.3g}"
            print(line)

    def _finish(self, stopping):
        """The end of the epochs: back to the best model, the fitted
        attributes of the stopping; a warning when the starting model is
        the one kept."""
        self.best_iter_ = stopping.finish()
        self.eta_ = stopping.eta
        if self.best_iter_ > 0:
            return
        if self.validation_loss_ is None:
            why = ("every epoch overflowed or raised the objective, the "
                   "model is the starting one; pass a smaller eta0.")
        else:
            why = ("no epoch lowered the held-out log-loss of the starting "
                   "model (the class prior), which is the model kept.")
        warnings.warn(f"DistributedSoftmaxClassifier: {why}",
                      _convergence_warning())

    def _fit_mixing(self, client, rows, shards, intercept, K, P, eta, start,
                    held_out):
        """Iterative parameter mixing: every worker runs one epoch of the
        exact solver on its rows from the mixed W, then W and b are
        averaged (one W per worker travels each way per epoch). The best
        model kept by the stopping is the mixed W and the workers' solver
        states of its epoch."""
        workers = self.shard_workers_
        rng = check_random_state(self.random_state)
        model = {
            "states": [
                client.submit(
                    W.mix_setup, rows[p], K, intercept, eta, float(self.alpha),
                    bool(self.fit_intercept), self.n_jobs,
                    workers=[workers[p]], pure=False,
                )
                for p in range(P)
            ],
            "mixed": None,
        }
        stopping = self._stopping(
            eta, held_out, snapshot=lambda: dict(model), restore=model.update
        )
        stopping.start(*start)
        self.loss_curve_ = []
        self.validation_loss_ = None if held_out is None else []
        self.n_iter_ = 0
        for epoch in range(self.max_iter):
            tic = time.perf_counter()
            eta = stopping.eta
            seeds = rng.randint(0, 2**31 - 1, size=P)
            results = [
                client.submit(
                    W.mix_epoch, model["states"][p], rows[p], model["mixed"],
                    eta, int(seeds[p]), bool(self.shuffle),
                    workers=[workers[p]], pure=False,
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
                loss = sum(s[0] for s in sums) / max(
                    sum(s[1] for s in sums), 1e-300
                )
                objective = loss + 0.5 * self.alpha * sq
                # the held-out rows scored by the mixed model where it is
                whole = [] if held_out is None else [client.submit(
                    W.mixed_shard, new_mixed, 0, K, self.n_jobs, pure=False
                )]
                val_rows, monitored = self._monitor(
                    client, workers, objective, held_out, whole, [None]
                )
                del whole
            except _WorkerLost as lost:
                raise RuntimeError(
                    f"{lost} strategy='mixing' does not resume after a lost "
                    "worker: refit (strategy='dsmlr' does, from its "
                    "checkpoints)."
                ) from lost
            self.n_iter_ = epoch + 1
            model["states"] = [
                client.submit(W.first, r, workers=[workers[p]], pure=False)
                for p, r in enumerate(results)
            ]
            model["mixed"] = new_mixed
            del results, new_mixed
            decision = stopping.check(monitored, val_rows)
            self._record(epoch, tic, decision, objective, monitored, eta,
                         stopping.eta)
            if stopping.stop:
                break
        else:
            self._warn_max_iter()
        self._finish(stopping)
        mixed = model["mixed"]
        if mixed is None:
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

    def _warn_max_iter(self):
        """The ConvergenceWarning of a fit that used up ``max_iter``."""
        if self.max_iter > 1 and self.tol is not None:
            warnings.warn(
                f"DistributedSoftmaxClassifier: max_iter={self.max_iter} "
                "reached before the "
                + ("held-out log-loss" if self.validation_loss_ is not None
                   else "objective")
                + " stopped improving.",
                _convergence_warning(),
            )

    def _eta(self, client, rows, partials, P, dtype, intercept):
        if self.eta0 != "auto":
            return float(self.eta0)
        return cluster_pilot(self, client, rows, partials, P, dtype, intercept)

    def _fit_epochs(self, client, held, eta, P, ckpt, source, held_out, start):
        """DS-MLR's epochs, each kept one checkpointed (``ckpt``); a lost
        worker makes the loop resume from the last completed epoch.
        ``held``: [row blocks, their partial log-partitions], emptied
        here; ``held_out``: the held-out rows on the workers (None: the
        stopping is on the training objective); ``start``: the starting
        model's (loss, per-row held-out losses)."""
        ring = list(self.shard_workers_)
        n_workers = len(set(ring))
        # the blocks of an epoch's start stay on the workers only when a
        # snapshot of the stopping holds them: with held-out rows (the
        # best epoch's) or without a checkpoint (the undo's)
        model = _Ring(self, client, ring, held[0], ckpt, source,
                      keep_blocks=held_out is not None or ckpt is None)
        model.partials = held[1]
        held.clear()
        # the class blocks start at zero, made on their workers by tasks
        model.shards = self._zero_shards(client, source[2], source[3])
        stopping = self._stopping(eta, held_out, model)
        stopping.start(*start)
        rng = check_random_state(self.random_state)
        self.loss_curve_ = []
        self.validation_loss_ = None if held_out is None else []
        self.n_iter_ = 0
        epoch = 0
        # the loop's state after the last completed epoch, the point a lost
        # worker resumes from (no futures: the checkpoint's slots)
        done = self._loop_state(epoch, rng, stopping, model)
        failures = 0
        # a test hook (not a parameter): called as hook(self, epoch) after
        # each completed epoch
        hook = getattr(self, "_after_epoch", None)
        while epoch < self.max_iter:
            try:
                tic = time.perf_counter()
                eta, offset = stopping.eta, model.offset
                seeds = rng.randint(0, 2**63 - 1, size=(P, P), dtype=np.int64)
                blocks, ends, new_partials = self._submit_epoch(
                    client, ring, model.rows, model.partials, model.shards,
                    seeds, eta, offset, P,
                )
                # the epoch's start leaves the workers as the epoch reads
                # it, unless a snapshot holds it
                model.shards = None
                # block q ends the epoch on the worker of round P - 1
                holders = [ring[(q - offset + 1) % P] for q in range(P)]
                objective = self._epoch_objective(
                    client, ring, blocks, ends, holders
                )
                val_rows, monitored = self._monitor(
                    client, ring, objective, held_out, blocks, holders
                )
                self.n_iter_ = epoch + 1
                model.propose(blocks, new_partials, (offset - 1) % P, epoch + 1)
                # an undone epoch's blocks leave the workers now, not when
                # the next epoch rebinds these names
                blocks = ends = new_partials = None
                decision = stopping.check(monitored, val_rows)
                self._record(epoch, tic, decision, objective, monitored, eta,
                             stopping.eta)
                if decision != "undone" and ckpt is not None:
                    # (and the best epoch's slot, when it is another)
                    self._save_checkpoint(
                        client, ring, ckpt, epoch + 1, model.shards,
                        model.partials, stopping.best_snapshot["slot"],
                    )
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
                epoch = done["epoch"]
                warnings.warn(
                    f"DistributedSoftmaxClassifier: {lost} Resuming from the "
                    f"checkpoint of epoch {epoch} (the last completed).",
                    RuntimeWarning,
                )
                rng.set_state(done["rng"])
                self.loss_curve_ = list(done["curve"])
                if held_out is not None:
                    self.validation_loss_ = list(done["validation"])
                self.n_iter_ = epoch
                client, ring, rows, held_out = self._resume(
                    client, source, P, n_workers, held_out
                )
                model.rebind(client, ring, rows)
                model.restore(done["model"])
                stopping.set_state(done["stopping"])
                continue
            failures = 0
            epoch += 1
            done = self._loop_state(epoch, rng, stopping, model)
            # the worker holding each class block now
            self._ring_holders = model.holders()
            if hook is not None:
                hook(self, epoch)
            if stopping.stop:
                break
        else:
            self._warn_max_iter()
        self._finish(stopping)
        self.shard_workers_ = model.holders()
        self._shards = model.shards

    def _loop_state(self, epoch, rng, stopping, model):
        """What a resumption restores, without futures (the models are in
        the checkpoint's slots)."""
        state = stopping.state()
        state["snap"] = _Ring.stripped(state["snap"])
        return {
            "epoch": epoch, "rng": rng.get_state(), "stopping": state,
            "model": _Ring.stripped(model.snapshot()),
            "curve": list(self.loss_curve_),
            "validation": list(self.validation_loss_ or ()),
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

    def _save_checkpoint(self, client, ring, ckpt, epoch, shards, partials,
                         best):
        """The kept epoch's class blocks (one at a time) and the rows'
        partial log-partitions, written to a new slot that replaces the
        previous one once complete (the slot ``best`` is kept)."""
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
        ckpt.commit(epoch, keep=(best,))

    def _restore_shards(self, client, ckpt, slot, ring, offset, source):
        """The class blocks of the checkpoint's ``slot`` (zeros for 0, the
        start), block q placed on worker (q - offset) mod P of the ring."""
        P = len(ring)
        where = [ring[(q - offset) % P] for q in range(P)]
        if not slot:
            self.shard_workers_ = where
            return self._zero_shards(client, source[2], source[3])
        shards = []
        for q, ((lo, _), w) in enumerate(zip(self.class_ranges_, where)):
            arrays = client.scatter(ckpt.load(f"shard{q}", slot), workers=[w],
                                    hash=False)
            shards.append(client.submit(
                W.shard_from_arrays, lo, self.n_jobs, *arrays,
                workers=[w], pure=False,
            ))
        return shards

    def _resume(self, client, source, P, n_workers, held_out):
        """The fit's rows on the workers rebuilt after a loss: wait (up to
        RESUME_WAIT seconds) for the cluster to have its workers back (a
        nanny restarts a dead worker), then place the row blocks and the
        held-out rows anew on the workers there (from X: in-memory blocks
        were scattered and lost with their worker). The models come back
        from the checkpoint (``_Ring.restore``)."""
        X, plan, dtype, intercept, n_blocks = source
        try:
            client.wait_for_workers(n_workers, timeout=RESUME_WAIT)
        except TimeoutError:
            pass
        workers = self._workers(client)
        ring = [workers[p % len(workers)] for p in range(P)]
        self.shard_workers_ = ring
        blocks, _ = self._row_blocks(client, X, n_blocks)
        rows, _, again = self._place_rows(client, blocks, plan, dtype, intercept)
        return client, ring, rows, again


def _convergence_warning():
    from sklearn.exceptions import ConvergenceWarning

    return ConvergenceWarning


def _row_block(start, dtype, *pairs):
    """A worker's row block from its (X, y_enc, sample_weight) pieces: one
    X (CSR or dense, ``dtype``), the labels, the weights, and each row's
    view of every class block at W = 0 (``start``: the intercepts and the
    blocks' ranges; ``W.initial_partials_of``)."""
    X, y, w = W.concat_rows(*pairs)
    y = np.asarray(y, dtype=np.intp)
    return {
        "X": W.rows_as(X, dtype), "y": y, "w": np.asarray(w, np.float64),
        "partials": W.initial_partials_of(y, **start),
    }
