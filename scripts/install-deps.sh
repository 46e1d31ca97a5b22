#!/usr/bin/env bash
# Installs the Debian 12 packages weft builds, tests and benchmarks with. Idempotent.
set -euo pipefail
pkgs=(build-essential g++ cmake ninja-build pkg-config
      openmpi-bin libopenmpi-dev libpmix-dev libucx-dev ucx-utils libhwloc-dev hwloc
      slurm-wlm munge libmunge-dev libgtest-dev libbenchmark-dev libmpich-dev mpich
      libssl-dev clang libclang-rt-14-dev python3 python3-matplotlib nlohmann-json3-dev iproute2
      python3-dev python3-torch libtorch-dev pybind11-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
