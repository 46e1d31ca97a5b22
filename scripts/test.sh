#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root), builds weft and runs every test: unit tests,
# multi-rank tests under mpirun and under Slurm's srun, and the MPICH ABI test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/start-slurm.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DWEFT_TEST_SRUN=ON
cmake --build build -j "$(nproc)"
cd build
ctest -j "$(nproc)" --output-on-failure
