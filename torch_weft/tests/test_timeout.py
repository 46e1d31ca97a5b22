"""An operation past the group's timeout raises, naming the rank, instead of hanging.

Rank 0 calls all_reduce, which the other ranks never call: rank 0's Work must raise a
RuntimeError saying it did not complete within the group's 2 s timeout, and later operations
on that group must fail at once (its state is unknown, as after NCCL's abort). Then every rank
meets at an MPI barrier and exits.

WEFT_TORCH_TEST_DEVICE=cuda: the same on CUDA tensors, where the all_reduce is enqueued and
returns; rank 0 then synchronises its device, which returns once the backend's watchdog has
given up on the call (past the timeout) and stopped weft's kernel, and the Work's wait raises."""
import datetime
import sys
import time

import torch
import torch.distributed as dist
import torch_weft

import test_device

DEV = test_device.pick()
rank, size = torch_weft.init_process_group(timeout=datetime.timedelta(seconds=2))
t = torch.ones(10, device=DEV)
if rank == 0:
    start = time.monotonic()
    try:
        work = dist.all_reduce(t, async_op=True)
        if DEV == "cuda":
            torch.cuda.synchronize()
        work.wait()
        sys.exit("rank 0: all_reduce returned although the others never called it")
    except RuntimeError as e:
        waited = time.monotonic() - start
        if "rank 0" not in str(e) or "did not complete within 2000 ms" not in str(e):
            sys.exit(f"rank 0: unexpected error text: {e}")
        if not 1.5 < waited < 30:
            sys.exit(f"rank 0: raised after {waited:.1f} s, expected about 2 s")
    try:
        dist.all_reduce(torch.ones(1, device=DEV))
        sys.exit("rank 0: an operation on a timed-out group succeeded")
    except RuntimeError as e:
        if "can no longer be used" not in str(e):
            sys.exit(f"rank 0: unexpected error text after the timeout: {e}")
    print("rank 0: all_reduce timed out after 2 s and the group refuses later operations", flush=True)
torch_weft._C.world_barrier()
print(f"rank {rank}: done", flush=True)
