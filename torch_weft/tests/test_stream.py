"""CUDA tensors are stream-ordered: a collective returns to the host before the GPU ran it.

Each rank blocks its current stream with a kernel that spins for about a second
(torch.cuda._sleep), then all-reduces a tensor on that stream. Had the backend waited on the
host for the stream, the call would return with the work complete; it must return with the
work pending, and the result, read on the stream after work.wait(), must be right. The same for
a blocking all_reduce (async_op=False): it too only orders the caller's stream. Exits 77
(skipped) without CUDA.
"""
import sys

import torch
import torch.distributed as dist
import torch_weft

import test_device

test_device.pick("cuda")
rank, size = torch_weft.init_process_group()
SPIN = int(2e9)  # clock cycles: about a second
want = size * (size + 1) / 2

for n in (1000, 1 << 22):
    x = torch.full((n,), float(rank + 1), device="cuda")
    dist.all_reduce(x)  # the first call makes the stream communicator; not timed
    x.fill_(float(rank + 1))
    torch.cuda._sleep(SPIN)
    work = dist.all_reduce(x, async_op=True)
    if work.is_completed():
        sys.exit(f"rank {rank}: all_reduce of {n} floats completed while its stream was blocked: the host waited")
    work.wait()
    y = x.clone()  # on the current stream, after the wait
    torch.cuda.synchronize()
    if not torch.all(y == want):
        sys.exit(f"rank {rank}: all_reduce of {n} floats gave {y[:4].tolist()}, want {want}")
    x.fill_(float(rank + 1))
    torch.cuda._sleep(SPIN)
    dist.all_reduce(x)
    done = torch.cuda.Event()
    done.record()
    if done.query():
        sys.exit(f"rank {rank}: a blocking all_reduce of {n} floats waited on the host for the stream")
    torch.cuda.synchronize()
    if not torch.all(x == want):
        sys.exit(f"rank {rank}: blocking all_reduce of {n} floats gave {x[:4].tolist()}, want {want}")
dist.barrier()
print(f"rank {rank}: stream-ordered all_reduce checked (host returned before the GPU ran it)", flush=True)
