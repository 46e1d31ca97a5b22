#include "progress.h"

#include <unistd.h>

#include <bit>

namespace weft {

CpuSet own_cpus() {
  cpu_set_t set;
  CpuSet out;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) {
        if (out.size() <= size_t(cpu / 64)) out.resize(size_t(cpu / 64) + 1, 0);
        out[size_t(cpu / 64)] |= uint64_t(1) << (cpu % 64);
      }
    if (!out.empty()) return out;
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < (n > 0 ? n : 1); ++cpu) {
    if (out.size() <= size_t(cpu / 64)) out.resize(size_t(cpu / 64) + 1, 0);
    out[size_t(cpu / 64)] |= uint64_t(1) << (cpu % 64);
  }
  return out;
}

int cpu_count(const CpuSet& s) {
  int n = 0;
  for (uint64_t w : s) n += std::popcount(w);
  return n;
}

bool cpus_overlap(const CpuSet& a, const CpuSet& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] & b[i]) return true;
  return false;
}

namespace {

void unite(CpuSet* into, const CpuSet& s) {
  if (into->size() < s.size()) into->resize(s.size(), 0);
  for (size_t i = 0; i < s.size(); ++i) (*into)[i] |= s[i];
}

}  // namespace

WaitChoice choose_wait_policy(const CpuSet& mine, const std::vector<CpuSet>& host_peers) {
  WaitChoice c;
  CpuSet covered = mine;
  for (const CpuSet& peer : host_peers)
    if (cpus_overlap(mine, peer)) {
      ++c.competing_ranks;
      unite(&covered, peer);
    }
  c.cpus = cpu_count(covered);
  c.policy = c.competing_ranks > c.cpus ? WaitPolicy::yield : WaitPolicy::spin_then_yield;
  return c;
}

}  // namespace weft
