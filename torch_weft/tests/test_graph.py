"""CUDA tensors inside CUDA graphs: operations captured with torch.cuda.graph (global capture
mode, its default) replay with new data each time.

Captured: all_reduce at 1000 and 1 Mi floats, all_gather_into_tensor, reduce_scatter_tensor,
broadcast, and a ring through batch_isend_irecv; each graph replays three times with new inputs
and every element is checked. Before one capture an asynchronous all_reduce is left for the
backend's watchdog to look at while the capture runs (its event queries must not invalidate
the capture). Exits 77 (skipped) without CUDA.
"""
import sys
import time

import torch
import torch.distributed as dist
import torch_weft

import test_device

test_device.pick("cuda")
rank, size = torch_weft.init_process_group()
REPLAYS = 3


def fail(what):
    sys.exit(f"rank {rank}: {what}")


def fill_rank(t, k):
    t.fill_(float(rank + 1 + 10 * k))


def captured(body, just_before=None):
    """body() captured into a graph, after one eager run on a side stream (as PyTorch asks);
    just_before() runs right before the capture begins."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    if just_before:
        just_before()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph


# all_reduce, with a pending operation for the watchdog during the first capture.
for n in (1000, 1 << 20):
    x = torch.empty(n, device="cuda")
    fill_rank(x, 0)
    pending = torch.ones(16, device="cuda")

    def leave_pending():
        # Issued right before the capture: the watchdog still lists it at its next look, which
        # comes during the capture (it looks every 100 ms), and queries its event then.
        dist.all_reduce(pending, async_op=True)

    def reduce_body():
        dist.all_reduce(x)
        time.sleep(0.3)

    graph = captured(reduce_body, leave_pending)
    for k in range(REPLAYS):
        fill_rank(x, k)
        graph.replay()
        torch.cuda.synchronize()
        want = size * (size + 1) / 2 + 10 * k * size
        if not torch.all(x == want):
            fail(f"captured all_reduce of {n} floats, replay {k}: got {x[:4].tolist()}, want {want}")

# all_gather_into_tensor and reduce_scatter_tensor.
n = 1 << 16
mine = torch.empty(n, device="cuda")
gathered = torch.empty(n * size, device="cuda")
scatter_in = torch.empty(n * size, device="cuda")
scatter_out = torch.empty(n, device="cuda")


def gather_scatter_body():
    dist.all_gather_into_tensor(gathered, mine)
    dist.reduce_scatter_tensor(scatter_out, scatter_in)


graph = captured(gather_scatter_body)
for k in range(REPLAYS):
    fill_rank(mine, k)
    # Block q of rank r's input holds r + q + k: rank q's result is the sum over r.
    scatter_in.copy_(torch.cat([torch.full((n,), float(rank + q + k), device="cuda") for q in range(size)]))
    graph.replay()
    torch.cuda.synchronize()
    for q in range(size):
        got = gathered[q * n:(q + 1) * n]
        if not torch.all(got == q + 1 + 10 * k):
            fail(f"captured all_gather_into_tensor, replay {k}: block {q} is {got[:4].tolist()}")
    want = sum(r + rank + k for r in range(size))
    if not torch.all(scatter_out == want):
        fail(f"captured reduce_scatter_tensor, replay {k}: got {scatter_out[:4].tolist()}, want {want}")

# broadcast from the last rank, and a ring through batch_isend_irecv.
root = size - 1
right, left = (rank + 1) % size, (rank - 1) % size
cast = torch.empty(4096, device="cuda")
sent = torch.empty(1 << 18, device="cuda")
recvd = torch.empty(1 << 18, device="cuda")


def bcast_ring_body():
    dist.broadcast(cast, src=root)
    ops = [dist.P2POp(dist.isend, sent, right), dist.P2POp(dist.irecv, recvd, left)]
    for w in dist.batch_isend_irecv(ops):
        w.wait()


graph = captured(bcast_ring_body)
for k in range(REPLAYS):
    cast.fill_(float(100 + k) if rank == root else -1.0)
    fill_rank(sent, k)
    recvd.fill_(-1.0)
    graph.replay()
    torch.cuda.synchronize()
    if not torch.all(cast == 100 + k):
        fail(f"captured broadcast, replay {k}: got {cast[:4].tolist()}, want {100 + k}")
    if not torch.all(recvd == left + 1 + 10 * k):
        fail(f"captured batch_isend_irecv ring, replay {k}: got {recvd[:4].tolist()}, want {left + 1 + 10 * k}")

torch.cuda.synchronize()
dist.barrier()
print(f"rank {rank}: captured all_reduce, all_gather_into_tensor, reduce_scatter_tensor, broadcast and a "
      f"batch_isend_irecv ring replayed {REPLAYS} times each, every element checked", flush=True)
