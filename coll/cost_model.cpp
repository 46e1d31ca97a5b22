// Where the alpha-beta-gamma model's numbers come from: a short measurement at init (job rank 0
// ping-pongs a small and a large message with its nearest peer on its node and on another
// node, one level each; rank 0 times a local reduction; rank 0's numbers are broadcast so that
// every rank estimates alike), or a tuning file.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "algorithm.h"
#include "hier/hierarchy.h"
#include "shm/segment.h"
#include "runtime/log.h"

namespace weft::coll {

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs s `batches` times on every rank and keeps the fastest (interference only ever adds time).
Status fastest_run(Transport& t, const Comm& world, const std::shared_ptr<Schedule>& s, int batches, double* us) {
  CostModel unused;
  CollContext ctx{&t, world, unused};
  double best = 1e30;
  for (int b = 0; b < batches; ++b) {
    const double t0 = now_us();
    WEFT_TRY(run(ctx, s));
    best = std::min(best, now_us() - t0);
  }
  *us = best;
  return Status::ok;
}

// Round trips of `bytes` between ranks 0 and `peer`, in `batches` schedules of `trips` each;
// the fastest batch counts (interference only ever adds time). Every rank runs the same
// schedules (empty off the pair) so that the communicator's collective sequence stays in step.
Status ping_pong(Transport& t, const Comm& world, int peer, size_t bytes, int trips, int batches,
                 double* us_per_trip) {
  auto s = std::make_shared<Schedule>("calibration");
  char* buf = s->scratch(bytes + 1);
  memset(buf, 0, bytes + 1);
  const int me = world.rank;
  for (int i = 0; i < trips && (me == 0 || me == peer); ++i) {
    s->new_round();
    if (me == 0) s->send(peer, buf, bytes); else s->recv(0, buf, bytes);
    s->new_round();
    if (me == 0) s->recv(peer, buf, bytes); else s->send(0, buf, bytes);
  }
  double us = 0;
  WEFT_TRY(fastest_run(t, world, s, batches, &us));
  *us_per_trip = us / trips;
  return Status::ok;
}

// alpha and beta between ranks 0 and `peer`, from a small and a large round trip.
Status measure_link(Transport& t, const Comm& world, int peer, double* alpha_us, double* beta_us_per_byte) {
  constexpr size_t kSmall = 8, kLarge = 256 * 1024;
  double small_us = 0, large_us = 0, warm = 0;
  // The first trips fault in the rings and buffers: warm up, then keep the fastest batch.
  WEFT_TRY(ping_pong(t, world, peer, kLarge, 2, 1, &warm));
  WEFT_TRY(ping_pong(t, world, peer, kSmall, 16, 6, &small_us));
  WEFT_TRY(ping_pong(t, world, peer, kLarge, 4, 3, &large_us));
  *alpha_us = small_us / 2;
  *beta_us_per_byte = std::max(1e-7, (large_us - small_us) / 2 / double(kLarge - kSmall));
  return Status::ok;
}

// `count` small messages from rank 0 to `peer` back to back, then one answer; the fastest of
// `batches` (like ping_pong, every rank runs the schedules).
Status burst(Transport& t, const Comm& world, int peer, int count, int batches, double* us) {
  auto s = std::make_shared<Schedule>("calibration");
  constexpr size_t kBytes = 8;
  char* buf = s->scratch(kBytes * size_t(count) + 1);
  memset(buf, 0, kBytes * size_t(count) + 1);
  const int me = world.rank;
  if (me == 0 || me == peer) {
    s->new_round();
    for (int i = 0; i < count; ++i) {
      if (me == 0) s->send(peer, buf + kBytes * size_t(i), kBytes);
      else s->recv(0, buf + kBytes * size_t(i), kBytes);
    }
    s->new_round();
    if (me == 0) s->recv(peer, buf, kBytes); else s->send(0, buf, kBytes);
  }
  return fastest_run(t, world, s, batches, us);
}

double reduction_us_per_byte() {
  std::vector<float> in(16384, 1.0f), inout(16384, 2.0f);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const double t0 = now_us();
    (void)reduce_local(ReduceOp::sum, BasicType::f32, in.data(), inout.data(), in.size());
    best = std::min(best, now_us() - t0);
  }
  return best / double(in.size() * sizeof(float));
}

}  // namespace

Status calibrate(Transport& t, const Comm& world, CostModel* out) {
  if (world.size < 2) {
    out->alpha_us = 1;
    out->beta_us_per_byte = 1e-4;
    out->gamma_us_per_byte = reduction_us_per_byte();
    out->source = "single rank (no peer to measure; every collective is local)";
    return Status::ok;
  }
  // Rank 0's nearest peers on its own node and on another one: each level's link.
  std::vector<uint32_t> node(size_t(world.size), 0);
  for (int r = 0; r < world.size; ++r) WEFT_TRY(t.boot().node_of(world.world_rank(r), &node[size_t(r)]));
  int near = -1, far = -1;
  for (int r = world.size - 1; r > 0; --r) (node[size_t(r)] == node[0] ? near : far) = r;
  double levels[4] = {0, 0, 0, 0};  // node alpha, beta; net alpha, beta
  if (near > 0) WEFT_TRY(measure_link(t, world, near, &levels[0], &levels[1]));
  if (far > 0) WEFT_TRY(measure_link(t, world, far, &levels[2], &levels[3]));
  const int first = near > 0 ? near : far;
  const double small_us = 2 * (near > 0 ? levels[0] : levels[2]);
  constexpr int kBurst = 32;
  double burst_us = 0;
  WEFT_TRY(burst(t, world, first, kBurst, 5, &burst_us));
  // The burst's messages follow each other at the gap; the first and the answer take a latency each.
  const double gap_us = std::max(1e-3, (burst_us - small_us) / kBurst);
  double shm_numbers[2] = {0, 0};
  // The shared-memory collectives' flag hand-off, where ranks 0 and 1 share a node.
  if (node[0] == node[1]) WEFT_TRY(shm::measure(t, world, &shm_numbers[0], &shm_numbers[1]));
  double all[8] = {levels[0], levels[1], levels[2], levels[3], reduction_us_per_byte(),
                   shm_numbers[0], shm_numbers[1], gap_us};
  CostModel unused;
  CollContext ctx{&t, world, unused};
  WEFT_TRY(run(ctx, build_bcast_binomial(world, all, sizeof all, 0)));
  out->node_alpha_us = all[0];
  out->node_beta_us_per_byte = all[1];
  out->net_alpha_us = all[2];
  out->net_beta_us_per_byte = all[3];
  out->alpha_us = all[0] > 0 ? all[0] : all[2];
  out->beta_us_per_byte = all[0] > 0 ? all[1] : all[3];
  out->gamma_us_per_byte = all[4];
  out->shm_alpha_us = all[5];
  out->shm_beta_us_per_byte = all[6];
  out->gap_us = all[7];
  out->source = "measured at init from rank 0 to its nearest peers";
  return Status::ok;
}

Status load_cost_model(const char* path, CostModel* out, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = std::string("WEFT_COLL_MODEL: cannot open '") + path + "'";
    return Status::invalid_arg;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_cost_model(text.str(), path, out, error);
}

Status parse_cost_model(std::string_view text, const char* origin, CostModel* out, std::string* error) {
  // The first three are required; without the shared-memory pair those algorithms are only
  // used where forced.
  constexpr int kFields = 10, kRequired = 3;
  CostModel m = *out;
  bool seen[kFields] = {};
  double* fields[kFields] = {&m.alpha_us, &m.beta_us_per_byte, &m.gamma_us_per_byte,
                             &m.shm_alpha_us, &m.shm_beta_us_per_byte, &m.gap_us,
                             &m.node_alpha_us, &m.node_beta_us_per_byte,
                             &m.net_alpha_us, &m.net_beta_us_per_byte};
  static constexpr const char* kNames[kFields] = {"alpha_us", "beta_us_per_byte", "gamma_us_per_byte",
                                                  "shm_alpha_us", "shm_beta_us_per_byte", "gap_us",
                                                  "node_alpha_us", "node_beta_us_per_byte",
                                                  "net_alpha_us", "net_beta_us_per_byte"};
  int lineno = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    std::string line(text.substr(at, eol - at));
    at = eol + 1;
    ++lineno;
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    char name[64];
    double value;
    int used = 0;
    const bool parsed = sscanf(line.c_str(), " %63[a-z_] = %lf %n", name, &value, &used) == 2 &&
                        size_t(used) == line.size();
    if (!parsed || !(value >= 0) || !std::isfinite(value)) {
      *error = std::string("WEFT_COLL_MODEL: ") + origin + ":" + std::to_string(lineno) +
               ": expected 'name = non-negative number'";
      return Status::invalid_arg;
    }
    int i = 0;
    while (i < kFields && strcmp(name, kNames[i]) != 0) ++i;
    if (i == kFields) {
      *error = std::string("WEFT_COLL_MODEL: ") + origin + ":" + std::to_string(lineno) +
               ": unknown parameter '" + name +
               "' (alpha_us, beta_us_per_byte, gamma_us_per_byte, shm_alpha_us, shm_beta_us_per_byte, "
               "gap_us, node_alpha_us, node_beta_us_per_byte, net_alpha_us, net_beta_us_per_byte)";
      return Status::invalid_arg;
    }
    *fields[i] = value;
    seen[i] = true;
  }
  for (int i = 0; i < kRequired; ++i) {
    if (!seen[i]) {
      *error = std::string("WEFT_COLL_MODEL: ") + origin + " does not set " + kNames[i];
      return Status::invalid_arg;
    }
  }
  m.source = "tuning file (WEFT_COLL_MODEL)";
  *out = m;
  return Status::ok;
}

CostModel model_for(const Comm& c, const CostModel& m) {
  CostModel seen = m;
  const Level link = spans_nodes(c) ? net_level(m) : node_level(m);
  seen.alpha_us = link.alpha_us;
  seen.beta_us_per_byte = link.beta_us_per_byte;
  return seen;
}

}  // namespace weft::coll
