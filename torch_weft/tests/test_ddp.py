"""DDP on the weft backend matches one process training on the whole batch.

Each rank trains a copy of a small model with DistributedDataParallel (small buckets, so the
gradients go as several all-reduces overlapping the backward pass) on its share of every
step's batch. Rank 0 also trains a plain copy, in one process, on the concatenation of every
rank's share. DDP averages the gradients over the ranks, which is the gradient of the mean
loss over the whole batch, so after every step the parameters must agree within float
tolerance.
"""
import sys

import torch
import torch.distributed as dist
import torch_weft

import test_device
from torch.nn.parallel import DistributedDataParallel as DDP

DEV = test_device.pick()
rank, size = torch_weft.init_process_group()
torch.manual_seed(1234)  # the same initial parameters on every rank


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                               torch.nn.Linear(64, 4))


model = make_model().to(DEV)
reference = make_model().to(DEV)
reference.load_state_dict(model.state_dict())
ddp = DDP(model, bucket_cap_mb=0.005)  # about 1300 floats per bucket: several buckets
opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
loss_fn = torch.nn.MSELoss()
per_rank = 8
for step in range(6):
    g = torch.Generator().manual_seed(step)
    x = torch.randn(size * per_rank, 16, generator=g).to(DEV)
    y = torch.randn(size * per_rank, 4, generator=g).to(DEV)
    mine = slice(rank * per_rank, (rank + 1) * per_rank)
    opt.zero_grad()
    loss_fn(ddp(x[mine]), y[mine]).backward()
    opt.step()
    ref_opt.zero_grad()
    loss_fn(reference(x), y).backward()
    ref_opt.step()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        if not torch.allclose(p, q, rtol=1e-4, atol=1e-5):
            sys.exit(f"rank {rank}: step {step}: {name} differs from one process on the whole batch by "
                     f"{(p - q).abs().max().item():.3g}")
# Every rank holds the same parameters.
flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
lo, hi = flat.clone(), flat.clone()
dist.all_reduce(lo, op=dist.ReduceOp.MIN)
dist.all_reduce(hi, op=dist.ReduceOp.MAX)
if not torch.equal(lo, hi):
    sys.exit(f"rank {rank}: the ranks' parameters differ")
print(f"rank {rank}: DDP over {size} ranks matches one process, 6 steps on {DEV} tensors", flush=True)
