#!/usr/bin/env bash
# Fuzzes every decoder of bytes from outside (tests/fuzz) with libFuzzer under ASan and UBSan,
# each for a bounded time, starting from its committed corpus and the crashes found before
# (tests/fuzz/regressions/<target>/). A crash fails the run and leaves its input in
# build-fuzz/artifacts/<target>/: add it to tests/fuzz/regressions/<target>/ once fixed, so every
# build replays it (ctest fuzz.<target>.replay).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 30, or FUZZ_SECONDS)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FUZZ_SECONDS:-30}}
bash scripts/install-deps.sh
mkdir -p build-fuzz
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_ENABLE_CUDA=OFF \
  -DWEFT_FUZZ=ON -DWEFT_SANITIZE=address,undefined -DBUILD_TESTING=ON -DWEFT_BUILD_BENCH=OFF > build-fuzz/configure.log
cmake --build build-fuzz -j "$(nproc)" --target weft_fuzz_programs
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
status=0
for program in build-fuzz/bin/fuzz/fuzz_*; do
  target=${program##*/fuzz_}
  work=build-fuzz/corpus/$target artifacts=build-fuzz/artifacts/$target
  mkdir -p "$work" "$artifacts"
  cp -n tests/fuzz/corpus/"$target"/* tests/fuzz/regressions/"$target"/* "$work"/ 2>/dev/null || true
  echo "fuzz.sh: $target for ${seconds} s"
  if ! "$program" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 "$work" > "build-fuzz/$target.log" 2>&1; then
    echo "fuzz.sh: $target FAILED; input in $artifacts/, log in build-fuzz/$target.log"
    tail -40 "build-fuzz/$target.log"
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added" "build-fuzz/$target.log" | tr '\n' ' '
  echo
done
exit $status
