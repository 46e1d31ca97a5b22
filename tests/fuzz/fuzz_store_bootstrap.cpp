// Fuzzes the bootstrap through a key-value store (pmix/bootstrap.h, include/weft/store.h): an
// in-process store answers what the input says, and one process bootstraps through it as rank
// r of N, then publishes its facts, exchanges, reads every rank's blobs and node, checks its
// host's peers, passes a barrier and marks its finalize. Each step succeeds, or fails with a
// status and an error detail; nothing reads out of bounds or waits for long.
//
// Input: byte 0 gives N (1 + b % 8), byte 1 the rank (b % N); then records of a tag byte, an
// argument byte, a 2-byte little-endian length and that many bytes (fewer at the end):
//   pin_value        the store answers these bytes for a key, whatever weft sets there;
//   odd_answer       the store misbehaves on a key, the first byte saying how (the key missing,
//                    get not calling the sink, calling it twice, a value of exactly 1 MiB or
//                    just over, a null value of non-zero length), the rest its bytes;
//   barrier_counter  barrier n's counter holds this (8 bytes LE) before the job's ranks add;
//   barrier_arrival  barrier n: ranks adding before this one, checks before a peer's done key
//                    shows, whether a stale done key is there from the start;
//   op_fault         set/get/add/check fails (or does nothing and says it succeeded) at call i,
//                    once or from then on.
// A key is picked by argument among "job" and each rank's host/<r>, m/<r>/<modex key>, fin/<r>.
// Without records the store is honest: every peer is alive on this host and agrees, its keys
// answering what this rank wrote under its own rank.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "include/weft/store.h"
#include "pmix/bootstrap.h"
#include "runtime/log.h"
#include "runtime/status.h"

using namespace weft;

namespace {

// The longest value the bootstrap reads from a store (kStoreValueMax in pmix/bootstrap.cpp).
constexpr size_t kValueMax = size_t(1) << 20;
constexpr int kMaxRanks = 8;
constexpr int kScriptedBarriers = 4;  // init, exchange and one barrier use 3
// Checks of a done key, past those a peer needs to set it, after which the store is gone (the
// launcher ends a job whose barrier does not complete, taking its store with it).
constexpr unsigned kChecksUntilStoreGone = 4;
const char* const kModexKeys[] = {"weft.pid", "weft.node", "weft.agreement"};
const std::string kFacts = "weft=fuzz\nbuild=store\n";

void require(bool ok) {
  if (!ok) abort();
}

enum Tag : uint8_t { pin_value, odd_answer, barrier_counter, barrier_arrival, op_fault, tag_count };
enum class Answer : uint8_t { value, missing, no_sink, sink_twice, exactly_max, over_max, null_value, count };
enum Op : uint8_t { op_set, op_get, op_add, op_check, op_count };

struct Pinned {
  Answer answer = Answer::value;
  std::string bytes;
};

struct BarrierScript {
  uint64_t counter_before = 0;       // fresh store: 0
  int arrivals_before = -1;          // -1: all the other ranks
  unsigned checks_until_done = 0;    // a peer's done key shows after this many checks
  bool stale_done = false;
  unsigned checks = 0;
};

struct Fault {
  Op op;
  unsigned call;
  bool from_then_on, silent;
};

struct FakeStore {
  int rank = 0, size = 1;
  std::map<std::string, Pinned> pinned;
  std::map<std::string, std::string> written;  // what weft set
  BarrierScript barriers[kScriptedBarriers];
  BarrierScript unscripted;  // later barriers: fresh, every other rank there first
  std::vector<Fault> faults;
  unsigned calls[op_count] = {};

  enum class Outcome { proceed, fail, silent };
  Outcome outcome(Op op) {
    const unsigned call = calls[op]++;
    for (const Fault& f : faults)
      if (f.op == op && (call == f.call || (f.from_then_on && call > f.call)))
        return f.silent ? Outcome::silent : Outcome::fail;
    return Outcome::proceed;
  }
};

// Every key weft uses lies under "weft/".
std::string strip(const char* key) {
  require(key != nullptr && strncmp(key, "weft/", 5) == 0);
  return key + 5;
}

std::string key_by_index(unsigned index, int size) {
  const unsigned per_rank = 1 + unsigned(std::size(kModexKeys)) + 1;  // host, modex keys, fin
  index %= 1 + per_rank * unsigned(size);
  if (index == 0) return "job";
  const unsigned r = (index - 1) / per_rank, which = (index - 1) % per_rank;
  const std::string rank = std::to_string(r);
  if (which == 0) return "host/" + rank;
  if (which == per_rank - 1) return "fin/" + rank;
  return "m/" + rank + "/" + kModexKeys[which - 1];
}

// A peer's host name or modex key answers, unless pinned, what this rank wrote under its own.
std::string own_counterpart(const std::string& name, int rank) {
  if (name.rfind("host/", 0) == 0) return "host/" + std::to_string(rank);
  if (name.rfind("m/", 0) == 0) {
    const size_t slash = name.find('/', 2);
    if (slash != std::string::npos) return "m/" + std::to_string(rank) + name.substr(slash);
  }
  return {};
}

// Barrier n's keys: "b/<n>" (its counter) and "b/<n>/done".
bool barrier_key(const std::string& name, unsigned long* n, bool* done) {
  if (name.rfind("b/", 0) != 0) return false;
  char* end = nullptr;
  *n = strtoul(name.c_str() + 2, &end, 10);
  if (end == name.c_str() + 2) return false;
  *done = strcmp(end, "/done") == 0;
  return *done || *end == '\0';
}

const std::vector<char>& big_value() {
  static const std::vector<char> bytes(kValueMax + 1, 'v');
  return bytes;
}

FakeStore* of(void* ctx) { return static_cast<FakeStore*>(ctx); }

int store_set(void* ctx, const char* key, const void* value, size_t len) {
  FakeStore& s = *of(ctx);
  const std::string name = strip(key);
  require(len == 0 || value != nullptr);
  const FakeStore::Outcome o = s.outcome(op_set);
  if (o != FakeStore::Outcome::proceed) return o == FakeStore::Outcome::fail;
  s.written[name].assign(static_cast<const char*>(value), len);
  return 0;
}

// Where the store finds a key's value, if anywhere (pinned odd answers aside).
const std::string* honest_value(FakeStore& s, const std::string& name) {
  static const std::string job = "fuzzjob";
  if (auto it = s.written.find(name); it != s.written.end()) return &it->second;
  if (const std::string own = own_counterpart(name, s.rank); !own.empty())
    if (auto it = s.written.find(own); it != s.written.end()) return &it->second;
  if (name == "job") return &job;
  return nullptr;
}

int store_get(void* ctx, const char* key, weft_store_sink_fn sink, void* sink_ctx) {
  FakeStore& s = *of(ctx);
  const std::string name = strip(key);
  const FakeStore::Outcome o = s.outcome(op_get);
  if (o != FakeStore::Outcome::proceed) return o == FakeStore::Outcome::fail;
  const auto pin = s.pinned.find(name);
  if (pin == s.pinned.end()) {
    const std::string* v = honest_value(s, name);
    if (!v) return 1;  // a real store's get gives up after its timeout
    sink(sink_ctx, v->data(), v->size());
    return 0;
  }
  const std::string& bytes = pin->second.bytes;
  switch (pin->second.answer) {
    case Answer::value: sink(sink_ctx, bytes.data(), bytes.size()); break;
    case Answer::missing: return 1;
    case Answer::no_sink: break;
    case Answer::sink_twice:
      sink(sink_ctx, bytes.data(), bytes.size());
      sink(sink_ctx, big_value().data(), bytes.size() % 2 ? big_value().size() : 0);
      break;
    case Answer::exactly_max: sink(sink_ctx, big_value().data(), kValueMax); break;
    case Answer::over_max: sink(sink_ctx, big_value().data(), big_value().size()); break;
    case Answer::null_value: sink(sink_ctx, nullptr, bytes.size() + 1); break;
    case Answer::count: abort();
  }
  return 0;
}

int store_add(void* ctx, const char* key, long long delta, long long* result) {
  FakeStore& s = *of(ctx);
  const std::string name = strip(key);
  require(result != nullptr);
  const FakeStore::Outcome o = s.outcome(op_add);
  if (o != FakeStore::Outcome::proceed) return o == FakeStore::Outcome::fail;
  unsigned long n = 0;
  bool done = false;
  BarrierScript& b = barrier_key(name, &n, &done) && !done && n < kScriptedBarriers ? s.barriers[n] : s.unscripted;
  const uint64_t before = b.arrivals_before < 0 ? uint64_t(s.size - 1) : uint64_t(b.arrivals_before);
  *result = static_cast<long long>(b.counter_before + before + uint64_t(delta));
  return 0;
}

// Whether a rank other than this one gets the job's size from its add, and so sets the done key.
bool peer_completes(const FakeStore& s, const BarrierScript& b) {
  if (b.counter_before >= uint64_t(s.size)) return false;
  const uint64_t before = b.arrivals_before < 0 ? uint64_t(s.size - 1) : uint64_t(b.arrivals_before);
  return b.counter_before + before + 1 != uint64_t(s.size);
}

int store_check(void* ctx, const char* key, int* exists) {
  FakeStore& s = *of(ctx);
  const std::string name = strip(key);
  require(exists != nullptr);
  const FakeStore::Outcome o = s.outcome(op_check);
  unsigned long n = 0;
  bool done = false;
  if (barrier_key(name, &n, &done) && done && !s.written.count(name)) {
    BarrierScript& b = n < kScriptedBarriers ? s.barriers[n] : s.unscripted;
    // Checks that see no done key are bounded whatever the faults: the store goes away.
    if (++b.checks > kChecksUntilStoreGone + b.checks_until_done) return 1;
    if (o != FakeStore::Outcome::proceed) return o == FakeStore::Outcome::fail;
    if (b.stale_done) *exists = 1;
    else if (peer_completes(s, b)) *exists = b.checks > b.checks_until_done;
    return 0;
  }
  if (o != FakeStore::Outcome::proceed) return o == FakeStore::Outcome::fail;
  const auto pin = s.pinned.find(name);
  if (pin != s.pinned.end()) *exists = pin->second.answer != Answer::missing;
  else *exists = honest_value(s, name) != nullptr;
  return 0;
}

uint64_t little_endian(const std::string& bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) v |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  return v;
}

uint8_t byte_at(const std::string& bytes, size_t i) { return i < bytes.size() ? uint8_t(bytes[i]) : 0; }

// False when the input is too short to name a job.
bool read_script(const uint8_t* data, size_t size, FakeStore* s) {
  if (size < 2) return false;
  s->size = 1 + data[0] % kMaxRanks;
  s->rank = data[1] % s->size;
  size_t pos = 2;
  while (pos + 4 <= size) {
    const uint8_t tag = data[pos] % tag_count, arg = data[pos + 1];
    const size_t len = std::min(size_t(data[pos + 2]) | size_t(data[pos + 3]) << 8, size - pos - 4);
    const std::string bytes(reinterpret_cast<const char*>(data + pos + 4), len);
    pos += 4 + len;
    BarrierScript& barrier = s->barriers[arg % kScriptedBarriers];
    switch (tag) {
      case pin_value: s->pinned[key_by_index(arg, s->size)] = {Answer::value, bytes}; break;
      case odd_answer:
        s->pinned[key_by_index(arg, s->size)] = {Answer(byte_at(bytes, 0) % uint8_t(Answer::count)),
                                                  bytes.substr(std::min<size_t>(1, bytes.size()))};
        break;
      case barrier_counter: barrier.counter_before = little_endian(bytes); break;
      case barrier_arrival:
        barrier.arrivals_before = byte_at(bytes, 0) % s->size;
        barrier.checks_until_done = byte_at(bytes, 1) % 4;
        barrier.stale_done = byte_at(bytes, 2) & 1;
        break;
      case op_fault:
        s->faults.push_back({Op(arg % op_count), byte_at(bytes, 0), bool(byte_at(bytes, 1) & 1),
                             bool(byte_at(bytes, 1) & 2)});
        break;
    }
  }
  return true;
}

// A step ends well or with a detail saying why not.
void require_clean(Status st) { require(st == Status::ok || !error_detail().empty()); }

void check_layout(Bootstrap& boot, const FakeStore& s) {
  require(boot.rank() == s.rank && boot.size() == s.size && !boot.singleton());
  require(!boot.job_id().empty() && boot.job_id().size() <= 64);
  require(boot.node_id() < uint32_t(s.size));
  const std::vector<int>& local = boot.local_peers();
  require(!local.empty() && int(local.size()) == boot.local_size() && boot.local_rank() >= 0 &&
          boot.local_rank() < boot.local_size() && local[size_t(boot.local_rank())] == s.rank);
  require(boot.host_peers() == local);
  for (int r = 0; r < s.size; ++r) {
    uint32_t node = UINT32_MAX;
    require(boot.node_of(r, &node) == Status::ok);
    require(node < uint32_t(s.size) && boot.is_local(r) == (node == boot.node_id()));
  }
}

void silence_log() {
  LogSettings quiet;
  quiet.level = LogLevel::error;
  quiet.subsys_mask = 0;
  quiet.file_pattern = "/dev/null";  // errors are expected here, by the thousand
  log_configure(quiet, 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = (silence_log(), true);
  (void)quiet;
  FakeStore store;
  if (!read_script(data, size, &store)) return 0;

  weft_store_ops ops{};
  ops.struct_size = sizeof ops;
  ops.ctx = &store;
  ops.rank = store.rank;
  ops.size = store.size;
  ops.set = store_set;
  ops.get = store_get;
  ops.add = store_add;
  ops.check = store_check;
  set_bootstrap_store(&ops);
  std::unique_ptr<Bootstrap> boot;
  set_error_detail("");
  const Status init = Bootstrap::init(&boot);
  set_bootstrap_store(nullptr);
  require_clean(init);
  if (init != Status::ok) return 0;
  check_layout(*boot, store);

  set_error_detail("");
  Status st = boot->require_agreement(kFacts);
  require_clean(st);
  if (st == Status::ok) {
    set_error_detail("");
    require_clean(boot->exchange());
  }
  std::vector<char> blob;
  for (int r = 0; r < store.size; ++r)
    for (const char* key : kModexKeys) {
      set_error_detail("");
      st = boot->get(r, key, &blob);
      require_clean(st);
      require(st != Status::ok || blob.size() <= kValueMax);
    }
  require(boot->get(store.size, kModexKeys[0], &blob) == Status::invalid_rank);
  boot->check_liveness_now();
  set_error_detail("");
  require_clean(boot->barrier());
  boot->announce_finalize();
  require(boot->first_failed() >= -1 && boot->first_failed() < store.size && boot->first_failed() != store.rank);
  return 0;
}
