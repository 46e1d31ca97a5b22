// Runs the schedules of all ranks of a communicator inside one process, matching each rank's
// sends to its peers' receives in order, as the transport would; executes the local steps
// exactly as ScheduleRun does. Lets unit tests check an algorithm's data for many sizes.
#pragma once
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "coll/algorithm.h"

namespace weft::coll::sim {

inline Comm comm_of(int rank, int size) {
  Comm c;
  c.rank = rank;
  c.size = size;
  c.name = "sim";
  for (int i = 0; i < size; ++i) c.world_ranks.push_back(i);
  return c;
}

// Runs schedules[r] as rank r. Returns "" on success, else what went wrong (a deadlock, a size
// mismatch, a failed local step).
inline std::string run_all(const std::vector<std::shared_ptr<Schedule>>& schedules) {
  const size_t p = schedules.size();
  std::vector<std::deque<std::vector<char>>> channel(p * p);  // [src * p + dst]
  std::vector<size_t> round(p, 0), next_recv(p, 0);
  std::vector<bool> posted(p, false);
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t me = 0; me < p; ++me) {
      const auto& rounds = schedules[me]->rounds();
      if (round[me] >= rounds.size()) continue;
      const auto& steps = rounds[round[me]];
      if (!posted[me]) {
        for (const Step& s : steps) {
          if (s.kind != Step::send) continue;
          if (s.peer < 0 || size_t(s.peer) >= p) return "rank " + std::to_string(me) + " sends to bad peer";
          const char* src = static_cast<const char*>(s.src);
          channel[me * p + size_t(s.peer)].emplace_back(src, src + s.bytes);
        }
        posted[me] = true;
        next_recv[me] = 0;
        progress = true;
      }
      // Receives complete in order of posting per peer; any order across peers.
      size_t recvs = 0, done = 0;
      for (const Step& s : steps) {
        if (s.kind != Step::recv) continue;
        ++recvs;
        if (recvs <= next_recv[me]) {
          ++done;
          continue;
        }
        auto& q = channel[size_t(s.peer) * p + me];
        if (q.empty() || recvs != next_recv[me] + 1) break;
        if (q.front().size() != s.bytes)
          return "rank " + std::to_string(me) + " round " + std::to_string(round[me]) +
                 ": receives " + std::to_string(s.bytes) + " bytes from " + std::to_string(s.peer) +
                 ", which sent " + std::to_string(q.front().size());
        if (s.bytes) memcpy(s.dst, q.front().data(), s.bytes);
        q.pop_front();
        ++next_recv[me];
        ++done;
        progress = true;
      }
      if (done < recvs) continue;
      for (const Step& s : steps) {
        if (s.kind == Step::reduce) {
          if (schedules[me]->reduction().apply(s.src, s.dst, s.count) != Status::ok)
            return "rank " + std::to_string(me) + ": reduction failed";
        } else if (s.kind == Step::copy && s.bytes) {
          memmove(s.dst, s.src, s.bytes);
        } else if (s.kind == Step::call) {
          if (schedules[me]->run_call(s.count) != Status::ok) return "local function failed";
        }
      }
      ++round[me];
      posted[me] = false;
      progress = true;
    }
  }
  for (size_t me = 0; me < p; ++me)
    if (round[me] < schedules[me]->rounds().size())
      return "deadlock: rank " + std::to_string(me) + " stuck in round " + std::to_string(round[me]);
  for (const auto& q : channel)
    if (!q.empty()) return "a message was sent but never received";
  return "";
}

}  // namespace weft::coll::sim
