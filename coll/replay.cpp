// Replay of schedules in the LogGP-style model (replay.h). Every rank's schedule (and each of
// its lanes) is an actor that posts a round's sends and receives at once and moves on when they
// have completed and its local steps have run; actors advance in time order, so the links they
// share are taken first come, first served.
#include "coll/replay.h"

#include <algorithm>
#include <deque>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "coll/hier/hierarchy.h"
#include "coll/schedule.h"
#include "coll/shm/segment.h"

namespace weft::coll {

namespace {

// One-way time by size on a measured curve (Links).
double on_curve(const std::vector<std::pair<double, double>>& curve, double n) {
  if (n <= curve.front().first) return curve.front().second;
  for (size_t i = 1; i < curve.size(); ++i) {
    const auto [x1, y1] = curve[i];
    if (n <= x1) {
      const auto [x0, y0] = curve[i - 1];
      return y0 + (y1 - y0) * (n - x0) / (x1 - x0);
    }
  }
  if (curve.size() < 2) return curve.back().second;
  const auto [x0, y0] = curve[curve.size() - 2];
  const auto [x1, y1] = curve.back();
  return y1 + (y1 - y0) / (x1 - x0) * (n - x1);
}

struct Costs {
  Level node{}, net{};
  const std::vector<std::pair<double, double>>* node_curve = nullptr;  // or null: node's alpha, beta
  const std::vector<std::pair<double, double>>* net_curve = nullptr;
  double gamma = 0;      // us per byte reduced
  double copy_beta = 0;  // us per byte copied
  double gap = 0;        // the least time a send holds its link
  double flag_us = 0;    // a shared-memory engine step
  bool half_duplex = false;
  int host_cores = 0;

  const std::vector<std::pair<double, double>>* curve(bool network) const { return network ? net_curve : node_curve; }
  // A message of n bytes from its first byte leaving to its last arriving.
  double time_us(bool network, double n) const {
    if (const auto* c = curve(network)) return on_curve(*c, n);
    const Level& lv = network ? net : node;
    return lv.alpha_us + n * lv.beta_us_per_byte;
  }
  // What the message adds to its links' busy time (its bytes through them).
  double hold_us(bool network, double n) const {
    if (const auto* c = curve(network)) return std::max(0.0, on_curve(*c, n) - c->front().second);
    return n * (network ? net : node).beta_us_per_byte;
  }
  double latency_us(bool network) const { return time_us(network, 0); }
};

Costs costs_of(const CostModel& m, int largest_node, const Links* links) {
  Costs c;
  if (links && !links->node.empty()) c.node_curve = &links->node;
  if (links && !links->net.empty()) c.net_curve = &links->net;
  c.half_duplex = links && links->half_duplex;
  c.host_cores = links ? links->host_cores : 0;
  c.node = node_level(m);
  c.net = net_level(m);
  c.gamma = m.gamma_us_per_byte;
  // A copy is memory's work: the shared-memory rate where measured (ranks 0 and 1 share a node),
  // else the reduction's (which reads two vectors and writes one, so a copy costs at most that),
  // never a network's beta (a job whose ranks 0 and 1 are on different nodes knows no node level).
  c.copy_beta = m.shm_beta_us_per_byte > 0 ? m.shm_beta_us_per_byte
                : m.gamma_us_per_byte > 0 ? m.gamma_us_per_byte : c.node.beta_us_per_byte;
  c.gap = m.gap_us;
  c.flag_us = shm::model_known(m) ? shm::flag_exchange_us(m, largest_node) : c.node.alpha_us;
  return c;
}

// The time of a round's local steps.
double local_us(const Schedule& s, const std::vector<Step>& round, const Costs& c, size_t* shm_steps) {
  double us = 0;
  const double elem = double(std::max<size_t>(1, s.reduction().elem_size));
  for (const Step& st : round) {
    if (st.kind == Step::reduce) us += double(st.count) * elem * c.gamma;
    else if (st.kind == Step::copy) us += double(st.bytes) * c.copy_beta;
    else if (st.kind == Step::poll) {
      const PollWork w = s.poll_work(st.count);
      us += c.flag_us + double(w.copied) * c.copy_beta + double(w.reduced) * c.gamma;
      ++*shm_steps;
    }
  }
  return us;
}

// Every schedule of a run: the main one first, then its lanes depth first (the order in which
// ranks number their lanes' tags, the same at every rank).
void flatten(const Schedule* s, int parent, std::vector<const Schedule*>* out, std::vector<int>* parents) {
  out->push_back(s);
  parents->push_back(parent);
  const int me = int(out->size()) - 1;
  for (const auto& lane : s->lanes()) flatten(lane.get(), me, out, parents);
}

size_t steps_of(const Schedule& s) {
  size_t n = 0;
  for (const auto& r : s.rounds()) n += r.size();
  for (const auto& lane : s.lanes()) n += steps_of(*lane);
  return n;
}

struct Message {
  double arrival;  // the last byte at the receiver's link
  double hold;     // how long it holds the receiver's link (-1: a copy to itself)
  bool network;
};

struct Actor {
  int rank = 0;
  int lane = 0;
  int parent = -1;  // the actor whose join waits for this one (index), or -1
  const Schedule* s = nullptr;
  size_t round = 0;
  double start = 0;  // the current round's post time
  double ready = 0;  // the latest completion in the current round so far
  std::vector<const Step*> waiting;  // receives not yet matched, in posting order
  bool posted = false;
  bool done = false;
  double finish = 0;
  int open_lanes = 0;
  double lanes_finish = 0;
};

class FullReplay {
 public:
  // nic[r]: the network link rank r uses (its node's, or one of them), from 0 to nic_count - 1.
  FullReplay(const std::vector<std::shared_ptr<Schedule>>& schedules, const std::vector<int>& node_index,
             const std::vector<int>& nic, int nic_count, const Costs& c)
      : node_(node_index), nic_(nic), costs_(c), rank_out_(schedules.size(), 0), rank_in_(schedules.size(), 0),
        nic_out_(size_t(nic_count), 0), nic_in_(size_t(nic_count), 0), cores_(size_t(std::max(0, c.host_cores)), 0) {
    first_.resize(schedules.size());
    for (size_t r = 0; r < schedules.size(); ++r) {
      std::vector<const Schedule*> flat;
      std::vector<int> parents;
      flatten(schedules[r].get(), -1, &flat, &parents);
      first_[r] = int(actors_.size());
      if (r == 0) lanes_ = int(flat.size());
      for (size_t i = 0; i < flat.size(); ++i) {
        Actor a;
        a.rank = int(r);
        a.lane = int(i);
        a.s = flat[i];
        a.parent = parents[i] < 0 ? -1 : first_[r] + parents[i];
        actors_.push_back(std::move(a));
      }
      for (size_t i = 1; i < flat.size(); ++i) ++actors_[size_t(actors_[size_t(first_[r]) + i].parent)].open_lanes;
      if (int(flat.size()) != lanes_) lane_mismatch_ = int(r);
    }
  }

  ReplayResult run() {
    ReplayResult out;
    if (lane_mismatch_ >= 0) {
      out.error = "rank " + std::to_string(lane_mismatch_) + " runs another number of lanes than rank 0";
      return out;
    }
    for (size_t i = 0; i < actors_.size(); ++i) queue_.push({0.0, int(i)});
    while (!queue_.empty() && error_.empty()) {
      const auto [t, i] = queue_.top();
      queue_.pop();
      begin_round(i, t);
    }
    out.steps = steps_;
    out.shared_memory_steps = shm_steps_;
    if (!error_.empty()) {
      out.error = error_;
      return out;
    }
    // A rank finishes with the last of its schedules (lanes may outlast the main rounds).
    std::vector<double> rank_finish(first_.size(), 0);
    for (const Actor& a : actors_) {
      if (!a.done) {
        out.error = "rank " + std::to_string(a.rank) + (a.lane ? " lane " + std::to_string(a.lane) : "") +
                    " never finishes round " + std::to_string(a.round) + " (a receive no rank sends)";
        return out;
      }
      rank_finish[size_t(a.rank)] = std::max(rank_finish[size_t(a.rank)], a.finish);
    }
    for (size_t r = 0; r < rank_finish.size(); ++r) {
      if (rank_finish[r] >= out.us) {
        out.us = rank_finish[r];
        out.slowest_rank = int(r);
      }
    }
    return out;
  }

 private:
  using Event = std::pair<double, int>;

  int actor_of(int rank, int lane) const { return first_[size_t(rank)] + lane; }
  static uint64_t channel_key(int src, int dst, int lane) {
    return uint64_t(uint32_t(src)) << 40 | uint64_t(uint32_t(dst)) << 16 | uint64_t(uint32_t(lane));
  }

  void begin_round(int i, double t) {
    Actor& a = actors_[size_t(i)];
    const auto& rounds = a.s->rounds();
    if (a.round >= rounds.size()) {
      finish(i, t);
      return;
    }
    a.start = a.ready = t;
    a.posted = true;
    a.waiting.clear();
    const auto& steps = rounds[a.round];
    steps_ += steps.size();
    std::vector<int> wake;
    for (const Step& st : steps) {
      if (st.kind == Step::recv) {
        if (!valid_peer(a, st.peer)) return;
        a.waiting.push_back(&st);
      } else if (st.kind == Step::send) {
        if (!valid_peer(a, st.peer)) return;
        send(a, st, t);
        wake.push_back(actor_of(st.peer, a.lane));
      }
    }
    for (int w : wake)
      if (w != i) try_complete(w);
    try_complete(i);
  }

  bool valid_peer(const Actor& a, int peer) {
    if (peer >= 0 && peer < int(first_.size())) return true;
    error_ = "rank " + std::to_string(a.rank) + " names peer " + std::to_string(peer) +
             " (intercommunicator and out-of-range peers are not replayed)";
    return false;
  }

  void send(Actor& a, const Step& st, double t) {
    const int dst = st.peer;
    const double n = double(st.bytes);
    Message m{};
    if (dst == a.rank) {
      m = {t + n * costs_.copy_beta, -1, false};  // a copy: no link
    } else {
      m.network = node_[size_t(a.rank)] != node_[size_t(dst)];
      double& out = m.network ? nic_out_[size_t(nic_[size_t(a.rank)])] : rank_out_[size_t(a.rank)];
      double* core = free_core();
      const double depart = std::max({t, out, core ? *core : 0.0});
      m.hold = costs_.hold_us(m.network, n);
      const double busy = std::max(costs_.gap, m.hold);
      out = depart + busy;
      if (core) *core = depart + busy;
      m.arrival = depart + costs_.time_us(m.network, n);
      a.ready = std::max(a.ready, depart + busy);
    }
    channels_[channel_key(a.rank, dst, a.lane)].push_back(m);
  }

  // The core that is free first, where the ranks share a host's cores (Links::host_cores).
  double* free_core() {
    if (cores_.empty()) return nullptr;
    return &*std::min_element(cores_.begin(), cores_.end());
  }

  void try_complete(int i) {
    Actor& a = actors_[size_t(i)];
    if (!a.posted || a.done) return;
    auto it = a.waiting.begin();
    while (it != a.waiting.end()) {
      auto ch = channels_.find(channel_key((*it)->peer, a.rank, a.lane));
      if (ch == channels_.end() || ch->second.empty()) {
        ++it;
        continue;
      }
      const Message m = ch->second.front();
      ch->second.pop_front();
      double end = m.arrival;
      // Half duplex, a receive takes the link like a send: at least the gap (the CPU's work
      // for a message, which an exchange pays on both sides).
      const double hold = m.hold < 0 ? 0 : costs_.half_duplex ? std::max(costs_.gap, m.hold) : m.hold;
      if (hold > 0) {
        auto& ports = costs_.half_duplex ? (m.network ? nic_out_ : rank_out_) : (m.network ? nic_in_ : rank_in_);
        double& in = ports[size_t(m.network ? nic_[size_t(a.rank)] : a.rank)];
        double* core = free_core();
        end = std::max(m.arrival, std::max(in, core ? *core : 0.0) + hold);
        in = end;
        if (core) *core = end;
      }
      a.ready = std::max(a.ready, end);
      it = a.waiting.erase(it);
    }
    if (!a.waiting.empty()) return;
    const auto& steps = a.s->rounds()[a.round];
    const bool join = std::any_of(steps.begin(), steps.end(), [](const Step& s) { return s.kind == Step::join; });
    if (join && a.open_lanes > 0) return;  // the last lane to finish moves it on
    if (join) a.ready = std::max(a.ready, a.lanes_finish);
    const double end = a.ready + local_us(*a.s, steps, costs_, &shm_steps_);
    a.posted = false;
    ++a.round;
    queue_.push({end, i});
  }

  void finish(int i, double t) {
    Actor& a = actors_[size_t(i)];
    a.done = true;
    a.finish = t;
    if (a.parent < 0) return;
    Actor& p = actors_[size_t(a.parent)];
    --p.open_lanes;
    p.lanes_finish = std::max(p.lanes_finish, t);
    if (p.open_lanes == 0 && p.posted) try_complete(a.parent);
  }

  std::vector<int> node_, nic_;
  Costs costs_;
  std::vector<double> rank_out_, rank_in_, nic_out_, nic_in_;  // when each link is free again
  std::vector<double> cores_;  // when each of the host's cores is free again (none: unlimited)
  std::vector<int> first_;  // each rank's first actor
  std::vector<Actor> actors_;
  int lanes_ = 0;
  int lane_mismatch_ = -1;
  std::unordered_map<uint64_t, std::deque<Message>> channels_;  // messages sent, not yet received
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> queue_;
  size_t steps_ = 0, shm_steps_ = 0;
  std::string error_;
};

// What one round of a rank asks of the links, per level (0: node, 1: network): the time its
// sends and its receives hold them, the latency (-1: no message there), and its local steps.
struct RoundLoad {
  double out[2] = {0, 0}, in[2] = {0, 0}, alpha[2] = {-1, -1};
  double local = 0;
  bool join = false;
};

std::vector<RoundLoad> round_loads(const Schedule& s, int rank, const std::vector<int>& node, const Costs& c,
                                   size_t* steps, size_t* shm_steps) {
  std::vector<RoundLoad> loads;
  loads.reserve(s.rounds().size());
  for (const auto& round : s.rounds()) {
    *steps += round.size();
    RoundLoad l;
    for (const Step& st : round) {
      if (st.kind == Step::join) l.join = true;
      if (st.kind != Step::send && st.kind != Step::recv) continue;
      const double n = double(st.bytes);
      if (st.peer == rank) {
        l.out[0] += n * c.copy_beta;
        l.alpha[0] = std::max(l.alpha[0], 0.0);
        continue;
      }
      const bool network = st.peer >= 0 && size_t(st.peer) < node.size() && node[size_t(st.peer)] != node[size_t(rank)];
      if (st.kind == Step::send) l.out[network] += std::max(c.gap, c.hold_us(network, n));
      else l.in[network] += c.half_duplex ? std::max(c.gap, c.hold_us(network, n)) : c.hold_us(network, n);
      l.alpha[network] = std::max(l.alpha[network], c.latency_us(network));
    }
    l.local = local_us(s, round, c, shm_steps);
    loads.push_back(l);
  }
  return loads;
}

// The rounds' time, each costing its slowest level; shared (optional): per round, the network
// link's load from every rank of the node that uses it (this one's included).
double rounds_us(const std::vector<RoundLoad>& loads, const std::vector<std::pair<double, double>>* shared,
                 double lanes_finish, const Costs& c) {
  double t = 0;
  for (size_t k = 0; k < loads.size(); ++k) {
    const RoundLoad& l = loads[k];
    double msg = 0;
    for (int level = 0; level < 2; ++level) {
      if (l.alpha[level] < 0) continue;
      double out = l.out[level], in = l.in[level];
      if (level == 1 && shared) std::tie(out, in) = (*shared)[k];
      msg = std::max(msg, l.alpha[level] + (c.half_duplex ? out + in : std::max(out, in)));
    }
    t += msg;
    if (l.join) t = std::max(t, lanes_finish);
    t += l.local;
  }
  return std::max(t, lanes_finish);
}

// A schedule and its lanes, depth first.
void schedules_of(const Schedule& s, std::vector<const Schedule*>* out) {
  out->push_back(&s);
  for (const auto& lane : s.lanes()) schedules_of(*lane, out);
}

// The ranks of a sampled rank's node, each in its own rounds but in step with the others (the
// round with the same index at the same time, lanes included), so that their loads on a shared
// network link add up: exact for schedules whose ranks all run alike, a lower bound otherwise
// (nobody waits for a late peer, and a lane's wait for another is not modelled). At most
// kSharing ranks of a node take part.
constexpr size_t kSharing = 64;

void replay_node(const RankSchedule& build, const std::vector<int>& mates, const std::vector<int>& node,
                 const std::vector<int>& nic, const Costs& c, ReplayResult* out) {
  // Pass 1: every link's load per round. Pass 2: each rank's time with its link's load (the
  // schedules are built twice rather than all kept: a ring at 32,768 ranks has 65,534 rounds).
  std::unordered_map<int, std::vector<std::pair<double, double>>> link_load;
  size_t ignored = 0;
  for (int r : mates) {
    std::shared_ptr<Schedule> s = build(r);
    if (!s) continue;
    auto& load = link_load[nic[size_t(r)]];
    std::vector<const Schedule*> all;
    schedules_of(*s, &all);
    for (const Schedule* one : all) {
      const std::vector<RoundLoad> loads = round_loads(*one, r, node, c, &ignored, &ignored);
      if (load.size() < loads.size()) load.resize(loads.size(), {0.0, 0.0});
      for (size_t k = 0; k < loads.size(); ++k) {
        load[k].first += loads[k].out[1];
        load[k].second += loads[k].in[1];
      }
    }
  }
  for (int r : mates) {
    std::shared_ptr<Schedule> s = build(r);
    if (!s) continue;
    const auto& load = link_load[nic[size_t(r)]];
    double lanes_finish = 0;
    std::vector<const Schedule*> lanes;
    for (const auto& lane : s->lanes()) schedules_of(*lane, &lanes);
    for (const Schedule* lane : lanes)
      lanes_finish = std::max(lanes_finish, rounds_us(round_loads(*lane, r, node, c, &out->steps, &out->shared_memory_steps),
                                                      &load, 0, c));
    const double us = rounds_us(round_loads(*s, r, node, c, &out->steps, &out->shared_memory_steps), &load,
                                lanes_finish, c);
    if (us >= out->us) {
      out->us = us;
      out->slowest_rank = r;
    }
  }
}

}  // namespace

ReplayResult replay(const RankSchedule& build, const std::vector<uint32_t>& nodes, const CostModel& m,
                    const ReplayLimits& limits, const std::vector<int>& sample, const Links* links) {
  ReplayResult out;
  const int p = int(nodes.size());
  if (p < 1) {
    out.error = "no ranks";
    return out;
  }
  std::vector<int> node_index(static_cast<size_t>(p)), nic(static_cast<size_t>(p));
  std::unordered_map<uint32_t, int> dense;
  std::vector<int> per_node;
  const int nics = links && links->nics_per_node > 1 ? links->nics_per_node : 1;
  for (int r = 0; r < p; ++r) {
    auto [it, fresh] = dense.emplace(nodes[size_t(r)], int(dense.size()));
    if (fresh) per_node.push_back(0);
    node_index[size_t(r)] = it->second;
    const int local = per_node[size_t(it->second)];
    const std::vector<int>* map = links && !links->nic_of_local.empty() ? &links->nic_of_local : nullptr;
    const int link = map ? std::clamp((*map)[size_t(local) % map->size()], 0, nics - 1) : local % nics;
    nic[size_t(r)] = it->second * nics + link;  // the node's ranks in turn, or as the map says
    ++per_node[size_t(it->second)];
  }
  const Costs c = costs_of(m, *std::max_element(per_node.begin(), per_node.end()), links);
  std::shared_ptr<Schedule> first = build(0);
  if (!first) {
    out.error = "rank 0 has no schedule";
    return out;
  }
  if (p <= limits.max_ranks && steps_of(*first) * size_t(p) <= limits.max_steps) {
    std::vector<std::shared_ptr<Schedule>> all(static_cast<size_t>(p));
    all[0] = std::move(first);
    for (int r = 1; r < p; ++r) {
      all[size_t(r)] = build(r);
      if (!all[size_t(r)]) {
        out.error = "rank " + std::to_string(r) + " has no schedule";
        return out;
      }
    }
    return FullReplay(all, node_index, nic, int(per_node.size()) * nics, c).run();
  }
  out.sampled = true;
  first.reset();
  std::vector<int> done;  // nodes replayed
  for (int r : sample) {
    if (r < 0 || r >= p) continue;
    const int n = node_index[size_t(r)];
    if (std::find(done.begin(), done.end(), n) != done.end()) continue;
    done.push_back(n);
    std::vector<int> mates;
    for (int m = 0; m < p && mates.size() < kSharing; ++m)
      if (node_index[size_t(m)] == n) mates.push_back(m);
    if (std::find(mates.begin(), mates.end(), r) == mates.end()) mates.push_back(r);
    replay_node(build, mates, node_index, nic, c, &out);
  }
  return out;
}

}  // namespace weft::coll
