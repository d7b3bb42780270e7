"""The client-side checkpoint of a DS-MLR fit: the class blocks (with
their AdaGrad state) and the rows' partial log-partitions of the last
completed epoch, and of the best epoch when held-out rows judge the fit
and the best is another epoch.

Kept on the client, not on the workers' disks: the client is the one
process whose loss ends the fit anyway, while a lost worker (a preempted
or crashed machine) takes its local disk with it, and its replacement may
start on another host. ``checkpoint=True`` keeps the arrays in the
client's memory (W once, as the gathered model of ``to_local`` would);
``checkpoint='<directory>'`` writes them there shard by shard, so that the
client never holds more than one class block: for a W larger than the
client's memory (the directory may be on a shared filesystem).
"""

import os
import shutil
import tempfile

import numpy as np


class Checkpoint:
    """Named groups of arrays in slots (one slot per kept epoch), in memory
    (``directory=None``) or as one ``.npz`` file per group in a folder of
    ``directory``. ``commit(slot, keep)`` makes a complete slot the one
    that ``load`` reads and drops the others but those in ``keep`` (the
    best epoch's, which ``load(name, slot)`` reads): a worker lost while a
    slot is written leaves the previous one intact."""

    def __init__(self, directory=None):
        self.directory = None
        self.committed = None
        self._memory = {}
        if directory is not None:
            os.makedirs(directory, exist_ok=True)
            # a folder of this fit inside the user's: two fits never share
            # files, and it is removed at the end of the fit
            self.directory = tempfile.mkdtemp(prefix="sksoftmax-ckpt-",
                                              dir=directory)

    def _path(self, slot, name):
        return os.path.join(self.directory, f"{slot}-{name}.npz")

    def save(self, slot, name, arrays):
        if self.directory is None:
            self._memory[slot, name] = [np.array(a, copy=True) for a in arrays]
            return
        np.savez(self._path(slot, name), *arrays)

    def commit(self, slot, keep=()):
        self.committed = slot
        kept = {slot, *keep}
        if self.directory is None:
            for key in [k for k in self._memory if k[0] not in kept]:
                del self._memory[key]
            return
        for f in os.listdir(self.directory):
            if int(f.split("-", 1)[0]) not in kept:
                os.remove(os.path.join(self.directory, f))

    def load(self, name, slot=None):
        slot = self.committed if slot is None else slot
        if self.directory is None:
            return self._memory[slot, name]
        with np.load(self._path(slot, name)) as f:
            return [f[f"arr_{i}"] for i in range(len(f.files))]

    def close(self):
        self._memory = {}
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None
