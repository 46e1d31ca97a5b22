"""Data-parallel training on weft's torch.distributed backend.

    PYTHONPATH=build/python mpirun -np 4 python3 examples/ddp_train.py [--steps 50] [--bucket-mb 25]
        [--device cpu|cuda]

Every rank trains a replica of a small convolutional classifier on its own shard of a
synthetic dataset; DistributedDataParallel all-reduces the gradients in buckets while the
backward pass still runs. Rank and world size come from the launch (mpirun or srun), so no
MASTER_ADDR or store is needed. With --device cuda each rank uses GPU local_rank % count (ranks
sharing a GPU need MPS) and the all-reduces are stream-ordered.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch_weft  # registers the "weft" backend
from torch.nn.parallel import DistributedDataParallel as DDP


def model():
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 8 * 8, 256), nn.ReLU(), nn.Linear(256, 10))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=32, help="samples per rank and step")
    parser.add_argument("--bucket-mb", type=float, default=25.0, help="DDP gradient bucket size")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    args = parser.parse_args()

    device = torch.device("cpu")
    if args.device == "cuda":
        local = int(os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0")))
        device = torch.device("cuda", local % torch.cuda.device_count())
        torch.cuda.set_device(device)
    rank, size = torch_weft.init_process_group()
    torch.manual_seed(0)  # the same initial weights everywhere (DDP also broadcasts rank 0's)
    net = DDP(model().to(device), bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()

    # A synthetic dataset: each rank draws its own shard.
    gen = torch.Generator().manual_seed(1000 + rank)
    images = torch.randn(args.steps * args.batch, 3, 32, 32, generator=gen).to(device)
    labels = torch.randint(0, 10, (args.steps * args.batch,), generator=gen).to(device)

    start = time.perf_counter()
    for step in range(args.steps):
        x = images[step * args.batch:(step + 1) * args.batch]
        y = labels[step * args.batch:(step + 1) * args.batch]
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()  # gradients all-reduced bucket by bucket during the backward pass
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            mean = loss.detach().clone()
            dist.all_reduce(mean, op=dist.ReduceOp.AVG)
            if rank == 0:
                print(f"step {step:4d}  loss {mean.item():.4f}", flush=True)
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"{args.steps} steps on {size} ranks in {elapsed:.2f} s ({1000 * elapsed / args.steps:.1f} ms/step)")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
