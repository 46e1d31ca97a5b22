// aggd.plugin: libweft-offload-aggd.so against a real weft-aggd, with node leaders forked as
// processes. Each leader dlopen()s the plugin, checks its table, sets a communicator up and
// checks every result against one computed locally: allreduce (every type x operation, sizes
// from 0 elements to many fragments, in place), reduce_scatter (different ranges per leader),
// allgather (unequal contributions, one of 0 bytes), barrier (nobody leaves before the last
// leader has posted it),
// argument errors; with 1, 3 and 5 leaders. Then two groups interleaved in the same processes,
// 64 connections at once, a TCP daemon, timeouts, setup errors (the key file too: missing,
// open to others, a job key for another job), a fake daemon that misbehaves (a WELCOME that
// does not prove the key among its cases), and the daemon killed with
// SIGKILL in the middle of an allreduce: every leader must get ERR_NETWORK (no hang: the
// parent gives up after 20 s).
// Children report through their exit status. Usage: weft_aggd_plugin_test <weft-aggd> <plugin .so>
#include <dlfcn.h>

#include <sys/mman.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <type_traits>

#include "aggd_test_util.h"
#include "weft/offload.h"

using namespace aggd_test;

namespace {

constexpr uint32_t kFragment = 4096;
constexpr uint32_t kWindow = 4;

std::string g_daemon_exe, g_plugin_path;
std::string g_key_path;  // the daemon's key file, which the leaders are given
const char* const kJob = "aggd-plugin-test";  // the job id weft would pass (node_info)
// Shared by every forked leader (mapped before the first fork): set by the last leader just
// before it posts the barrier the others are waiting in.
std::atomic<uint32_t>* g_last_leader_posted = nullptr;

// --- loading the plugin ----------------------------------------------------------------------

std::string g_last_log;  // the plugin's last log message
void plugin_log(int level, const char* message) {
  g_last_log = message ? message : "";
  if (getenv("AGGD_TEST_VERBOSE")) fprintf(stderr, "[pid %d, plugin level %d] %s\n", int(getpid()), level, message);
}

struct Plugin {
  const weft_offload_plugin* t = nullptr;
  void* handle = nullptr;  // the plugin's, from init
  const char* error(void* comm = nullptr) const {
    const char* e = t->last_error ? t->last_error(handle, comm) : nullptr;
    return e && *e ? e : "(no message)";
  }
};

const weft_offload_plugin* load_table() {
  void* lib = dlopen(g_plugin_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  CHECK(lib, "dlopen %s: %s", g_plugin_path.c_str(), dlerror());
  auto entry = reinterpret_cast<weft_offload_entry_v1_fn>(dlsym(lib, WEFT_OFFLOAD_ENTRY_V1));
  CHECK(entry, "the plugin exports no %s", WEFT_OFFLOAD_ENTRY_V1);
  const weft_offload_plugin* t = entry();
  CHECK(t && t->abi_version == WEFT_OFFLOAD_ABI_VERSION, "the plugin's ABI version is %u, expected %u",
        t ? t->abi_version : 0, WEFT_OFFLOAD_ABI_VERSION);
  CHECK(t->struct_size == sizeof(weft_offload_plugin) && t->name && strcmp(t->name, "aggd") == 0,
        "the plugin table: struct_size %u, name %s", t->struct_size, t->name ? t->name : "(null)");
  CHECK(t->init && t->comm_setup && t->query && t->post && t->test && t->comm_teardown && t->finalize &&
            t->last_error,
        "the plugin table lacks a function");
  return t;
}

// weft passes its settings registry; the test passes the environment it sets before each init.
const char* test_setting(const char* name) { return getenv(name); }

weft_offload_node_info node_info(int index, int count) {
  return {sizeof(weft_offload_node_info), kJob, index, count, uint32_t(index), uint32_t(count), "localhost",
          test_setting};
}

Plugin open_plugin(int index, int count) {
  Plugin p;
  p.t = load_table();
  const weft_offload_node_info node = node_info(index, count);
  const int rc = p.t->init(&node, plugin_log, &p.handle);
  CHECK(rc == WEFT_OFFLOAD_OK, "init: status %d: %s", rc, p.t->last_error(nullptr, nullptr));
  return p;
}

void* setup(Plugin& p, uint64_t key, int index, int count) {
  weft_offload_comm_info info{sizeof info, key, index, count};
  void* comm = nullptr;
  const int rc = p.t->comm_setup(p.handle, &info, &comm);
  CHECK(rc == WEFT_OFFLOAD_OK && comm, "comm_setup of leader %d/%d, key %llu: status %d: %s", index, count,
        (unsigned long long)key, rc, p.error());
  weft_offload_caps caps{};
  caps.struct_size = sizeof caps;
  CHECK(p.t->query(comm, &caps) == WEFT_OFFLOAD_OK, "query: %s", p.error(comm));
  CHECK(caps.struct_size == sizeof caps && caps.collectives == 0xf && caps.dtypes == 0x3f && caps.ops == 0x7f &&
            caps.fragment_bytes == kFragment && caps.max_bytes >= (16u << 20),
        "caps: struct_size %u collectives 0x%x dtypes 0x%x ops 0x%x fragment %llu max %llu", caps.struct_size,
        caps.collectives, caps.dtypes, caps.ops, (unsigned long long)caps.fragment_bytes,
        (unsigned long long)caps.max_bytes);
  return comm;
}

// Polls an operation to its end; the plugin's status. Yields the CPU between polls: leaders
// and the daemon share 2 cores.
int wait_op(Plugin& p, void* comm, void* op, double timeout_s = 60) {
  const double deadline = now_s() + timeout_s;
  for (int spins = 0;; ++spins) {
    int done = 0;
    const int rc = p.t->test(comm, op, &done);
    if (rc != WEFT_OFFLOAD_OK) return rc;
    if (done) return WEFT_OFFLOAD_OK;
    if (now_s() > deadline) fail("an operation did not complete within %.0f s", timeout_s);
    if (spins > 20) usleep(50);
    else sched_yield();
  }
}

int run_op(Plugin& p, void* comm, weft_offload_op_args a) {
  a.struct_size = sizeof a;
  void* op = nullptr;
  const int rc = p.t->post(comm, &a, &op);
  if (rc != WEFT_OFFLOAD_OK) return rc;
  return wait_op(p, comm, op);
}

void must(Plugin& p, void* comm, const weft_offload_op_args& a, const char* what) {
  const int rc = run_op(p, comm, a);
  CHECK(rc == WEFT_OFFLOAD_OK, "%s: status %d: %s", what, rc, p.error(comm));
}

// --- data and reference results ----------------------------------------------------------------

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Leader l's element i. Floats are small integers when `exact` (any order of reduction gives
// the same bits), else fractions (compared with a tolerance).
template <class T>
T element(int l, uint64_t i, uint64_t salt, bool exact) {
  const uint64_t v = mix(salt * 0x100000001b3ull + uint64_t(l) * 0x1000000000ull + i);
  if constexpr (std::is_integral_v<T>) {
    return T(v);
  } else {
    return exact ? T(int(v % 17) - 8) : T(double(v % 100000) / 997.0 + 0.125);
  }
}

template <class T>
T reference(uint32_t op, T a, T b) {
  using U = std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>, std::type_identity<T>>;
  using A = typename U::type;
  switch (op) {
    case WEFT_OFFLOAD_SUM: return T(A(a) + A(b));
    case WEFT_OFFLOAD_PROD: return T(A(a) * A(b));
    case WEFT_OFFLOAD_MIN: return std::min(a, b);
    case WEFT_OFFLOAD_MAX: return std::max(a, b);
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case WEFT_OFFLOAD_BAND: return a & b;
      case WEFT_OFFLOAD_BOR: return a | b;
      case WEFT_OFFLOAD_BXOR: return a ^ b;
    }
  }
  fail("no reference for operation %u", op);
}

template <class T>
T expected_at(uint32_t op, int count, uint64_t i, uint64_t salt, bool exact) {
  T acc = element<T>(0, i, salt, exact);
  for (int l = 1; l < count; ++l) acc = reference(op, acc, element<T>(l, i, salt, exact));
  return acc;
}

template <class T>
bool same(T got, T want, bool exact) {
  if constexpr (std::is_integral_v<T>) {
    return got == want;
  } else {
    if (exact) return memcmp(&got, &want, sizeof got) == 0;
    return std::fabs(double(got) - double(want)) <= 1e-5 * std::max(1.0, std::fabs(double(want)));
  }
}

struct Ctx {
  Plugin& p;
  void* comm;
  int index, count;
};

template <class T>
void allreduce_case(Ctx& c, uint32_t dtype, uint32_t op, uint64_t n, bool in_place, bool exact, uint64_t salt) {
  std::vector<T> send(n), recv(n + 1);
  for (uint64_t i = 0; i < n; ++i) send[i] = element<T>(c.index, i, salt, exact);
  const T guard = element<T>(99, 0, salt, true);
  recv[n] = guard;
  weft_offload_op_args a{};
  a.coll = WEFT_OFFLOAD_ALLREDUCE;
  a.dtype = dtype;
  a.op = op;
  a.count = n;
  a.send = in_place ? static_cast<const void*>(send.data()) : send.data();
  a.recv = in_place ? static_cast<void*>(send.data()) : recv.data();
  const std::string what = format("allreduce %u/%u of %llu elements%s", dtype, op, (unsigned long long)n,
                                  in_place ? " in place" : "");
  must(c.p, c.comm, a, what.c_str());
  const T* got = in_place ? send.data() : recv.data();
  for (uint64_t i = 0; i < n; ++i) {
    const T want = expected_at<T>(op, c.count, i, salt, exact);
    CHECK(same(got[i], want, exact), "%s: element %llu is %g, expected %g", what.c_str(), (unsigned long long)i,
          double(got[i]), double(want));
  }
  CHECK(same(recv[n], guard, true), "%s: wrote past the buffer", what.c_str());
}

template <class T>
void reduce_scatter_case(Ctx& c, uint32_t dtype, uint32_t op, uint64_t n, uint64_t from, uint64_t len, bool in_place,
                         uint64_t salt) {
  std::vector<T> send(n), recv(len + 8);
  for (uint64_t i = 0; i < n; ++i) send[i] = element<T>(c.index, i, salt, true);
  const T guard = element<T>(99, 1, salt, true);
  for (auto& x : recv) x = guard;
  weft_offload_op_args a{};
  a.coll = WEFT_OFFLOAD_REDUCE_SCATTER;
  a.dtype = dtype;
  a.op = op;
  a.count = n;
  a.recv_offset = from;
  a.recv_count = len;
  a.send = send.data();
  a.recv = in_place ? send.data() : recv.data();  // in place: the result overwrites the start of send
  const std::string what = format("reduce_scatter %u/%u of [%llu, +%llu) of %llu%s", dtype, op,
                                  (unsigned long long)from, (unsigned long long)len, (unsigned long long)n,
                                  in_place ? " in place" : "");
  must(c.p, c.comm, a, what.c_str());
  const T* got = in_place ? send.data() : recv.data();
  for (uint64_t i = 0; i < len; ++i) {
    const T want = expected_at<T>(op, c.count, from + i, salt, true);
    CHECK(same(got[i], want, true), "%s: element %llu is %g, expected %g", what.c_str(), (unsigned long long)i,
          double(got[i]), double(want));
  }
  if (!in_place)
    for (uint64_t i = len; i < len + 8; ++i) CHECK(same(recv[i], guard, true), "%s: wrote past its range", what.c_str());
}

void allreduce_any(Ctx& c, uint32_t dtype, uint32_t op, uint64_t n, bool in_place, bool exact, uint64_t salt) {
  switch (dtype) {
    case WEFT_OFFLOAD_INT32: return allreduce_case<int32_t>(c, dtype, op, n, in_place, exact, salt);
    case WEFT_OFFLOAD_UINT32: return allreduce_case<uint32_t>(c, dtype, op, n, in_place, exact, salt);
    case WEFT_OFFLOAD_INT64: return allreduce_case<int64_t>(c, dtype, op, n, in_place, exact, salt);
    case WEFT_OFFLOAD_UINT64: return allreduce_case<uint64_t>(c, dtype, op, n, in_place, exact, salt);
    case WEFT_OFFLOAD_FLOAT32: return allreduce_case<float>(c, dtype, op, n, in_place, exact, salt);
    case WEFT_OFFLOAD_FLOAT64: return allreduce_case<double>(c, dtype, op, n, in_place, exact, salt);
  }
}

// --- the suite every leader of a group runs ----------------------------------------------------

void allreduce_suite(Ctx& c) {
  uint64_t salt = 1;
  for (uint32_t dtype = 0; dtype < WEFT_OFFLOAD_DTYPE_COUNT; ++dtype)
    for (uint32_t op = 0; op < WEFT_OFFLOAD_OP_COUNT; ++op)
      if (!(dtype >= WEFT_OFFLOAD_FLOAT32 && op >= WEFT_OFFLOAD_BAND)) allreduce_any(c, dtype, op, 1000, false, true, salt++);
  for (uint64_t n : {0ull, 1ull, 1000ull, 100000ull})
    allreduce_any(c, WEFT_OFFLOAD_INT32, WEFT_OFFLOAD_SUM, n, false, true, salt++);
  allreduce_any(c, WEFT_OFFLOAD_INT32, WEFT_OFFLOAD_SUM, 100000, true, true, salt++);  // many fragments, in place
  allreduce_any(c, WEFT_OFFLOAD_INT64, WEFT_OFFLOAD_MAX, 20000, false, true, salt++);
  allreduce_any(c, WEFT_OFFLOAD_UINT32, WEFT_OFFLOAD_BXOR, 30001, false, true, salt++);
  allreduce_any(c, WEFT_OFFLOAD_FLOAT64, WEFT_OFFLOAD_SUM, 50000, false, true, salt++);
  allreduce_any(c, WEFT_OFFLOAD_FLOAT32, WEFT_OFFLOAD_MIN, 25000, true, true, salt++);
  allreduce_any(c, WEFT_OFFLOAD_FLOAT32, WEFT_OFFLOAD_SUM, 10000, false, false, salt++);  // with a tolerance
  // Many small operations in a row: the sequence numbers advance.
  for (uint64_t k = 0; k < 200; ++k) {
    uint64_t v = uint64_t(c.index) * 1000 + k, r = 0;
    weft_offload_op_args a{};
    a.coll = WEFT_OFFLOAD_ALLREDUCE;
    a.dtype = WEFT_OFFLOAD_UINT64;
    a.op = WEFT_OFFLOAD_SUM;
    a.count = 1;
    a.send = &v;
    a.recv = &r;
    must(c.p, c.comm, a, "small allreduce");
    const uint64_t want = 1000ull * uint64_t(c.count) * uint64_t(c.count - 1) / 2 + k * uint64_t(c.count);
    CHECK(r == want, "small allreduce %llu: %llu, expected %llu", (unsigned long long)k, (unsigned long long)r,
          (unsigned long long)want);
  }
}

void reduce_scatter_suite(Ctx& c) {
  const uint64_t n = 10007;
  // Unequal ranges: leader l gets [n l^2 / L^2, n (l+1)^2 / L^2).
  const uint64_t L = uint64_t(c.count), l = uint64_t(c.index);
  const uint64_t from = n * l * l / (L * L), to = n * (l + 1) * (l + 1) / (L * L);
  reduce_scatter_case<int32_t>(c, WEFT_OFFLOAD_INT32, WEFT_OFFLOAD_SUM, n, from, to - from, false, 101);
  reduce_scatter_case<double>(c, WEFT_OFFLOAD_FLOAT64, WEFT_OFFLOAD_MAX, n, from, to - from, false, 102);
  // Leader 0 asks for nothing, the others for overlapping ranges that cross fragments.
  reduce_scatter_case<uint64_t>(c, WEFT_OFFLOAD_UINT64, WEFT_OFFLOAD_BOR, n, l ? 700 * l : 0, l ? 3000 : 0, false, 103);
  // In place: the result lands at the start of send while later fragments still go out.
  reduce_scatter_case<int64_t>(c, WEFT_OFFLOAD_INT64, WEFT_OFFLOAD_SUM, n, n / 2, n / 3, true, 104);
}

void allgather_suite(Ctx& c) {
  // Unequal contributions (leader 1 gives none), placed in reverse leader order.
  std::vector<uint64_t> size(size_t(c.count)), offset(size_t(c.count));
  for (int l = 0; l < c.count; ++l) size[size_t(l)] = l == 1 ? 0 : 777 + 5000 * uint64_t(l);
  uint64_t total = 0;
  for (int l = c.count - 1; l >= 0; --l) offset[size_t(l)] = total, total += size[size_t(l)];
  auto byte_of = [](int l, uint64_t k) { return uint8_t(mix(uint64_t(l) << 40 | k)); };
  for (bool in_place : {false, true}) {
    std::vector<uint8_t> send(size[size_t(c.index)]), recv(total + 16, 0xa5);
    for (uint64_t k = 0; k < send.size(); ++k) send[k] = byte_of(c.index, k);
    if (in_place && !send.empty()) std::memcpy(recv.data() + offset[size_t(c.index)], send.data(), send.size());
    weft_offload_op_args a{};
    a.coll = WEFT_OFFLOAD_ALLGATHER;
    a.send = in_place ? recv.data() + offset[size_t(c.index)] : send.data();
    a.recv = recv.data();
    a.send_offset = offset[size_t(c.index)];
    a.send_bytes = size[size_t(c.index)];
    a.total_bytes = total;
    must(c.p, c.comm, a, "allgather");
    for (int l = 0; l < c.count; ++l)
      for (uint64_t k = 0; k < size[size_t(l)]; ++k)
        CHECK(recv[offset[size_t(l)] + k] == byte_of(l, k), "allgather%s: byte %llu of leader %d's part is wrong",
              in_place ? " in place" : "", (unsigned long long)k, l);
    for (uint64_t k = total; k < total + 16; ++k) CHECK(recv[k] == 0xa5, "allgather wrote past the result");
  }
  weft_offload_op_args empty{};
  empty.coll = WEFT_OFFLOAD_ALLGATHER;
  must(c.p, c.comm, empty, "allgather of 0 bytes");
}

void barrier_suite(Ctx& c) {
  weft_offload_op_args b{};
  b.coll = WEFT_OFFLOAD_BARRIER;
  must(c.p, c.comm, b, "barrier");  // lines the leaders up
  const bool last = c.index == c.count - 1;
  if (last) {
    usleep(200 * 1000);  // the others are in the barrier by now, most likely
    g_last_leader_posted->store(1);
  }
  must(c.p, c.comm, b, "barrier");
  if (!last) CHECK(g_last_leader_posted->load() == 1, "the barrier completed before the last leader posted it");
  must(c.p, c.comm, b, "barrier");  // every leader has looked
  if (last) g_last_leader_posted->store(0);
}

void error_suite(Ctx& c) {
  int32_t x = 1, y = 0;
  auto post_status = [&](weft_offload_op_args a) {
    void* op = nullptr;
    return c.p.t->post(c.comm, &a, &op);
  };
  weft_offload_op_args a{};
  a.struct_size = sizeof a;
  a.coll = WEFT_OFFLOAD_ALLREDUCE;
  a.dtype = WEFT_OFFLOAD_FLOAT32;
  a.op = WEFT_OFFLOAD_BAND;
  a.count = 1;
  a.send = &x;
  a.recv = &y;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_UNSUPPORTED, "band on float32 was not refused as unsupported");
  CHECK(strlen(c.p.error(c.comm)) > 10, "no last_error after a refused post");
  a.dtype = 9;
  a.op = WEFT_OFFLOAD_SUM;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_UNSUPPORTED, "dtype 9 was not refused as unsupported");
  a.dtype = WEFT_OFFLOAD_INT32;
  a.coll = 0;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_UNSUPPORTED, "collective 0 was not refused as unsupported");
  a.coll = WEFT_OFFLOAD_ALLREDUCE | WEFT_OFFLOAD_BARRIER;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_UNSUPPORTED, "two collective bits were not refused as unsupported");
  a.coll = WEFT_OFFLOAD_ALLREDUCE;
  a.count = uint64_t(1) << 62;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_UNSUPPORTED, "2^62 elements were not refused as unsupported");
  a.count = 1;
  a.send = nullptr;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_ARG, "a NULL send buffer was not refused");
  a.send = &x;
  a.struct_size = 8;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_ARG, "a short struct_size was not refused");
  a.struct_size = sizeof a;
  a.coll = WEFT_OFFLOAD_REDUCE_SCATTER;
  a.count = 10;
  a.recv_offset = 8;
  a.recv_count = 3;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_ARG, "a reduce_scatter range past the vector was not refused");
  a = weft_offload_op_args{};
  a.struct_size = sizeof a;
  a.coll = WEFT_OFFLOAD_ALLGATHER;
  a.send = &x;
  a.recv = &y;
  a.total_bytes = 4;
  a.send_offset = 2;
  a.send_bytes = 4;
  CHECK(post_status(a) == WEFT_OFFLOAD_ERR_ARG, "an allgather contribution past the result was not refused");
  // One operation in flight per communicator; test wants that operation.
  weft_offload_op_args b{};
  b.struct_size = sizeof b;
  b.coll = WEFT_OFFLOAD_BARRIER;
  void* op = nullptr;
  CHECK(c.p.t->post(c.comm, &b, &op) == WEFT_OFFLOAD_OK && op, "posting a barrier: %s", c.p.error(c.comm));
  void* other = nullptr;
  CHECK(c.p.t->post(c.comm, &b, &other) == WEFT_OFFLOAD_ERR_ARG, "a second operation in flight was not refused");
  int done = 0, bogus = 0;
  CHECK(c.p.t->test(c.comm, &bogus, &done) == WEFT_OFFLOAD_ERR_ARG, "test of an unknown operation was not refused");
  CHECK(wait_op(c.p, c.comm, op) == WEFT_OFFLOAD_OK, "the barrier after refused posts: %s", c.p.error(c.comm));
}

void leader_suite(int index, int count, uint64_t key) {
  Plugin p = open_plugin(index, count);
  Ctx c{p, setup(p, key, index, count), index, count};
  error_suite(c);
  allreduce_suite(c);
  reduce_scatter_suite(c);
  allgather_suite(c);
  barrier_suite(c);
  p.t->comm_teardown(c.comm);
  p.t->finalize(p.handle);
}

// --- running leaders as processes --------------------------------------------------------------

// Forks `count` leaders running fn(index); all must exit 0 within timeout_s.
void run_leaders(const char* what, int count, const std::function<void(int)>& fn, double timeout_s = 90) {
  std::vector<pid_t> pids;
  for (int i = 0; i < count; ++i) {
    const pid_t pid = fork();
    CHECK(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
      state().in_child = true;
      alarm(unsigned(timeout_s) + 10);  // a hung leader dies even if the parent is gone
      fn(i);
      fflush(stdout);
      _exit(0);
    }
    pids.push_back(pid);
  }
  const double deadline = now_s() + timeout_s;
  for (int i = 0; i < count; ++i) {
    int status = 0;
    if (!wait_pid(pids[size_t(i)], std::max(0.0, deadline - now_s()), &status)) {
      for (pid_t p : pids) kill(p, SIGKILL);
      for (pid_t p : pids) waitpid(p, nullptr, 0);
      fail("%s: leader %d did not finish within %.0f s", what, i, timeout_s);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      for (pid_t p : pids) kill(p, SIGKILL);
      for (pid_t p : pids) waitpid(p, nullptr, 0);
      fail("%s: leader %d failed (status 0x%x)", what, i, status);
    }
  }
}

void set_env(const std::string& address, int timeout_ms) {
  setenv("WEFT_AGGD_ADDRESS", address.c_str(), 1);
  setenv("WEFT_AGGD_TIMEOUT_MS", std::to_string(timeout_ms).c_str(), 1);
  setenv("WEFT_AGGD_KEY_FILE", g_key_path.c_str(), 1);
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  unlink(path.c_str());
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  CHECK(fd >= 0 && write(fd, text.data(), text.size()) == ssize_t(text.size()), "writing %s", path.c_str());
  CHECK(fchmod(fd, mode) == 0, "chmod %s", path.c_str());
  close(fd);
}

// Two communicators per process, set up in the same order everywhere (comm_setup blocks until
// the group is complete), operations of both in flight at once.
void two_groups(int index, int count) {
  Plugin p = open_plugin(index, count);
  void* a = setup(p, 7001, index, count);
  void* b = setup(p, 7002, count - 1 - index, count);
  const int ib = count - 1 - index;
  for (uint64_t round = 0; round < 10; ++round) {
    const uint64_t n = 5000 + round * 1111;
    std::vector<int32_t> sa(n), ra(n);
    for (uint64_t i = 0; i < n; ++i) sa[i] = element<int32_t>(index, i, 500 + round, true);
    weft_offload_op_args x{};
    x.struct_size = sizeof x;
    x.coll = WEFT_OFFLOAD_ALLREDUCE;
    x.dtype = WEFT_OFFLOAD_INT32;
    x.op = WEFT_OFFLOAD_SUM;
    x.count = n;
    x.send = sa.data();
    x.recv = ra.data();
    const uint64_t part = 3000 + round * 17;
    std::vector<uint8_t> sb(part), rb(part * uint64_t(count));
    for (uint64_t k = 0; k < part; ++k) sb[k] = uint8_t(mix(uint64_t(ib) * 131 + k + round));
    weft_offload_op_args y{};
    y.struct_size = sizeof y;
    y.coll = WEFT_OFFLOAD_ALLGATHER;
    y.send = sb.data();
    y.recv = rb.data();
    y.send_offset = part * uint64_t(ib);
    y.send_bytes = part;
    y.total_bytes = part * uint64_t(count);
    void *oa = nullptr, *ob = nullptr;
    CHECK(p.t->post(a, &x, &oa) == WEFT_OFFLOAD_OK, "post on group A: %s", p.error(a));
    CHECK(p.t->post(b, &y, &ob) == WEFT_OFFLOAD_OK, "post on group B: %s", p.error(b));
    const double deadline = now_s() + 60;
    int da = 0, db = 0;
    while (!da || !db) {
      if (!da) CHECK(p.t->test(a, oa, &da) == WEFT_OFFLOAD_OK, "test on group A: %s", p.error(a));
      if (!db) CHECK(p.t->test(b, ob, &db) == WEFT_OFFLOAD_OK, "test on group B: %s", p.error(b));
      CHECK(now_s() < deadline, "interleaved groups: no completion within 60 s");
      usleep(20);
    }
    for (uint64_t i = 0; i < n; ++i)
      CHECK(ra[i] == expected_at<int32_t>(WEFT_OFFLOAD_SUM, count, i, 500 + round, true),
            "group A round %llu: element %llu wrong", (unsigned long long)round, (unsigned long long)i);
    for (int l = 0; l < count; ++l)
      for (uint64_t k = 0; k < part; ++k)
        CHECK(rb[uint64_t(l) * part + k] == uint8_t(mix(uint64_t(l) * 131 + k + round)),
              "group B round %llu: byte %llu of leader %d wrong", (unsigned long long)round, (unsigned long long)k, l);
  }
  p.t->comm_teardown(a);
  p.t->comm_teardown(b);
  p.t->finalize(p.handle);
}

// Each of `count` processes is a leader of `groups` groups: groups x count connections, all
// operations in flight together.
void many_groups(int index, int count, int groups) {
  Plugin p = open_plugin(index, count);
  std::vector<void*> comms;
  for (int g = 0; g < groups; ++g) comms.push_back(setup(p, 8000 + uint64_t(g), index, count));
  const size_t ng = size_t(groups);
  std::vector<std::vector<int64_t>> send(ng), recv(ng);
  std::vector<void*> ops(ng);
  for (int g = 0; g < groups; ++g) {
    const uint64_t n = 3000 + uint64_t(g) * 97;
    send[size_t(g)].resize(n);
    recv[size_t(g)].resize(n);
    for (uint64_t i = 0; i < n; ++i) send[size_t(g)][i] = element<int64_t>(index, i, 900 + uint64_t(g), true);
    weft_offload_op_args a{};
    a.struct_size = sizeof a;
    a.coll = WEFT_OFFLOAD_ALLREDUCE;
    a.dtype = WEFT_OFFLOAD_INT64;
    a.op = WEFT_OFFLOAD_SUM;
    a.count = n;
    a.send = send[size_t(g)].data();
    a.recv = recv[size_t(g)].data();
    CHECK(p.t->post(comms[size_t(g)], &a, &ops[size_t(g)]) == WEFT_OFFLOAD_OK, "post on group %d", g);
  }
  std::vector<int> done(ng, 0);
  const double deadline = now_s() + 60;
  for (int left = groups; left > 0;) {
    for (int g = 0; g < groups; ++g) {
      if (done[size_t(g)]) continue;
      CHECK(p.t->test(comms[size_t(g)], ops[size_t(g)], &done[size_t(g)]) == WEFT_OFFLOAD_OK, "test on group %d: %s",
            g, p.error(comms[size_t(g)]));
      if (done[size_t(g)]) --left;
    }
    CHECK(now_s() < deadline, "%d of %d groups did not complete within 60 s", left, groups);
    usleep(20);
  }
  for (int g = 0; g < groups; ++g)
    for (uint64_t i = 0; i < recv[size_t(g)].size(); ++i)
      CHECK(recv[size_t(g)][i] == expected_at<int64_t>(WEFT_OFFLOAD_SUM, count, i, 900 + uint64_t(g), true),
            "group %d: element %llu wrong", g, (unsigned long long)i);
  for (void* c : comms) p.t->comm_teardown(c);
  p.t->finalize(p.handle);
}

// --- scenarios in the parent -------------------------------------------------------------------

void setup_errors(const std::string& dir, const std::string& address) {
  const weft_offload_plugin* t = load_table();
  const weft_offload_node_info node = node_info(0, 1);
  void* handle = nullptr;
  unsetenv("WEFT_AGGD_ADDRESS");
  unsetenv("WEFT_AGGD_TIMEOUT_MS");
  g_last_log.clear();
  int rc = t->init(&node, plugin_log, &handle);
  CHECK(rc != WEFT_OFFLOAD_OK && handle == nullptr, "init without WEFT_AGGD_ADDRESS: status %d", rc);
  CHECK(strstr(t->last_error(nullptr, nullptr), "WEFT_AGGD_ADDRESS") && g_last_log.find("WEFT_AGGD_ADDRESS") != std::string::npos,
        "init without WEFT_AGGD_ADDRESS: last_error '%s', log '%s'", t->last_error(nullptr, nullptr),
        g_last_log.c_str());
  setenv("WEFT_AGGD_ADDRESS", "carrier-pigeon:somewhere", 1);
  CHECK(t->init(&node, plugin_log, &handle) != WEFT_OFFLOAD_OK, "init with an unparsable address succeeded");
  setenv("WEFT_AGGD_ADDRESS", "tcp:127.0.0.1:99999", 1);
  CHECK(t->init(&node, plugin_log, &handle) != WEFT_OFFLOAD_OK, "init with port 99999 succeeded");
  set_env(address, 1000);
  setenv("WEFT_AGGD_TIMEOUT_MS", "soon", 1);
  CHECK(t->init(&node, plugin_log, &handle) != WEFT_OFFLOAD_OK, "init with WEFT_AGGD_TIMEOUT_MS=soon succeeded");

  set_env(address, 1000);
  // The key: missing, open to other users, or not a key, refuses init with the reason.
  auto init_refused = [&](const std::string& key_path, const char* want, const char* what) {
    setenv("WEFT_AGGD_KEY_FILE", key_path.c_str(), 1);
    handle = nullptr;
    const int status = t->init(&node, plugin_log, &handle);
    CHECK(status != WEFT_OFFLOAD_OK && handle == nullptr, "init with %s: status %d", what, status);
    CHECK(strstr(t->last_error(nullptr, nullptr), want), "init with %s: last_error '%s', expected '%s'", what,
          t->last_error(nullptr, nullptr), want);
  };
  init_refused(dir + "/no-such.key", "No such file", "a missing key file");
  const std::string key_text = read_file(g_key_path);
  write_file(dir + "/open.key", key_text, 0644);
  init_refused(dir + "/open.key", "open to other users", "a key file of mode 0644");
  write_file(dir + "/short.key", "0123456789abcdef\n", 0600);
  init_refused(dir + "/short.key", "does not hold a key", "a key file of 16 hex digits");
  set_env(address, 1000);

  // A socket nobody listens on: ERR_NETWORK, comm untouched.
  set_env("unix:" + dir + "/nobody-here.sock", 1000);
  rc = t->init(&node, plugin_log, &handle);
  CHECK(rc == WEFT_OFFLOAD_OK && handle, "init: status %d: %s", rc, t->last_error(nullptr, nullptr));
  weft_offload_comm_info info{sizeof info, 1, 0, 1};
  void* comm = &info;  // must stay as it is on failure
  rc = t->comm_setup(handle, &info, &comm);
  CHECK(rc == WEFT_OFFLOAD_ERR_NETWORK && comm == &info, "comm_setup to a missing socket: status %d", rc);
  CHECK(strstr(t->last_error(handle, nullptr), "unreachable"), "comm_setup to a missing socket: last_error '%s'",
        t->last_error(handle, nullptr));
  info.leader_index = 1;
  CHECK(t->comm_setup(handle, &info, &comm) == WEFT_OFFLOAD_ERR_ARG, "leader index = count was not refused");
  t->finalize(handle);

  // A group whose other leader never comes: comm_setup gives up after the timeout.
  set_env(address, 300);
  CHECK(t->init(&node, plugin_log, &handle) == WEFT_OFFLOAD_OK, "init: %s", t->last_error(nullptr, nullptr));
  info = {sizeof info, 4242, 0, 2};
  const double t0 = now_s();
  rc = t->comm_setup(handle, &info, &comm);
  const double took = now_s() - t0;
  CHECK(rc == WEFT_OFFLOAD_ERR_TIMEOUT && took > 0.25 && took < 3, "comm_setup without the other leader: status %d after %.2f s",
        rc, took);
  t->finalize(handle);
}

// Leader 0 posts, leader 1 never does: leader 0's test reports ERR_TIMEOUT after about
// WEFT_AGGD_TIMEOUT_MS, and later posts fail fast with the same status.
void op_timeout(const std::string& address) {
  set_env(address, 500);
  run_leaders("operation timeout", 2, [](int index) {
    Plugin p = open_plugin(index, 2);
    void* comm = setup(p, 4343, index, 2);
    if (index == 1) {
      usleep(2500 * 1000);
      _exit(0);
    }
    int32_t x = 1, y = 0;
    weft_offload_op_args a{};
    a.struct_size = sizeof a;
    a.coll = WEFT_OFFLOAD_ALLREDUCE;
    a.dtype = WEFT_OFFLOAD_INT32;
    a.op = WEFT_OFFLOAD_SUM;
    a.count = 1;
    a.send = &x;
    a.recv = &y;
    const double t0 = now_s();
    const int rc = run_op(p, comm, a);
    const double took = now_s() - t0;
    CHECK(rc == WEFT_OFFLOAD_ERR_TIMEOUT && took > 0.45 && took < 2.4, "status %d after %.2f s: %s", rc, took,
          p.error(comm));
    void* op = nullptr;
    CHECK(p.t->post(comm, &a, &op) == WEFT_OFFLOAD_ERR_TIMEOUT, "a post after the timeout did not fail the same way");
    p.t->comm_teardown(comm);
    p.t->finalize(p.handle);
  });
}

// A job key file from `weft-aggd --print-job-key` (written 0600, as a launcher would): leaders
// holding only it speak as that job, whatever job id weft passes, and their group works.
void job_key_case(const std::string& dir, const std::string& address) {
  const std::string path = dir + "/job.key";
  const pid_t pid = fork();
  CHECK(pid >= 0, "fork: %s", strerror(errno));
  if (pid == 0) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) _exit(126);
    dup2(fd, 1);
    execl(g_daemon_exe.c_str(), g_daemon_exe.c_str(), "--key-file", g_key_path.c_str(), "--print-job-key",
          "launcher-job-7", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  CHECK(wait_pid(pid, 10, &status) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "weft-aggd --print-job-key failed (status 0x%x)", status);
  std::string job;
  const Key k = read_key(path, &job);
  CHECK(job == "launcher-job-7" && k == job_key(read_key(g_key_path), "launcher-job-7"),
        "the job key file names job '%s' and holds another key than expected", job.c_str());
  set_env(address, 20000);
  setenv("WEFT_AGGD_KEY_FILE", path.c_str(), 1);
  run_leaders("job key file", 2, [](int index) {
    Plugin p = open_plugin(index, 2);
    Ctx c{p, setup(p, 4545, index, 2), index, 2};
    allreduce_any(c, WEFT_OFFLOAD_INT64, WEFT_OFFLOAD_SUM, 5000, false, true, 55);
    p.t->comm_teardown(c.comm);
    p.t->finalize(p.handle);
  });
  set_env(address, 20000);
}

// A TCP daemon on 127.0.0.1 with an ephemeral port read from its listening line.
void tcp_case(const std::string& dir) {
  std::string line;
  const pid_t pid = start_daemon(g_daemon_exe,
                                 {"--listen", "tcp:127.0.0.1:0", "--key-file", g_key_path, "--fragment-bytes",
                                  std::to_string(kFragment),
                                  "--window", std::to_string(kWindow), "--quiet"},
                                 dir + "/daemon-tcp.log", &line);
  const size_t at = line.find("tcp:127.0.0.1:");
  CHECK(at != std::string::npos, "no tcp address in: %s", line.c_str());
  const int port = atoi(line.c_str() + at + 14);
  CHECK(port > 0 && port < 65536, "port %d in: %s", port, line.c_str());
  set_env("tcp:127.0.0.1:" + std::to_string(port), 20000);
  run_leaders("tcp", 2, [](int index) {
    Plugin p = open_plugin(index, 2);
    Ctx c{p, setup(p, 31337, index, 2), index, 2};
    allreduce_any(c, WEFT_OFFLOAD_INT32, WEFT_OFFLOAD_SUM, 100000, false, true, 77);
    allgather_suite(c);
    barrier_suite(c);
    p.t->comm_teardown(c.comm);
    p.t->finalize(p.handle);
  });
  kill(pid, SIGTERM);
  int status = 0;
  CHECK(wait_pid(pid, 10, &status) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the tcp daemon did not exit 0 on SIGTERM");
  forget_daemon(pid);
}

// The daemon is killed while leaders 0 and 1 are in a large allreduce that leader 2 has not
// posted yet; then leader 2 posts. Every leader must see ERR_NETWORK (bounded: 20 s). Returns the
// time from the kill until the last leader exited.
double daemon_killed(const std::string& dir) {
  const std::string sock = dir + "/aggd-kill.sock";
  std::string line;
  const pid_t pid = start_daemon(g_daemon_exe,
                                 {"--listen", "unix:" + sock, "--key-file", g_key_path, "--fragment-bytes",
                                  std::to_string(kFragment),
                                  "--window", std::to_string(kWindow), "--quiet"},
                                 dir + "/daemon-kill.log", &line);
  set_env("unix:" + sock, 20000);  // far above the bound: a timeout cannot stand in for the error
  int ready[2], go[2];
  CHECK(pipe(ready) == 0 && pipe(go) == 0, "pipe: %s", strerror(errno));
  const int count = 3;
  std::vector<pid_t> pids;
  for (int index = 0; index < count; ++index) {
    const pid_t child = fork();
    CHECK(child >= 0, "fork: %s", strerror(errno));
    if (child > 0) {
      pids.push_back(child);
      continue;
    }
    state().in_child = true;
    alarm(30);
    Plugin p = open_plugin(index, count);
    void* comm = setup(p, 5151, index, count);
    const uint64_t n = 1 << 20;  // 4 MiB: 1024 fragments, stuck after the window
    std::vector<int32_t> send(n, index + 1), recv(n);
    weft_offload_op_args a{};
    a.struct_size = sizeof a;
    a.coll = WEFT_OFFLOAD_ALLREDUCE;
    a.dtype = WEFT_OFFLOAD_INT32;
    a.op = WEFT_OFFLOAD_SUM;
    a.count = n;
    a.send = send.data();
    a.recv = recv.data();
    void* op = nullptr;
    if (index < 2) {
      CHECK(p.t->post(comm, &a, &op) == WEFT_OFFLOAD_OK, "post: %s", p.error(comm));
      int done = 0;
      for (int k = 0; k < 20; ++k) {
        CHECK(p.t->test(comm, op, &done) == WEFT_OFFLOAD_OK && !done, "test before the kill: %s", p.error(comm));
        usleep(1000);
      }
    }
    CHECK(write(ready[1], "r", 1) == 1, "writing to the ready pipe");
    int rc = WEFT_OFFLOAD_OK;
    if (index == 2) {
      pollfd pf{go[0], POLLIN, 0};
      CHECK(poll(&pf, 1, 10000) == 1, "no go from the parent within 10 s");
      rc = p.t->post(comm, &a, &op);
      if (rc == WEFT_OFFLOAD_OK) rc = wait_op(p, comm, op, 10);
    } else {
      rc = wait_op(p, comm, op, 10);
    }
    CHECK(rc == WEFT_OFFLOAD_ERR_NETWORK, "leader %d: status %d after the daemon was killed: %s", index, rc,
          p.error(comm));
    CHECK(strstr(p.error(comm), "closed the connection"), "leader %d: last_error '%s'", index, p.error(comm));
    CHECK(p.t->post(comm, &a, &op) == WEFT_OFFLOAD_ERR_NETWORK, "leader %d: a later post did not fail fast", index);
    p.t->comm_teardown(comm);
    p.t->finalize(p.handle);
    _exit(0);
  }
  auto give_up = [&](const char* why) {
    for (pid_t c : pids) kill(c, SIGKILL);
    for (pid_t c : pids) waitpid(c, nullptr, 0);
    fail("daemon killed: %s", why);
  };
  for (int k = 0; k < count; ++k) {
    pollfd pf{ready[0], POLLIN, 0};
    char byte;
    if (poll(&pf, 1, 30000) != 1 || read(ready[0], &byte, 1) != 1) give_up("the leaders did not get ready within 30 s");
  }
  usleep(100 * 1000);  // leaders 0 and 1 are now waiting on fragments leader 2 never sent
  const double t_kill = now_s();
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  forget_daemon(pid);
  CHECK(write(go[1], "g", 1) == 1, "writing to the go pipe");
  for (size_t k = 0; k < pids.size(); ++k) {
    int status = 0;
    if (!wait_pid(pids[k], std::max(0.0, t_kill + 20 - now_s()), &status))
      give_up(format("leader %zu did not report an error within 20 s of the kill", k).c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      give_up(format("leader %zu failed (status 0x%x)", k, status).c_str());
  }
  const double took = now_s() - t_kill;
  close(ready[0]);
  close(ready[1]);
  close(go[0]);
  close(go[1]);
  return took;
}

// --- the plugin against a misbehaving daemon ---------------------------------------------------

// The fake daemon's side of the handshake: its nonce, the leader's HELLO and the job's key.
struct FakeHandshake {
  Nonce nonce{};
  weft::aggd::HelloPayload hello{};
  Key job_key{};
} g_fake;

// This process plays the daemon for one leader: it sends a CHALLENGE (unless `challenge` is
// false), reads the HELLO and checks its MAC, then `script` answers. The leader must get
// setup_status from comm_setup and, if that is OK, op_status from an allreduce of 3 fragments
// (and the same status from a later post).
void fake_daemon_case(const std::string& dir, const char* name, int setup_status, int op_status,
                      const std::function<void(int)>& script, bool challenge = true) {
  const std::string path = dir + "/fake.sock";
  unlink(path.c_str());
  const int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
  CHECK(lfd >= 0 && bind(lfd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && listen(lfd, 4) == 0,
        "%s: cannot listen: %s", name, strerror(errno));
  set_env("unix:" + path, 700);
  const pid_t child = fork();
  CHECK(child >= 0, "fork: %s", strerror(errno));
  if (child == 0) {
    state().in_child = true;
    alarm(20);
    close(lfd);
    Plugin p = open_plugin(0, 1);
    weft_offload_comm_info info{sizeof info, 99, 0, 1};
    void* comm = nullptr;
    int rc = p.t->comm_setup(p.handle, &info, &comm);
    CHECK(rc == setup_status, "%s: comm_setup status %d, expected %d (%s)", name, rc, setup_status, p.error());
    if (rc != WEFT_OFFLOAD_OK) {
      CHECK(strlen(p.error()) > 10, "%s: no last_error after a failed setup", name);
      p.t->finalize(p.handle);
      _exit(0);
    }
    std::vector<int32_t> send(3000, 7), recv(3000, 0);
    weft_offload_op_args a{};
    a.struct_size = sizeof a;
    a.coll = WEFT_OFFLOAD_ALLREDUCE;
    a.dtype = WEFT_OFFLOAD_INT32;
    a.op = WEFT_OFFLOAD_SUM;
    a.count = send.size();
    a.send = send.data();
    a.recv = recv.data();
    rc = run_op(p, comm, a);
    CHECK(rc == op_status, "%s: operation status %d, expected %d (%s)", name, rc, op_status, p.error(comm));
    if (rc == WEFT_OFFLOAD_OK) {
      CHECK(recv == send, "%s: wrong result", name);
    } else {
      void* op = nullptr;
      CHECK(p.t->post(comm, &a, &op) == op_status, "%s: a later post did not fail the same way", name);
    }
    p.t->comm_teardown(comm);
    p.t->finalize(p.handle);
    _exit(0);
  }
  auto stop = [&](const char* why) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    fail("%s: %s", name, why);
  };
  pollfd pf{lfd, POLLIN, 0};
  if (poll(&pf, 1, 10000) != 1) stop("the leader did not connect");
  const int fd = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) stop("accept failed");
  if (challenge) {
    RAND_bytes(g_fake.nonce.data(), int(g_fake.nonce.size()));
    weft::aggd::ChallengePayload ch;
    std::memcpy(ch.nonce, g_fake.nonce.data(), sizeof ch.nonce);
    send_all(fd, make_frame(weft::aggd::FrameType::challenge, ch));
    RawFrame hello_frame;
    if (!read_frame(fd, &hello_frame) || hello_frame.type != uint16_t(weft::aggd::FrameType::hello) ||
        hello_frame.payload.size() != sizeof(weft::aggd::HelloPayload))
      stop("no HELLO from the leader");
    std::memcpy(&g_fake.hello, hello_frame.payload.data(), sizeof g_fake.hello);
    g_fake.job_key = job_key(read_key(g_key_path), kJob);
    weft::aggd::HelloPayload expected = g_fake.hello;
    set_hello_mac(&expected, g_fake.job_key, g_fake.nonce);
    if (memcmp(expected.mac, g_fake.hello.mac, sizeof expected.mac) != 0) stop("the HELLO's MAC is wrong");
  }
  script(fd);
  int status = 0;
  if (!wait_pid(child, 15, &status)) stop("the leader hung");
  close(fd);
  close(lfd);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the leader failed (status 0x%x)", name, status);
}

void misbehaving_daemons(const std::string& dir) {
  using namespace weft::aggd;
  auto send_error = [](int fd, uint32_t code, const char* text) {
    ErrorPayload e{};
    e.code = code;
    snprintf(e.text, sizeof e.text, "%s", text);
    send_all(fd, make_frame(FrameType::error, e));
  };
  // A WELCOME with the MAC of the job's key (or of `key`, if given).
  auto welcome = [](int fd, uint32_t fragment = kFragment, const Key* key = nullptr) {
    WelcomePayload w{fragment, kWindow, 0xf, 0x3f, 0x7f, 0, 1 << 20, {}};
    const Key mac = welcome_mac(key ? *key : g_fake.job_key, g_fake.nonce, g_fake.hello, w);
    std::memcpy(w.mac, mac.data(), sizeof w.mac);
    send_all(fd, make_frame(FrameType::welcome, w));
  };
  // Reads BEGIN and the 3 FRAGs the leader sends (the window allows all of them).
  auto read_operation = [](int fd, std::vector<RawFrame>* frags) {
    RawFrame f;
    CHECK(read_frame(fd, &f) && f.type == uint16_t(FrameType::begin), "fake daemon: no BEGIN");
    for (int k = 0; k < 3; ++k) {
      CHECK(read_frame(fd, &f) && f.type == uint16_t(FrameType::frag), "fake daemon: no FRAG %d", k);
      frags->push_back(f);
    }
  };
  auto result = [](int fd, uint32_t fragment, uint32_t offset, uint32_t bytes) {
    FragPayload r{0, fragment, offset, bytes, 0};
    std::vector<uint8_t> data(bytes, 0);
    send_all(fd, make_frame(FrameType::result, &r, sizeof r, data.data(), bytes));
  };
  const int P = WEFT_OFFLOAD_ERR_PROTOCOL;
  fake_daemon_case(dir, "garbage instead of WELCOME", P, 0, [](int fd) {
    std::vector<uint8_t> junk(40, 0xee);
    send_all(fd, junk);
  });
  fake_daemon_case(dir, "ERROR instead of WELCOME", WEFT_OFFLOAD_ERR_UNSUPPORTED, 0,
                   [&](int fd) { send_error(fd, 2, "no room for this group"); });
  fake_daemon_case(dir, "ERROR with an unknown code", P, 0, [&](int fd) { send_error(fd, 99, "?"); });
  fake_daemon_case(dir, "WELCOME with 12-byte fragments", P, 0, [&](int fd) { welcome(fd, 12); });
  fake_daemon_case(dir, "RESULT instead of WELCOME", P, 0, [&](int fd) { result(fd, 0, 0, 8); });
  fake_daemon_case(dir, "close instead of WELCOME", WEFT_OFFLOAD_ERR_NETWORK, 0, [](int fd) { shutdown(fd, SHUT_RDWR); });
  fake_daemon_case(dir, "silence instead of WELCOME", WEFT_OFFLOAD_ERR_TIMEOUT, 0, [](int) {});
  fake_daemon_case(dir, "silence instead of CHALLENGE", WEFT_OFFLOAD_ERR_TIMEOUT, 0, [](int) {}, false);
  fake_daemon_case(dir, "WELCOME without a CHALLENGE", P, 0, [&](int fd) { welcome(fd); }, false);
  fake_daemon_case(dir, "two CHALLENGEs", P, 0, [](int fd) {
    send_all(fd, make_frame(FrameType::challenge, ChallengePayload{}));
  });
  fake_daemon_case(dir, "WELCOME with a MAC of zeros", P, 0, [](int fd) {
    WelcomePayload w{kFragment, kWindow, 0xf, 0x3f, 0x7f, 0, 1 << 20, {}};
    send_all(fd, make_frame(FrameType::welcome, w));
  });
  fake_daemon_case(dir, "WELCOME with another job's key", P, 0, [&](int fd) {
    const Key other = job_key(read_key(g_key_path), "another-job");
    welcome(fd, kFragment, &other);
  });
  fake_daemon_case(dir, "WELCOME whose fields differ from those its MAC covers", P, 0, [](int fd) {
    WelcomePayload w{kFragment, kWindow, 0xf, 0x3f, 0x7f, 0, 1 << 20, {}};
    const Key mac = welcome_mac(g_fake.job_key, g_fake.nonce, g_fake.hello, w);
    std::memcpy(w.mac, mac.data(), sizeof w.mac);
    w.window = 2 * kWindow;
    send_all(fd, make_frame(FrameType::welcome, w));
  });
  fake_daemon_case(dir, "a correct fake daemon", WEFT_OFFLOAD_OK, WEFT_OFFLOAD_OK, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    for (const RawFrame& f : frags) {  // one leader: the result is its own data
      FragPayload fp;
      std::memcpy(&fp, f.payload.data(), sizeof fp);
      send_all(fd, make_frame(FrameType::result, f.payload.data(), f.payload.size()));
    }
  });
  fake_daemon_case(dir, "RESULT of the wrong size", WEFT_OFFLOAD_OK, P, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    result(fd, 0, 0, 100);
  });
  fake_daemon_case(dir, "RESULT for a later fragment", WEFT_OFFLOAD_OK, P, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    result(fd, 1, 0, kFragment);
  });
  fake_daemon_case(dir, "RESULT with a 4 GiB length", WEFT_OFFLOAD_OK, P, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    FrameHeader h{kMagic, kVersion, uint16_t(FrameType::result), 0xFFFFFF00u, 0};
    send_all(fd, &h, sizeof h);
  });
  fake_daemon_case(dir, "two WELCOMEs", P, 0, [&](int fd) {
    welcome(fd);
    welcome(fd);
  });
  fake_daemon_case(dir, "a WELCOME in the middle of an operation", WEFT_OFFLOAD_OK, P, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    welcome(fd);
  });
  fake_daemon_case(dir, "ERROR in the middle of an operation", WEFT_OFFLOAD_OK, WEFT_OFFLOAD_ERR_NETWORK, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    result(fd, 0, 0, kFragment);
    send_error(fd, 4, "leader 3 of the group was lost");
  });
  fake_daemon_case(dir, "close in the middle of an operation", WEFT_OFFLOAD_OK, WEFT_OFFLOAD_ERR_NETWORK, [&](int fd) {
    welcome(fd);
    std::vector<RawFrame> frags;
    read_operation(fd, &frags);
    shutdown(fd, SHUT_RDWR);
  });
  fake_daemon_case(dir, "silence in the middle of an operation", WEFT_OFFLOAD_OK, WEFT_OFFLOAD_ERR_TIMEOUT,
                   [&](int fd) { welcome(fd); });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <path of weft-aggd> <path of libweft-offload-aggd.so>\n", argv[0]);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  g_daemon_exe = argv[1];
  g_plugin_path = argv[2];
  void* shared = mmap(nullptr, sizeof(std::atomic<uint32_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  CHECK(shared != MAP_FAILED, "mmap of the shared flag");
  g_last_leader_posted = new (shared) std::atomic<uint32_t>(0);
  const double t0 = now_s();
  const std::string dir = make_temp_dir();
  const std::string sock = dir + "/aggd.sock";
  g_key_path = dir + "/aggd.key";
  std::string line;
  const pid_t daemon = start_daemon(g_daemon_exe,
                                    {"--listen", "unix:" + sock, "--key-file", g_key_path, "--fragment-bytes",
                                     std::to_string(kFragment),
                                     "--window", std::to_string(kWindow), "--max-bytes", "64M"},
                                    dir + "/daemon.log", &line);
  const std::string address = "unix:" + sock;

  setup_errors(dir, address);
  printf("aggd.plugin: setup errors ok (no address, bad address, bad timeout, key file missing, open to others or "
         "short, no daemon, setup timeout)\n");
  misbehaving_daemons(dir);
  printf("aggd.plugin: a misbehaving fake daemon ok (22 cases: garbage, ERRORs, bad WELCOME, WELCOMEs that do not "
         "prove the key, CHALLENGE missing or twice, bad RESULTs, closes, silence)\n");
  fflush(stdout);

  set_env(address, 20000);
  for (int count : {3, 1, 5}) {
    const double t = now_s();
    run_leaders(format("suite with %d leaders", count).c_str(), count,
                [count](int index) { leader_suite(index, count, 100 + uint64_t(count)); });
    printf("aggd.plugin: %d leader(s) ok: 36 type/op pairs and sizes 0-100000 (in place too), reduce_scatter, "
           "allgather, barrier, argument errors (%.1f s)\n",
           count, now_s() - t);
    fflush(stdout);
  }
  run_leaders("two interleaved groups", 3, [](int index) { two_groups(index, 3); });
  run_leaders("64 connections", 4, [](int index) { many_groups(index, 4, 16); });
  printf("aggd.plugin: two interleaved groups ok; 16 groups x 4 leaders (64 connections) ok\n");
  fflush(stdout);
  op_timeout(address);
  tcp_case(dir);
  job_key_case(dir, address);
  printf("aggd.plugin: operation timeout ok; tcp:127.0.0.1 ok; a job key file ok\n");
  fflush(stdout);

  CHECK(kill(daemon, SIGTERM) == 0, "SIGTERM: %s", strerror(errno));
  int status = 0;
  CHECK(wait_pid(daemon, 10, &status) && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "the daemon did not exit 0 on SIGTERM (status 0x%x)", status);
  forget_daemon(daemon);
  const std::string log = read_file(dir + "/daemon.log");
  const size_t stats = log.rfind("weft-aggd: ");
  CHECK(stats != std::string::npos && log.find("groups,", stats) != std::string::npos, "no stats line in the log");
  CHECK(log.find("(0 failed authentication)") != std::string::npos, "a leader failed authentication: %s",
        log.substr(stats).c_str());

  const double kill_s = daemon_killed(dir);
  printf("aggd.plugin: daemon killed mid-allreduce: all 3 leaders got ERR_NETWORK within %.2f s\n", kill_s);
  printf("aggd.plugin: ok (%.1f s); %s", now_s() - t0, log.substr(stats).c_str());
  remove_temp_dir();
  return 0;
}
