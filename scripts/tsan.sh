#!/usr/bin/env bash
# Builds weft with ThreadSanitizer (build-tsan; no CUDA) and runs the multi-threaded tests:
# MPI_THREAD_MULTIPLE (threads) and the asynchronous progress thread (async.*), through both
# point-to-point paths. Every report fails its test. TSAN_TESTS (a ctest regex) replaces the set.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
mkdir -p build-tsan
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_ENABLE_CUDA=OFF \
  -DWEFT_SANITIZE=thread -DBUILD_TESTING=ON -DWEFT_BUILD_BENCH=OFF > build-tsan/configure.log
cmake --build build-tsan -j "$(nproc)" --target weft weft_test_threads \
  weft_test_coll_nonblocking weft_test_rma_mailbox weft_test_stress weft_test_coll_nb_order weft_test_coll_repeat
# PMIx and UCX are not instrumented: what happens inside them (their own threads included) is
# theirs to answer for (tests/sanitize/tsan.supp); weft's code is checked whole.
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/tests/sanitize/tsan.supp"
# async_progress itself is left out: it watches destination buffers with plain loads while the
# thread fills them, on purpose; the async.* runs of the other programs have the thread on, and
# the async_cpu.* runs hand non-blocking collectives over to it (Calls::start_handed_off).
tests=${TSAN_TESTS:-'^(mpi|ucx)\.threads\.np[24]$|^async\.(threads|coll_nonblocking|rma_mailbox|stress)\.np4$|^async_cpu\.(coll_nb_order|coll_repeat)\.np4$'}
cd build-tsan
ctest -j "$(nproc)" -R "$tests" --output-on-failure
