#!/usr/bin/env bash
# Builds weft with AddressSanitizer and UndefinedBehaviorSanitizer (build-asan; no CUDA: the
# GPU paths do not run without a device) and runs the unit tests, the fuzz corpus replays and a
# representative multi-rank set through both launchers and both point-to-point paths: every
# finding aborts its test. SANITIZE_TESTS (a ctest regex) replaces the multi-rank set.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/start-slurm.sh
mkdir -p build-asan
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_ENABLE_CUDA=OFF \
  -DWEFT_SANITIZE=address,undefined -DBUILD_TESTING=ON -DWEFT_TEST_SRUN=ON -DWEFT_BUILD_BENCH=OFF -DWEFT_UNIT_TEST_TIMEOUT=300 > build-asan/configure.log
cmake --build build-asan -j "$(nproc)"
# UCX's own malloc hooks would hide allocations from ASan; leaks are checked in the unit tests,
# whose processes are weft's alone (PMIx and UCX keep memory until exit by design).
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
multi=${SANITIZE_TESTS:-'^(mpi|ucx|srun)\.(ring|all_pairs|probe|persistent|wildcard|truncate|coll_nonblocking|coll_persistent|coll_repeat|rma_basic|rma_atomics|rma_errors|rma_mailbox)\.np[24]$|^fake2\.(ring|coll_matrix|rma_basic)\.np4$|^staged\.rma_basic\.np[24]$|^ucxrma\.rma_basic\.np[24]$|^kv|^aggd\.|^offload\.aggd\.np4$|^mpi\.fault\.'}
supp=$PWD/tests/sanitize/lsan.supp
cd build-asan
status=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$supp \
  ctest -j "$(nproc)" -L unit --output-on-failure || status=1
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 ctest -j "$(nproc)" -R "$multi" -LE unit --output-on-failure || status=1
exit $status
