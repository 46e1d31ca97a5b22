"""The device the torch_weft tests run on: WEFT_TORCH_TEST_DEVICE (cpu or cuda; default cpu).
For cuda, each rank takes GPU local_rank % count, the local rank from the launcher (mpirun,
srun or torchrun); where there is no GPU, or the backend was built without CUDA, the process
prints SKIP and exits with 77 (skipped)."""
import faulthandler
import os
import sys

import torch
import torch_weft


def local_rank():
    for var in ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"):
        if var in os.environ:
            return int(os.environ[var])
    return 0


def pick(default="cpu"):
    # WEFT_TORCH_TEST_TRACEBACK_AFTER=S: print every thread's Python stack and exit after S
    # seconds (where a run hangs).
    after = os.environ.get("WEFT_TORCH_TEST_TRACEBACK_AFTER")
    if after:
        faulthandler.dump_traceback_later(float(after), exit=True)
    dev = os.environ.get("WEFT_TORCH_TEST_DEVICE", default)
    if dev == "cuda":
        if not torch.cuda.is_available() or not torch_weft._C.cuda:
            print("SKIP: no CUDA here (or the backend was built without it)", flush=True)
            sys.exit(77)
        torch.cuda.set_device(local_rank() % torch.cuda.device_count())
    return dev
