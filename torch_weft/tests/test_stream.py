"""CUDA tensors are stream-ordered: an operation returns to the host before the GPU ran it.

Each rank blocks its current stream with a kernel that spins for about a second
(torch.cuda._sleep), then all-reduces a tensor on that stream. Had the backend waited on the
host for the stream, the call would return with the work complete; it must return with the
work pending, and the result, read on the stream after work.wait(), must be right. The same for
a blocking all_reduce (async_op=False): it too only orders the caller's stream; and for
all_to_all_single, gather, scatter and isend/irecv around a ring, which run as stream-ordered
point-to-point. Exits 77 (skipped) without CUDA.
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


def pending(works, what):
    """Every work must still be pending (the stream is blocked); then waits for them."""
    for w in works:
        if w.is_completed():
            sys.exit(f"rank {rank}: {what} completed while its stream was blocked: the host waited")
    for w in works:
        w.wait()


for n in (1000, 1 << 20):
    # all_to_all_single: rank r sends block q (n values of r * size + q) to rank q.
    inp = torch.cat([torch.full((n,), float(rank * size + q), device="cuda") for q in range(size)])
    out = torch.empty_like(inp)
    torch.cuda._sleep(SPIN)
    pending([dist.all_to_all_single(out, inp, async_op=True)], f"all_to_all_single of {n} floats per rank")
    want_a2a = torch.cat([torch.full((n,), float(q * size + rank), device="cuda") for q in range(size)])
    if not torch.equal(out, want_a2a):
        sys.exit(f"rank {rank}: all_to_all_single of {n} floats gave {out[::n].tolist()}")
    # gather and scatter at the last rank.
    root = size - 1
    mine = torch.full((n,), float(rank + 7), device="cuda")
    got = [torch.empty(n, device="cuda") for _ in range(size)] if rank == root else None
    torch.cuda._sleep(SPIN)
    pending([dist.gather(mine, gather_list=got, dst=root, async_op=True)], f"gather of {n} floats")
    if rank == root:
        for q in range(size):
            if not torch.all(got[q] == q + 7):
                sys.exit(f"rank {rank}: gather of {n} floats gave {got[q][:4].tolist()} from rank {q}")
    pieces = [torch.full((n,), float(100 + q), device="cuda") for q in range(size)] if rank == root else None
    piece = torch.empty(n, device="cuda")
    torch.cuda._sleep(SPIN)
    pending([dist.scatter(piece, scatter_list=pieces, src=root, async_op=True)], f"scatter of {n} floats")
    if not torch.all(piece == 100 + rank):
        sys.exit(f"rank {rank}: scatter of {n} floats gave {piece[:4].tolist()}")
    # isend to the right, irecv from the left, both issued before either is waited for.
    right, left = (rank + 1) % size, (rank - 1) % size
    sent = torch.full((n,), float(rank), device="cuda")
    recvd = torch.empty(n, device="cuda")
    torch.cuda._sleep(SPIN)
    works = [dist.isend(sent, right, tag=5), dist.irecv(recvd, left, tag=5)]
    pending(works, f"isend/irecv of {n} floats")
    if not torch.all(recvd == left):
        sys.exit(f"rank {rank}: irecv of {n} floats gave {recvd[:4].tolist()}, want {left}")
torch.cuda.synchronize()
dist.barrier()
print(f"rank {rank}: stream-ordered all_reduce, all_to_all_single, gather, scatter and isend/irecv checked "
      "(host returned before the GPU ran them)", flush=True)
