"""weft's torch.distributed backend.

    import torch_weft                      # registers the backend "weft"
    torch_weft.init_process_group()        # rank and size from the launch

Under mpirun or srun weft bootstraps through PMIx: rank and size come from the launch, no store
is needed. Under torchrun (no PMIx) it bootstraps through torchrun's store: rank and size come
from torchrun's environment, and weft exchanges its addresses through the store, so
torch.distributed.init_process_group("weft") works as it does for any backend.
"""
import atexit
import datetime
import os

import torch
import torch.distributed as dist

from . import _C

__all__ = ["init_process_group", "world", "LaunchStore"]


def _create(opts, pg_options=None):
    timeout = opts.timeout
    if isinstance(timeout, datetime.timedelta):
        timeout_ms = int(timeout.total_seconds() * 1000)
    else:
        timeout_ms = int(float(timeout) * 1000)
    ranks = list(opts.global_ranks_in_group or [])
    if not ranks and not _launched_with_pmix() and not _C.mpi_initialized():
        # torchrun and other launches without PMIx: weft bootstraps through torch's store.
        _C.use_store(opts.store, opts.group_rank, opts.group_size)
    return _C.create(opts.group_rank, opts.group_size, timeout_ms, ranks, _cuda_device())


def _cuda_device():
    # The device this rank has set up (torch.cuda.set_device initialises CUDA): where every rank
    # of the group has one, its CUDA operations are stream-ordered from the first, point-to-point
    # included. Else the first collective on CUDA tensors sets that up.
    if _C.cuda and torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return -1


def _launched_with_pmix():
    return "PMIX_RANK" in os.environ


def _launched_with_torchrun():
    return not _launched_with_pmix() and all(k in os.environ for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR"))


def _register():
    # PyTorch 2.x asks which device types a backend serves (one ProcessGroup holds a backend
    # per type); 1.13 has no such argument.
    devices = ["cpu", "cuda"] if _C.cuda else ["cpu"]
    try:
        dist.Backend.register_backend("weft", _create, extended_api=True, devices=devices)
    except TypeError:
        dist.Backend.register_backend("weft", _create, extended_api=True)


_register()


class LaunchStore(dist.Store):
    """The store init_process_group passes. Rank and size come from the MPI launch, so there is
    nothing to rendezvous; the keys live in this process only. PyTorch 1.13 still runs a
    barrier through the store whenever it makes a group (every rank adds 1 to a key, then polls
    with add(key, 0) until the count is the world size): here adding to such a key is an MPI
    barrier over the launch, after which the count is the world size."""

    _BARRIER_PREFIX = "store_based_barrier_key"

    def __init__(self, size):
        super().__init__()
        self._size = size
        self._data = {}

    def set(self, key, value):
        self._data[key] = value if isinstance(value, bytes) else str(value).encode()

    def get(self, key):
        if key not in self._data:
            raise RuntimeError(f"weft backend: key {key!r} is not in the launch store (it is process-local)")
        return self._data[key]

    def add(self, key, value):
        if key.startswith(self._BARRIER_PREFIX):
            if value:
                _C.world_barrier()
                self._data[key] = str(self._size).encode()
            return int(self._data.get(key, b"0"))
        count = int(self._data.get(key, b"0")) + value
        self._data[key] = str(count).encode()
        return count

    def check(self, keys):
        return all(k in self._data for k in keys)

    def delete_key(self, key):
        return self._data.pop(key, None) is not None

    def num_keys(self):
        return len(self._data)

    def wait(self, keys, timeout=None):
        if not self.check(keys):
            raise RuntimeError(f"weft backend: keys {keys} are not in the launch store (it is process-local)")


def world():
    """(rank, size) of the MPI launch (initialises MPI on first use)."""
    return _C.world()


def init_process_group(timeout=datetime.timedelta(minutes=30)):
    """The default process group on weft, its rank and size taken from the launch: mpirun or
    srun (PMIx), or torchrun (its environment and store)."""
    if _launched_with_torchrun():
        dist.init_process_group("weft", timeout=timeout)
        return dist.get_rank(), dist.get_world_size()
    rank, size = _C.world()
    dist.init_process_group("weft", store=LaunchStore(size), rank=rank, world_size=size, timeout=timeout)
    return rank, size


@atexit.register
def _finalize():
    if dist.is_initialized():
        dist.destroy_process_group()
    _C.finalize()
