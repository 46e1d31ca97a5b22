"""A rank that dies makes the others' operations raise, naming it. Rank 1 exits without
finishing; every other rank's all_reduce (blocking, and through a Work's wait) must raise a
RuntimeError naming rank 1 instead of hanging. Each survivor prints one line saying so."""
import os
import time

import torch
import torch.distributed as dist
import torch_weft

rank, size = torch_weft.init_process_group()
t = torch.ones(1000)
dist.all_reduce(t)
if t[0].item() != size:
    print(f"FAIL rank {rank}: all_reduce gave {t[0].item()}", flush=True)
if rank == 1:
    time.sleep(0.2)
    os._exit(3)
raised = 0
for what in ("all_reduce", "all_reduce(async_op=True).wait()"):
    try:
        if what == "all_reduce":
            dist.all_reduce(t)
        else:
            dist.all_reduce(t, async_op=True).wait()
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
