#!/usr/bin/env bash
# Checks that programs build against weft every supported way, and that each runs and prints
# the expected rank line: build-tree mpicc and mpicxx, nvcc -ccbin mpicxx (when nvcc exists),
# and an installed tree through pkg-config and find_package(weft).
#   check_toolchain.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int rank = -1, size = -1, sum = 0, one = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d sum %d\n", rank, size, sum);
  MPI_Finalize();
  return sum == size ? 0 : 1;
}
C
expect() {  # runs a singleton binary and checks its output
  local out
  out=$("$1")
  [ "$out" = "rank 0 of 1 sum 1" ] || { echo "FAIL: $1 printed '$out'"; exit 1; }
  echo "ok: $2"
}

"$build/bin/mpicc" -O2 "$work/hello.c" -o "$work/hello_cc"
expect "$work/hello_cc" "build-tree mpicc"
cp "$work/hello.c" "$work/hello.cpp"
"$build/bin/mpicxx" -O2 "$work/hello.cpp" -o "$work/hello_cxx"
expect "$work/hello_cxx" "build-tree mpicxx"
"$build/bin/mpicc" -c "$work/hello.c" -o "$work/hello.o"
"$build/bin/mpicc" "$work/hello.o" -o "$work/hello_2step"
expect "$work/hello_2step" "mpicc compile then link"

if command -v nvcc >/dev/null 2>&1; then
  cp "$work/hello.c" "$work/hello.cu"
  nvcc -ccbin "$build/bin/mpicxx" "$work/hello.cu" -o "$work/hello_cu"
  expect "$work/hello_cu" "nvcc -ccbin mpicxx"
else
  echo "skip: nvcc not found"
fi

cmake --install "$build" --prefix "$work/prefix" > /dev/null
"$work/prefix/bin/mpicc" "$work/hello.c" -o "$work/hello_inst"
expect "$work/hello_inst" "installed mpicc"
# shellcheck disable=SC2046
cc "$work/hello.c" -o "$work/hello_pc" $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs weft)
expect "$work/hello_pc" "pkg-config weft"
mkdir -p "$work/fp"
cat > "$work/fp/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(fp C)
find_package(weft REQUIRED)
add_executable(hello $work/hello.c)
target_link_libraries(hello PRIVATE weft::weft)
CM
cmake -S "$work/fp" -B "$work/fp/build" -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/fp/build" > /dev/null
expect "$work/fp/build/hello" "find_package(weft)"
