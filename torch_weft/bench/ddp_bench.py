"""DDP step time of real model architectures on the weft backend and on Gloo or NCCL.

    PYTHONPATH=build/python mpirun -np 2 python3 torch_weft/bench/ddp_bench.py \
        [--models resnet50,gpt2s] [--buckets 1,25,100] [--steps 3] [--backends weft,gloo]
        [--device cpu|cuda] [--batch N]

Models, randomly initialised, synthetic data:
  resnet50  ResNet-50 (bottleneck blocks 3-4-6-3, 25.6 M parameters), 2 images of 3x128x128
            per rank and step
  gpt2s     a GPT-2-small-sized decoder (12 layers, width 768, 12 heads, 50257-token
            vocabulary, 124 M parameters), 1 sequence of 64 tokens per rank and step
Per model, backend and bucket size: the median over --steps steps (after one warm-up step) of
forward + backward + optimizer step, and the same with DDP's no_sync() (compute alone, no
communication) for reference, and all-reduce after backward: the same backward under
no_sync(), then one all-reduce of every gradient flattened (no overlap). Gloo and NCCL
rendezvous through a TCP store on 127.0.0.1. --device cuda puts each rank on GPU
local_rank % count (ranks sharing a GPU need MPS) and times each step to the end of its GPU
work; --batch scales the per-rank batch (images, or sequences). Prints one CSV row per case on
rank 0: model,backend,bucket_mb,step_ms,compute_ms,after_ms.
"""
import argparse
import math
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_weft
from torch.nn.parallel import DistributedDataParallel as DDP


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = None
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + (self.skip(x) if self.skip is not None else x))


def resnet50():
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for b in range(blocks):
            layers.append(Bottleneck(cin, width, stride if b == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000)]
    return nn.Sequential(*layers)


class Gpt2Small(nn.Module):
    def __init__(self, vocab=50257, width=768, layers=12, heads=12, context=1024):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        block = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx):
        n = idx.shape[1]
        mask = torch.triu(torch.full((n, n), -math.inf, device=idx.device), diagonal=1)
        x = self.tokens(idx) + self.positions(torch.arange(n, device=idx.device))
        return self.head(self.norm(self.blocks(x, mask=mask)))


def case(name, device, batch):
    if name == "resnet50":
        model = resnet50().to(device)
        x = torch.randn(2 * batch, 3, 128, 128, device=device)
        y = torch.randint(0, 1000, (2 * batch,), device=device)
        return model, lambda m: nn.functional.cross_entropy(m(x), y)
    model = Gpt2Small().to(device)
    idx = torch.randint(0, 50257, (batch, 64), device=device)
    return model, lambda m: nn.functional.cross_entropy(m(idx).flatten(0, 1), idx.flatten())


def allreduce_after(ddp, size):
    """The gradients all-reduced once backward is over: one flat all-reduce, no overlap."""
    grads = [p.grad for p in ddp.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat.div_(size)
    at = 0
    for g in grads:
        g.copy_(flat[at:at + g.numel()].view_as(g))
        at += g.numel()


def timed_steps(ddp, loss_of, opt, steps, mode, size):
    """mode: ddp (DDP's overlapped buckets), compute (no_sync: no communication), after
    (no_sync, then allreduce_after)."""
    cuda = next(ddp.parameters()).is_cuda
    times = []
    for i in range(steps + 1):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        opt.zero_grad()
        if mode == "ddp":
            loss_of(ddp).backward()
        else:
            with ddp.no_sync():
                loss_of(ddp).backward()
            if mode == "after":
                allreduce_after(ddp, size)
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        if i > 0:
            times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="resnet50,gpt2s")
    p.add_argument("--buckets", default="1,25,100")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--backends", default="weft,gloo")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--batch", type=int, default=1)
    args = p.parse_args()
    rank, size = torch_weft.world()
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // size))
    device = torch.device("cpu")
    if args.device == "cuda":
        local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ.get("SLURM_LOCALID", rank)))
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
    if rank == 0:
        print("model,backend,bucket_mb,step_ms,compute_ms,after_ms", flush=True)
    for backend in args.backends.split(","):
        if backend == "weft":
            torch_weft.init_process_group()
        else:
            os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
            # Rank 0 picks a free port; the others learn it through an MPI broadcast.
            port = torch.tensor([0], dtype=torch.int64)
            if rank == 0:
                import socket
                with socket.socket() as s:
                    s.bind(("127.0.0.1", 0))
                    port[0] = s.getsockname()[1]
            torch_weft.init_process_group()
            dist.broadcast(port, 0)
            dist.destroy_process_group()
            store = dist.TCPStore("127.0.0.1", int(port[0]), size, rank == 0)
            dist.init_process_group(backend, store=store, rank=rank, world_size=size)
        for name in args.models.split(","):
            for bucket in [float(b) for b in args.buckets.split(",")]:
                torch.manual_seed(0)
                model, loss_of = case(name, device, args.batch)
                ddp = DDP(model, bucket_cap_mb=bucket)
                opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
                step = timed_steps(ddp, loss_of, opt, args.steps, "ddp", size)
                compute = timed_steps(ddp, loss_of, opt, args.steps, "compute", size)
                after = timed_steps(ddp, loss_of, opt, args.steps, "after", size)
                if rank == 0:
                    print(f"{name},{backend},{bucket:g},{step:.1f},{compute:.1f},{after:.1f}", flush=True)
                del ddp, model, opt
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
