#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root), builds weft and runs the 2-rank OSU-style sweep
# (latency, bandwidth, bidirectional bandwidth and the collectives) under mpirun, printing the tables.
# With --compare, also runs the same benchmark sources built against Open MPI, side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$(nproc)"
if [ "${1:-}" = "--compare" ]; then
  exec bash osu_style_bench/compare.sh build 2
fi
exec bash osu_style_bench/run_sweep.sh build 2
