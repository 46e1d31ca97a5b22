// The daemon's protocol engine: CHALLENGE, authenticated HELLO and WELCOME, BEGIN checks and
// agreement between leaders, FRAG checks, fragment slots under the window, RESULTs, and ending
// groups on errors.
#include "tools/aggd/aggregator.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "tools/aggd/reduce.h"

namespace weft::aggd {

namespace {

struct LeaderPart {
  bool begun = false;
  Range contrib, want;
};

// One fragment being reduced (or gathered): the bytes so far and how many leaders sent theirs.
struct Slot {
  std::vector<uint8_t> data;
  uint32_t arrivals = 0;
};

struct Operation {
  uint64_t seq = 0;
  uint32_t coll = 0, dtype = 0, op = 0;
  uint64_t total = 0, fragments = 0;
  uint32_t first_leader = 0;  // whose BEGIN defined it, for messages
  std::vector<LeaderPart> parts;
  uint32_t begun = 0;
  std::map<uint64_t, Slot> slots;
  uint64_t completed = 0;
};

std::string printable(const char* s, size_t n) {
  std::string out(s, n);
  for (char& ch : out)
    if (ch < 0x20 || ch > 0x7e) ch = '?';
  return out;
}

std::string describe(uint32_t coll, uint32_t dtype, uint32_t op, uint64_t total) {
  std::string s = coll_name(coll);
  if (is_reduction(coll)) s += std::string(" ") + op_name(op) + " of " + dtype_name(dtype);
  return s + " of " + std::to_string(total) + " bytes";
}

std::string range_text(Range r) {
  return "[" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.bytes) + ")";
}

}  // namespace

struct Group {
  std::string job_id;
  uint64_t comm_key = 0;
  Key job_key{};
  uint32_t leader_count = 0;
  std::map<uint32_t, Client*> members;  // by leader index
  bool welcomed = false;
  std::string left;  // a leader left the idle group: what to tell the others when they go on
  std::map<uint64_t, Operation> ops;
  uint32_t live_slots = 0;
};

Aggregator::Aggregator(const Options& options) : options_(options) {}
Aggregator::~Aggregator() = default;

void Aggregator::log(const char* fmt, ...) const {
  if (options_.quiet) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "weft-aggd: %s\n", line);
}

void Aggregator::on_connect(Client& c) {
  if (!random_bytes(c.nonce, sizeof c.nonce))
    return refuse(c, WEFT_OFFLOAD_ERR_INTERNAL, "cannot draw a random challenge (libcrypto's generator failed)");
  ChallengePayload ch;
  std::memcpy(ch.nonce, c.nonce, sizeof ch.nonce);
  put_frame(c.out, FrameType::challenge, &ch, sizeof ch);
}

bool Aggregator::in_operation(const Client& c) const { return c.group && !c.group->ops.empty(); }

void Aggregator::expire(Client& c, const std::string& why) {
  if (c.closing) return;
  ++stats_.timed_out;
  log("%s: %s", c.name.c_str(), why.c_str());
  on_disconnect(c, why);
  put_error(c.out, WEFT_OFFLOAD_ERR_TIMEOUT, why);
  c.closing = true;
}

void Aggregator::on_frame(Client& c, const Frame& f) {
  if (c.closing) return;
  switch (f.type) {
    case FrameType::hello: return on_hello(c, payload_as<HelloPayload>(f));
    case FrameType::begin:
      if (!c.said_hello) return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL, "BEGIN before HELLO");
      return on_begin(c, payload_as<BeginPayload>(f));
    case FrameType::frag:
      if (!c.said_hello) return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL, "FRAG before HELLO");
      return on_frag(c, payload_as<FragPayload>(f), f.payload + sizeof(FragPayload));
    default:  // the reader lets only client frame types through
      return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL,
                    std::string("unexpected frame type ") + frame_type_name(uint16_t(f.type)) + " from a client");
  }
}

void Aggregator::on_malformed(Client& c, const std::string& why) {
  if (!c.closing) refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL, why);
}

void Aggregator::on_disconnect(Client& c, const std::string& why) {
  Group* g = c.group;
  if (c.closing || !g) return;
  const std::string who = "leader " + std::to_string(c.leader_index) + " of the group";
  if (!g->welcomed) {
    log("%s: %s before the group was complete", c.name.c_str(), why.c_str());
    dissolve(*g, &c, WEFT_OFFLOAD_ERR_NETWORK, who + " was lost before the group was complete: " + why);
    return;
  }
  if (g->ops.empty()) {
    // Between operations: a clean leave (communicator teardown). The others hear of it only
    // if they start another operation.
    g->members.erase(c.leader_index);
    c.group = nullptr;
    if (g->members.empty()) {
      groups_.erase({g->job_id, g->comm_key});
    } else if (g->left.empty()) {
      g->left = who + " left: " + why;
    }
    return;
  }
  log("%s: lost in the middle of an operation: %s", c.name.c_str(), why.c_str());
  dissolve(*g, &c, WEFT_OFFLOAD_ERR_NETWORK, who + " was lost: " + why);
}

void Aggregator::on_hello(Client& c, const HelloPayload& h) {
  if (c.said_hello) return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL, "HELLO twice on one connection");
  // Authentication first: a client without the job's key learns nothing about groups and
  // touches none.
  const std::string job = hello_job_id(h);
  const Key job_key = derive_job_key(options_.daemon_key, job);
  const Mac expected = hello_mac(job_key, c.nonce, h);
  if (!mac_equal(expected.data(), h.mac)) {
    ++stats_.unauthenticated;
    return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL,
                  "authentication failed: the HELLO's MAC for job '" + printable(job.data(), job.size()) +
                      "' does not match (the client needs the daemon's key file, or a job key file for this job)");
  }
  if (h.leader_count == 0 || h.leader_count > kMaxLeaders)
    return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL,
                  "HELLO with leader_count " + std::to_string(h.leader_count) + ", outside [1, " +
                      std::to_string(kMaxLeaders) + "]");
  if (h.leader_index >= h.leader_count)
    return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL,
                  "HELLO with leader_index " + std::to_string(h.leader_index) + " not below leader_count " +
                      std::to_string(h.leader_count));
  // Membership is fixed by the group's first HELLO: a HELLO that does not fit is refused
  // alone (refuse() leaves groups alone for a client that is in none).
  const auto key = std::make_pair(job, h.comm_key);
  auto it = groups_.find(key);
  if (it != groups_.end()) {
    Group& g = *it->second;
    if (g.leader_count != h.leader_count)
      return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL,
                    "HELLO with leader_count " + std::to_string(h.leader_count) + ", but the group has " +
                        std::to_string(g.leader_count) + " leaders");
    if (g.welcomed)
      return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL, "HELLO for a group that is already complete (comm_key reused?)");
    if (g.members.count(h.leader_index))
      return refuse(c, WEFT_OFFLOAD_ERR_PROTOCOL,
                    "HELLO with leader_index " + std::to_string(h.leader_index) + ", which another connection holds");
  } else {
    auto fresh = std::make_unique<Group>();
    fresh->job_id = job;
    fresh->comm_key = h.comm_key;
    fresh->job_key = job_key;
    fresh->leader_count = h.leader_count;
    it = groups_.emplace(key, std::move(fresh)).first;
  }
  Group& g = *it->second;
  g.members[h.leader_index] = &c;
  c.said_hello = true;
  c.hello = h;
  c.group = &g;
  c.leader_index = h.leader_index;
  char key_text[32];
  snprintf(key_text, sizeof key_text, "0x%llx", (unsigned long long)h.comm_key);
  c.name = "leader " + std::to_string(h.leader_index) + "/" + std::to_string(h.leader_count) + " of job '" +
           printable(job.data(), job.size()) + "' comm " + key_text + " (" + c.name + ")";
  if (g.members.size() < g.leader_count) return;
  g.welcomed = true;
  ++stats_.groups;
  WelcomePayload w{};
  w.fragment_bytes = options_.fragment_bytes;
  w.window = options_.window;
  w.collectives = kAllCollectives;
  w.dtypes = kAllDtypes;
  w.ops = kAllOps;
  w.max_bytes = options_.max_bytes;
  for (auto& [index, member] : g.members) {
    const Mac mac = welcome_mac(g.job_key, member->nonce, member->hello, w);
    std::memcpy(w.mac, mac.data(), sizeof w.mac);
    put_frame(member->out, FrameType::welcome, &w, sizeof w);
  }
}

void Aggregator::on_begin(Client& c, const BeginPayload& b) {
  Group& g = *c.group;
  const auto proto = WEFT_OFFLOAD_ERR_PROTOCOL;
  if (!g.welcomed) return refuse(c, proto, "BEGIN before the group is complete (no WELCOME yet)");
  if (!g.left.empty()) return dissolve(g, nullptr, WEFT_OFFLOAD_ERR_NETWORK, g.left);
  if (b.seq != c.next_seq)
    return refuse(c, proto, "BEGIN with seq " + std::to_string(b.seq) + ", expected " + std::to_string(c.next_seq));
  if (c.in_op)
    return refuse(c, proto,
                  "BEGIN of seq " + std::to_string(b.seq) + " after only " + std::to_string(c.next_fragment) + " of " +
                      std::to_string(c.fragments) + " fragments of seq " + std::to_string(c.op_seq));
  if (!is_single_coll(b.coll)) return refuse(c, proto, "BEGIN with collective code " + std::to_string(b.coll));
  if (is_reduction(b.coll)) {
    if (b.dtype >= WEFT_OFFLOAD_DTYPE_COUNT || b.op >= WEFT_OFFLOAD_OP_COUNT)
      return refuse(c, proto,
                    "BEGIN with element type " + std::to_string(b.dtype) + " and operation " + std::to_string(b.op));
    if (!reduction_supported(b.dtype, b.op))
      return refuse(c, WEFT_OFFLOAD_ERR_UNSUPPORTED,
                    std::string("BEGIN with ") + op_name(b.op) + " on " + dtype_name(b.dtype) +
                        " (bitwise operations need an integer type)");
    if (b.total_bytes % element_bytes(b.dtype) != 0)
      return refuse(c, proto,
                    "BEGIN with total_bytes " + std::to_string(b.total_bytes) + ", not a multiple of " +
                        dtype_name(b.dtype) + "'s " + std::to_string(element_bytes(b.dtype)) + " bytes");
  }
  if (b.coll == WEFT_OFFLOAD_BARRIER && b.total_bytes != 0)
    return refuse(c, proto, "barrier BEGIN with total_bytes " + std::to_string(b.total_bytes) + ", expected 0");
  if (b.total_bytes > options_.max_bytes)
    return refuse(c, WEFT_OFFLOAD_ERR_UNSUPPORTED,
                  "BEGIN of " + std::to_string(b.total_bytes) + " bytes, above the limit of " +
                      std::to_string(options_.max_bytes));
  const Range contrib = b.coll == WEFT_OFFLOAD_ALLGATHER ? Range{b.contrib_offset, b.contrib_bytes} : Range{};
  if (!range_inside(contrib.offset, contrib.bytes, b.total_bytes))
    return refuse(c, proto, "BEGIN with a contribution outside the result of " + std::to_string(b.total_bytes) + " bytes");
  if (!range_inside(b.want_offset, b.want_bytes, b.total_bytes))
    return refuse(c, proto, "BEGIN with a want range outside the result of " + std::to_string(b.total_bytes) + " bytes");
  const uint64_t fragments = fragment_count(b.total_bytes, options_.fragment_bytes);
  if (fragments > (uint64_t(1) << 32))  // FRAG numbers fragments with 32 bits
    return refuse(c, WEFT_OFFLOAD_ERR_UNSUPPORTED, "BEGIN of more fragments than FRAG can number");

  auto it = g.ops.find(b.seq);
  if (it == g.ops.end()) {
    Operation op;
    op.seq = b.seq;
    op.coll = b.coll;
    op.dtype = is_reduction(b.coll) ? b.dtype : 0;
    op.op = is_reduction(b.coll) ? b.op : 0;
    op.total = b.total_bytes;
    op.fragments = fragments;
    op.first_leader = c.leader_index;
    op.parts.resize(g.leader_count);
    it = g.ops.emplace(b.seq, std::move(op)).first;
  } else {
    const Operation& op = it->second;
    const bool same = op.coll == b.coll && op.total == b.total_bytes &&
                      (!is_reduction(b.coll) || (op.dtype == b.dtype && op.op == b.op));
    if (!same) {
      const std::string why = "the leaders disagree on operation seq " + std::to_string(b.seq) + ": leader " +
                              std::to_string(op.first_leader) + " began " +
                              describe(op.coll, op.dtype, op.op, op.total) + ", leader " +
                              std::to_string(c.leader_index) + " " +
                              describe(b.coll, b.dtype, b.op, b.total_bytes);
      log("%s: %s", c.name.c_str(), why.c_str());
      ++stats_.refused;
      return dissolve(g, nullptr, proto, why);
    }
  }
  Operation& op = it->second;
  op.parts[c.leader_index] = LeaderPart{true, contrib, Range{b.want_offset, b.want_bytes}};
  ++op.begun;
  if (op.coll == WEFT_OFFLOAD_ALLGATHER && op.begun == g.leader_count) {
    // Every byte of the result must come from exactly one leader.
    std::vector<std::pair<Range, uint32_t>> parts;
    for (uint32_t i = 0; i < g.leader_count; ++i)
      if (op.parts[i].contrib.bytes) parts.push_back({op.parts[i].contrib, i});
    std::sort(parts.begin(), parts.end(),
              [](const auto& x, const auto& y) { return x.first.offset < y.first.offset; });
    uint64_t covered = 0;
    std::string why;
    for (const auto& [r, leader] : parts) {
      if (r.offset != covered) {
        why = r.offset > covered ? "no leader contributes bytes [" + std::to_string(covered) + ", " +
                                       std::to_string(r.offset) + ")"
                                 : "leader " + std::to_string(leader) + "'s contribution " + range_text(r) +
                                       " overlaps another";
        break;
      }
      covered += r.bytes;
    }
    if (why.empty() && covered != op.total)
      why = "no leader contributes bytes [" + std::to_string(covered) + ", " + std::to_string(op.total) + ")";
    if (!why.empty()) {
      why = "the allgather contributions of seq " + std::to_string(b.seq) + " do not tile its result: " + why;
      log("%s: %s", c.name.c_str(), why.c_str());
      ++stats_.refused;
      return dissolve(g, nullptr, proto, why);
    }
  }
  c.in_op = true;
  c.op_seq = b.seq;
  c.next_fragment = 0;
  c.fragments = fragments;
  c.contrib = contrib;
  ++c.next_seq;
}

void Aggregator::on_frag(Client& c, const FragPayload& fp, const uint8_t* bytes) {
  Group& g = *c.group;
  const auto proto = WEFT_OFFLOAD_ERR_PROTOCOL;
  if (!g.welcomed) return refuse(c, proto, "FRAG before the group is complete (no WELCOME yet)");
  if (!c.in_op)
    return refuse(c, proto,
                  "FRAG of seq " + std::to_string(fp.seq) + " with no operation begun that has fragments left to send");
  if (fp.seq != c.op_seq)
    return refuse(c, proto,
                  "FRAG of seq " + std::to_string(fp.seq) + ", the current operation is seq " + std::to_string(c.op_seq));
  if (fp.fragment >= c.fragments)
    return refuse(c, proto,
                  "FRAG for fragment " + std::to_string(fp.fragment) + ", the operation has only " +
                      std::to_string(c.fragments) + " fragments");
  if (fp.fragment != c.next_fragment)
    return refuse(c, proto,
                  "FRAG for fragment " + std::to_string(fp.fragment) + ", expected fragment " +
                      std::to_string(c.next_fragment) + " (fragments go in order)");
  auto op_it = g.ops.find(c.op_seq);
  if (op_it == g.ops.end())  // cannot happen: an operation lives until all its fragments are answered
    return refuse(c, WEFT_OFFLOAD_ERR_INTERNAL, "internal error: operation seq " + std::to_string(c.op_seq) + " is gone");
  Operation& op = op_it->second;
  const Range frag = fragment_range(op.total, options_.fragment_bytes, fp.fragment);
  const Range expected = is_reduction(op.coll) ? Range{0, frag.bytes} : overlap_in_fragment(c.contrib, frag);
  if (fp.offset != expected.offset || fp.bytes != expected.bytes)
    return refuse(c, proto,
                  "FRAG " + std::to_string(fp.fragment) + " carries bytes " + range_text({fp.offset, fp.bytes}) +
                      " of the fragment, expected " + range_text(expected));
  auto slot_it = op.slots.find(fp.fragment);
  if (slot_it == op.slots.end()) {
    if (g.live_slots >= options_.window)
      return refuse(c, proto,
                    "FRAG " + std::to_string(fp.fragment) + " of seq " + std::to_string(fp.seq) +
                        " exceeds the window: the group already holds " + std::to_string(options_.window) +
                        " fragments (wait for RESULTs)");
    slot_it = op.slots.emplace(fp.fragment, Slot{}).first;
    slot_it->second.data.resize(frag.bytes);
    ++g.live_slots;
  }
  Slot& slot = slot_it->second;
  if (is_reduction(op.coll) && slot.arrivals > 0)
    reduce_into(op.dtype, op.op, slot.data.data(), bytes, fp.bytes);
  else if (fp.bytes)
    std::memcpy(slot.data.data() + fp.offset, bytes, fp.bytes);
  ++slot.arrivals;
  if (++c.next_fragment == c.fragments) c.in_op = false;
  if (slot.arrivals == g.leader_count) complete_fragment(g, c.op_seq, fp.fragment);
}

void Aggregator::complete_fragment(Group& g, uint64_t seq, uint64_t fragment) {
  auto op_it = g.ops.find(seq);
  Operation& op = op_it->second;
  auto slot_it = op.slots.find(fragment);
  const Range frag = fragment_range(op.total, options_.fragment_bytes, fragment);
  for (auto& [index, member] : g.members) {
    const Range part = overlap_in_fragment(op.parts[index].want, frag);
    const FragPayload r{seq, uint32_t(fragment), uint32_t(part.offset), uint32_t(part.bytes), 0};
    put_frame(member->out, FrameType::result, &r, sizeof r, slot_it->second.data.data() + part.offset,
              uint32_t(part.bytes));
  }
  op.slots.erase(slot_it);
  --g.live_slots;
  ++stats_.fragments;
  if (++op.completed == op.fragments) {
    g.ops.erase(op_it);
    ++stats_.operations;
  }
}

void Aggregator::refuse(Client& c, int code, const std::string& why) {
  log("%s: refused: %s", c.name.c_str(), why.c_str());
  put_error(c.out, code, why);
  c.closing = true;
  ++stats_.refused;
  if (Group* g = c.group) {
    g->members.erase(c.leader_index);
    c.group = nullptr;
    dissolve(*g, &c, code, "leader " + std::to_string(c.leader_index) + " of the group was lost: " + why);
  }
}

void Aggregator::dissolve(Group& g, const Client* culprit, int code, const std::string& why) {
  for (auto& [index, member] : g.members) {
    member->group = nullptr;
    if (member == culprit || member->closing) continue;
    put_error(member->out, code, why);
    member->closing = true;
  }
  groups_.erase({g.job_id, g.comm_key});  // g is gone from here on
}

}  // namespace weft::aggd
