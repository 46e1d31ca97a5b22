#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (as root), checks the layering of the sources
# (scripts/check_layers.sh), builds weft and runs every test: unit tests,
# multi-rank tests under mpirun and under Slurm's srun, and the MPICH ABI test; then, in a small
# second build without CUDA (build-nocuda), the tests of its device-buffer refusal; then a
# sanitizer build's tests (scripts/sanitize.sh), a ThreadSanitizer build's thread tests
# (scripts/tsan.sh), fuzzing (scripts/fuzz.sh) and a soak
# (scripts/soak.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The layer order and the settings registry rule, before anything is built.
bash scripts/check_layers.sh
bash scripts/start-slurm.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=ON -DWEFT_TEST_SRUN=ON
cmake --build build -j "$(nproc)"
cd build
ctest -j "$(nproc)" --output-on-failure
cd ..
# A build without CUDA refuses CUDA device buffers with MPI_ERR_BUFFER (tests/nocuda, through a
# fake libcuda.so.1). Only the library and those tests are built; a main build without a CUDA
# toolkit has run them already.
if ! grep -q 'Test *#' <<< "$(ctest --test-dir build -N -R nocuda)"; then
  cmake -S . -B build-nocuda -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_ENABLE_CUDA=OFF -DBUILD_TESTING=ON
  cmake --build build-nocuda -j "$(nproc)" --target weft weft_test_device_pointer_nocuda weft_test_device_pointer_nocuda_late
  ctest --test-dir build-nocuda -j "$(nproc)" -R nocuda --output-on-failure
fi
# Then the same code under AddressSanitizer and UndefinedBehaviorSanitizer, every decoder of
# outside bytes fuzzed for a bounded time, and a minute of soak (docs/RELIABILITY.md).
# WEFT_TEST_QUICK=1 stops before them.
[ "${WEFT_TEST_QUICK:-0}" = 1 ] && exit 0
bash scripts/sanitize.sh
bash scripts/tsan.sh
bash scripts/fuzz.sh "${WEFT_FUZZ_SECONDS:-30}"
bash scripts/soak.sh build 60 4
