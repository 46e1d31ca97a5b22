"""A rank that dies makes the others' operations raise, naming it. Rank 1 exits without
finishing; every other rank's all_reduce (through a Work's wait, and blocking) must raise a
RuntimeError naming rank 1 instead of hanging. Each survivor prints one line saying so.

WEFT_TORCH_TEST_DEVICE=cuda: the same on CUDA tensors, where calls are stream-ordered. The
all_reduce issued after the death is enqueued and cannot complete; the survivor then
synchronises its device, which returns once the backend's watchdog has found the dead rank and
stopped weft's kernels; the Work's wait and every later call then raise naming rank 1."""
import os
import signal
import time

import torch
import torch.distributed as dist
import torch_weft

import test_device

# torchrun's agent stops the survivors with SIGTERM once it polls rank 1's exit, which may
# come before they have seen the failure. It waits 30 s before SIGKILL; ignoring SIGTERM
# lets the survivors finish within that.
if "TORCHELASTIC_RUN_ID" in os.environ:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

DEV = test_device.pick()
rank, size = torch_weft.init_process_group()
t = torch.ones(1000, device=DEV)
dist.all_reduce(t)
if t[0].item() != size:
    print(f"FAIL rank {rank}: all_reduce gave {t[0].item()}", flush=True)
if rank == 1:
    if DEV == "cuda":
        torch.cuda.synchronize()
    time.sleep(0.2)
    os._exit(3)
time.sleep(0.5)  # rank 1 is gone by now
raised = 0
work = None
for what in ("all_reduce(async_op=True).wait()", "all_reduce"):
    try:
        if what == "all_reduce":
            dist.all_reduce(t)
        else:
            work = dist.all_reduce(t, async_op=True)
            if DEV == "cuda":
                torch.cuda.synchronize()
            work.wait()
        if DEV == "cuda":
            torch.cuda.synchronize()
        print(f"FAIL rank {rank}: {what} with a dead rank succeeded", flush=True)
    except RuntimeError as e:
        if "rank 1" in str(e):
            print(f"rank {rank}: {what}: {e}", flush=True)
            raised += 1
        else:
            print(f"FAIL rank {rank}: {what} raised without naming rank 1: {e}", flush=True)
if raised == 2:
    print(f"rank {rank}: every operation raised naming rank 1", flush=True)
# Stay until every survivor has seen rank 1's failure: a survivor that left early would be
# the terminated rank another survivor's collective reports.
time.sleep(3)
os._exit(0)
