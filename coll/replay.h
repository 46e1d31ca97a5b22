// Replays collective schedules without running them, in a LogGP-style model with the
// selector's numbers (cost_model.cpp): a message between two ranks of one node costs
// node_alpha + n*node_beta, between nodes net_alpha + n*net_beta; a rank's sends leave one after
// another (each holds its link for max(gap, n*beta)), and the ranks of a node share its network
// link(s) each way (Links); reductions cost n*gamma, copies n*shm_beta (n*gamma where the
// model has no shm_beta). weft_sim (tools/) predicts each algorithm's time with it at shapes no
// test machine has.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "coll/coll.h"

namespace weft::coll {

class Schedule;

struct ReplayResult {
  double us = 0;             // the last rank's finish, from a common start
  int slowest_rank = -1;
  size_t steps = 0;          // steps replayed
  // Too many steps to replay every rank together: the nodes of the sampled ranks were replayed,
  // each rank's rounds in step with its node-mates' (their loads on a shared network link add
  // up), every round costing its slowest level; nobody waits for a late peer: exact for
  // schedules whose ranks all run alike, such as rings and recursive doubling, a lower bound
  // otherwise.
  bool sampled = false;
  // Shared-memory engine steps (coll/shm), not replayed as messages: each costs a flag exchange
  // among the node's ranks (shm::flag_exchange_us) and the bytes it copies (shm_beta) and
  // reduces (gamma); waiting for the node's slowest rank is not modelled.
  size_t shared_memory_steps = 0;
  std::string error;         // schedules that do not match (a deadlock, a bad peer)
};

// The schedule rank r runs (built on a communicator view with rank r).
using RankSchedule = std::function<std::shared_ptr<Schedule>(int rank)>;

// How much a replay of every rank together may take: building a rank's schedule reads the whole
// job's node map, so the ranks bound it as well as the steps.
struct ReplayLimits {
  size_t max_steps = 20'000'000;  // rank 0's steps times the ranks
  int max_ranks = 2048;
};

// What the links are like, beyond the model's alpha and beta. Curves: measured one-way times of
// a message by size (bytes, us; sorted by bytes), per level, in place of alpha + n*beta (a
// transport's protocol change, eager to rendezvous, bends the line that two calibration points
// draw); between points linear, beyond the last its slope; a message holds its links for its
// time less the smallest message's. Half duplex: a rank's (or node's) sends and receives take
// turns on one link, each at least the gap, as where the CPU does every message's work and
// copies every byte (TCP over loopback, ranks sharing cores).
// A node's ranks share its network links (one by default; with several, rank i of the node uses
// link nic_of_local[i mod its size], or link i mod nics_per_node without that map, as GPUs with
// a NIC each).
// Host cores (0: unlimited): every rank lives on one host with that many cores, and each
// message's work at either end (its time on the link, at least the gap) needs one of them, as
// with virtual nodes or namespace hosts on one machine. Replayed with every rank only.
struct Links {
  std::vector<std::pair<double, double>> node, net;
  bool half_duplex = false;
  int nics_per_node = 1;
  std::vector<int> nic_of_local;  // each value below nics_per_node
  int host_cores = 0;
};

// Replays the schedules of ranks 0 .. nodes.size()-1 (nodes[r]: rank r's node id): all ranks
// together within the limits, else the nodes of the ranks in `sample` (up to 64 ranks of each).
// links: measured message times
// that replace the model's alpha and beta on the levels they give, and the duplex (none: the
// model's, full duplex).
ReplayResult replay(const RankSchedule& build, const std::vector<uint32_t>& nodes, const CostModel& m,
                    const ReplayLimits& limits, const std::vector<int>& sample,
                    const Links* links = nullptr);

}  // namespace weft::coll
