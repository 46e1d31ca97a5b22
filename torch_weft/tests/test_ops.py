"""Every process-group operation of the weft backend against a reference computed locally.

Run under mpirun (np 2 and 4). Each rank builds its inputs from its rank, so every rank can
compute what each operation must give. Exits non-zero on the first wrong element.
WEFT_TORCH_TEST_DEVICE=cuda runs every operation on CUDA tensors (GPU local_rank % count;
exits 77, skipped, where there is none).
"""
import sys

import torch
import torch.distributed as dist
import torch_weft

import test_device

DEV = test_device.pick()
rank, size = torch_weft.init_process_group()
checks = 0


def empty(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device=DEV)


def expect(got, want, what, tol=0.0):
    global checks
    got, want = got.cpu(), want.cpu()
    if got.dtype != want.dtype or got.shape != want.shape:
        sys.exit(f"rank {rank}: {what}: got {got.dtype} {tuple(got.shape)}, want {want.dtype} {tuple(want.shape)}")
    if tol:
        ok = torch.allclose(got.double(), want.double(), rtol=tol, atol=tol)
    else:
        ok = torch.equal(got, want)
    if not ok:
        sys.exit(f"rank {rank}: {what}: got {got.tolist()[:8]}, want {want.tolist()[:8]}")
    checks += 1


def data(r, n, dtype, salt=0):
    """Rank r's input: small values, exact in every dtype."""
    v = (torch.arange(n, dtype=torch.int64) * 3 + r * 5 + salt) % 7 + 1
    if dtype == torch.bool:
        return ((v + r) % 2 == 0).to(DEV)
    return v.to(dtype).to(DEV)


def all_inputs(n, dtype, salt=0):
    return [data(r, n, dtype, salt) for r in range(size)]


def reference(op, xs):
    out = xs[0].clone()
    for x in xs[1:]:
        if op == dist.ReduceOp.SUM:
            out = out | x if out.dtype == torch.bool else out + x
        elif op == dist.ReduceOp.PRODUCT:
            out = out & x if out.dtype == torch.bool else out * x
        elif op == dist.ReduceOp.MIN:
            out = torch.minimum(out, x)
        elif op == dist.ReduceOp.MAX:
            out = torch.maximum(out, x)
        elif op == dist.ReduceOp.BAND:
            out = out & x
        elif op == dist.ReduceOp.BOR:
            out = out | x
        elif op == dist.ReduceOp.BXOR:
            out = out ^ x
    return out


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int32, torch.int64, torch.uint8, torch.int8]
ARITH = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
BITWISE = [dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR]

# all_reduce: every op on every dtype it applies to, blocking and async.
for dtype in FLOATS + INTS + [torch.bool]:
    ops = ARITH + (BITWISE if dtype in INTS or dtype == torch.bool else [])
    for op in ops:
        if dtype in (torch.uint8, torch.int8) and op == dist.ReduceOp.PRODUCT:
            continue  # overflows differently per rank count; covered by the wider ints
        n = 37
        t = data(rank, n, dtype)
        dist.all_reduce(t, op=op)
        expect(t, reference(op, all_inputs(n, dtype)), f"all_reduce {op} {dtype}")
for dtype in FLOATS:
    t = data(rank, 1000, dtype)
    work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    work.wait()
    want = (sum(x.double() for x in all_inputs(1000, dtype)) / size).to(dtype)
    expect(t, want, f"all_reduce AVG {dtype}", tol=1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-6)

# A large vector (several MiB) through the same call.
t = data(rank, 3 << 20, torch.float32)
dist.all_reduce(t)
expect(t, reference(dist.ReduceOp.SUM, all_inputs(3 << 20, torch.float32)), "all_reduce 12 MiB")

# all_reduce_coalesced (several tensors, one call).
ts = [data(rank, n, torch.float32, salt=n) for n in (5, 64, 1)]
dist.all_reduce_coalesced(ts)
for n, t in zip((5, 64, 1), ts):
    expect(t, reference(dist.ReduceOp.SUM, all_inputs(n, torch.float32, salt=n)), f"all_reduce_coalesced {n}")

# PyTorch 2.x's coalescing manager with a device: the backend's startCoalescing/endCoalescing
# around two all_reduces (issued together, as all_reduce_coalesced) and a broadcast, waited
# for through the one Work endCoalescing gives back. 1.13 has no such manager.
if int(torch.__version__.split(".")[0]) >= 2:
    ts = [data(rank, n, torch.float32, salt=n) for n in (7, 33)]
    b = data(rank, 9, torch.int32, salt=4)
    with dist._coalescing_manager(device=torch.device(DEV), async_ops=True) as cm:
        for t in ts:
            dist.all_reduce(t)
        dist.broadcast(b, 0)
    cm.wait()
    for n, t in zip((7, 33), ts):
        expect(t, reference(dist.ReduceOp.SUM, all_inputs(n, torch.float32, salt=n)), f"coalesced all_reduce {n}")
    expect(b, data(0, 9, torch.int32, salt=4), "coalesced broadcast")

# broadcast from every root.
for root in range(size):
    t = data(rank, 33, torch.int64)
    dist.broadcast(t, src=root)
    expect(t, data(root, 33, torch.int64), f"broadcast root {root}")

# reduce to every root (MAX; the root's tensor holds the result).
for root in range(size):
    t = data(rank, 21, torch.float64)
    dist.reduce(t, dst=root, op=dist.ReduceOp.MAX)
    if rank == root:
        expect(t, reference(dist.ReduceOp.MAX, all_inputs(21, torch.float64)), f"reduce root {root}")

# all_gather (a list) and all_gather_into_tensor.
outs = [empty(17, dtype=torch.int32) for _ in range(size)]
dist.all_gather(outs, data(rank, 17, torch.int32))
for r in range(size):
    expect(outs[r], data(r, 17, torch.int32), f"all_gather block {r}")
out = empty(size * 9, dtype=torch.bfloat16)
dist.all_gather_into_tensor(out, data(rank, 9, torch.bfloat16))
expect(out, torch.cat(all_inputs(9, torch.bfloat16)), "all_gather_into_tensor")
# In place, as FSDP does it: the input is this rank's chunk of the output.
out = empty(9 * size)
out.narrow(0, 9 * rank, 9).copy_(data(rank, 9, torch.float32))
dist.all_gather_into_tensor(out, out.narrow(0, 9 * rank, 9))
expect(out, torch.cat(all_inputs(9, torch.float32)), "all_gather_into_tensor in place")

# gather and scatter at the last rank.
root = size - 1
gl = [empty(6) for _ in range(size)] if rank == root else None
dist.gather(data(rank, 6, torch.float32), gather_list=gl, dst=root)
if rank == root:
    for r in range(size):
        expect(gl[r], data(r, 6, torch.float32), f"gather block {r}")
out = empty(11, dtype=torch.int64)
sl = [data(100 + r, 11, torch.int64) for r in range(size)] if rank == root else None
dist.scatter(out, scatter_list=sl, src=root)
expect(out, data(100 + rank, 11, torch.int64), "scatter")

# reduce_scatter (a list) and reduce_scatter_tensor: rank r gets block r reduced.
blocks = [data(rank, 8, torch.float32, salt=10 * q) for q in range(size)]
out = empty(8)
dist.reduce_scatter(out, blocks)
expect(out, reference(dist.ReduceOp.SUM, [data(r, 8, torch.float32, salt=10 * rank) for r in range(size)]),
       "reduce_scatter")
inp = torch.cat([data(rank, 8, torch.float32, salt=10 * q) for q in range(size)])
out = empty(8)
dist.reduce_scatter_tensor(out, inp)
expect(out, reference(dist.ReduceOp.SUM, [data(r, 8, torch.float32, salt=10 * rank) for r in range(size)]),
       "reduce_scatter_tensor")
# The output as this rank's chunk of the input.
inp = torch.cat([data(rank, 8, torch.float32, salt=10 * q) for q in range(size)])
dist.reduce_scatter_tensor(inp.narrow(0, 8 * rank, 8), inp)
expect(inp.narrow(0, 8 * rank, 8),
       reference(dist.ReduceOp.SUM, [data(r, 8, torch.float32, salt=10 * rank) for r in range(size)]),
       "reduce_scatter_tensor into its own chunk")

# all_to_all_single, equal and uneven splits (rank r sends q + 1 rows to rank q), and all_to_all.
inp = torch.cat([data(rank, 4, torch.float32, salt=q) for q in range(size)])
out = empty(4 * size)
dist.all_to_all_single(out, inp)
expect(out, torch.cat([data(r, 4, torch.float32, salt=rank) for r in range(size)]), "all_to_all_single")
rows_in = [q + 1 for q in range(size)]
rows_out = [rank + 1] * size
inp = torch.cat([data(rank, 3 * (q + 1), torch.float32, salt=q).view(q + 1, 3) for q in range(size)])
out = empty(sum(rows_out), 3)
dist.all_to_all_single(out, inp, output_split_sizes=rows_out, input_split_sizes=rows_in)
expect(out, torch.cat([data(r, 3 * (rank + 1), torch.float32, salt=rank).view(rank + 1, 3) for r in range(size)]),
       "all_to_all_single with splits")
ins = [data(rank, q + 2, torch.int32, salt=q) for q in range(size)]
outs = [empty(rank + 2, dtype=torch.int32) for _ in range(size)]
dist.all_to_all(outs, ins)
for r in range(size):
    expect(outs[r], data(r, rank + 2, torch.int32, salt=rank), f"all_to_all from {r}")

# barrier, send/recv around a ring, batch_isend_irecv, recv from any source.
dist.barrier()
right, left = (rank + 1) % size, (rank - 1) % size
t = empty(50, dtype=torch.float16)
if rank % 2 == 0:
    dist.send(data(rank, 50, torch.float16), dst=right, tag=3)
    dist.recv(t, src=left, tag=3)
else:
    dist.recv(t, src=left, tag=3)
    dist.send(data(rank, 50, torch.float16), dst=right, tag=3)
expect(t, data(left, 50, torch.float16), "send/recv ring")
t = empty(20, dtype=torch.int64)
reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, data(rank, 20, torch.int64, salt=1), right),
                               dist.P2POp(dist.irecv, t, left)])
for req in reqs:
    req.wait()
expect(t, data(left, 20, torch.int64, salt=1), "batch_isend_irecv")
if DEV == "cuda" and int(torch.__version__.split(".")[0]) >= 2:
    # A batch is one exchange, whatever order its messages are listed in: here every rank lists
    # its receives (from both neighbours) before its sends, which issued one at a time would
    # wait for each other. At np 2 both neighbours are one rank: the two messages match in the
    # order they were listed.
    a, b = empty(30), empty(30)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.irecv, a, left), dist.P2POp(dist.irecv, b, right),
                                   dist.P2POp(dist.isend, data(rank, 30, torch.float32, salt=5), right),
                                   dist.P2POp(dist.isend, data(rank, 30, torch.float32, salt=6), left)])
    if len(reqs) != 1:
        sys.exit(f"rank {rank}: batch_isend_irecv gave {len(reqs)} Works, want one for the coalesced batch")
    reqs[0].get_future().wait()
    expect(a, data(left, 30, torch.float32, salt=5), "batch_isend_irecv both ways, from the left")
    expect(b, data(right, 30, torch.float32, salt=6), "batch_isend_irecv both ways, from the right")
    # A send or receive issued inside a coalescing block runs when the block ends: waited for
    # inside it, it raises; after it, its own Work waits for the exchange.
    c = empty(8, dtype=torch.int32)
    with dist._coalescing_manager(device=torch.device(DEV), async_ops=True) as cm:
        sent = dist.isend(data(rank, 8, torch.int32, salt=7), right)
        got = dist.irecv(c, left)
        if got.is_completed():
            sys.exit("a receive was complete inside its coalescing block")
        try:
            got.wait()
            sys.exit("a receive was waited for inside its coalescing block")
        except RuntimeError as e:
            if "inside the block" not in str(e):
                sys.exit(f"unexpected error text: {e}")
    sent.wait()
    got.wait()
    expect(c, data(left, 8, torch.int32, salt=7), "send/recv in a coalescing block, waited for by their own Works")
    cm.wait()
if DEV == "cuda":
    # Stream-ordered sends are matched by source: a wildcard receive is refused, as NCCL's is.
    try:
        dist.recv(empty(3, dtype=torch.int64), tag=9)
        sys.exit("recv from any source on CUDA tensors was accepted")
    except RuntimeError as e:
        if "not supported" not in str(e):
            sys.exit(f"unexpected error text: {e}")
elif rank == 0:
    got = set()
    for _ in range(size - 1):
        t = empty(3, dtype=torch.int64)
        src = dist.recv(t, tag=9)
        expect(t, data(src, 3, torch.int64), f"recv from any source ({src})")
        got.add(src)
    if got != set(range(1, size)):
        sys.exit(f"recv from any source: senders {sorted(got)}")
else:
    dist.send(data(rank, 3, torch.int64), dst=0, tag=9)

# A subgroup of the even ranks.
evens = list(range(0, size, 2))
sub = dist.new_group(evens, backend="weft")
if rank in evens:
    t = data(rank, 10, torch.float32)
    dist.all_reduce(t, group=sub)
    expect(t, reference(dist.ReduceOp.SUM, [data(r, 10, torch.float32) for r in evens]), "all_reduce in a subgroup")

# Errors are exceptions, not crashes.
try:
    dist.all_reduce(torch.ones(3, dtype=torch.int32, device=DEV), op=dist.ReduceOp.AVG)
    sys.exit("AVG of integer tensors was accepted")
except RuntimeError as e:
    if "weft backend" not in str(e):
        sys.exit(f"unexpected error text: {e}")

dist.barrier()
print(f"rank {rank}: {checks} checks passed on {DEV} tensors", flush=True)
