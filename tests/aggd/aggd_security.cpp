// aggd.auth.* / aggd.limit.* / aggd.listen.*: weft-aggd against clients it must not trust and
// clients that hold its resources, one case per run, each with a daemon of its own:
//   outsider         a client without the key cannot join or poison a group: its HELLO (no
//                    MAC, another key, a HELLO replayed from another connection) is refused,
//                    the real leader still gets its slot and the group's sums are right
//   squatter         HELLOs for an occupied slot, with another leader count, or for a complete
//                    group are refused alone: the group and its holders go on untouched
//   garbage          bad frames from unauthenticated connections never end a group
//   job_isolation    a job key of job A admits to A's groups only
//   key_file         the daemon makes its key file 0600, reads it again, refuses one open to
//                    others or not holding a key; --print-job-key derives the job key
//   connections      --max-connections: one more connection gets ERROR and a close; a freed
//                    place is usable again
//   handshake        --handshake-timeout: silent and half-sent connections are closed; an
//                    authenticated leader waiting for its group is not
//   idle             --idle-timeout: idle members are closed, members in an operation are not
//   idle_memory      3,000 idle connections: the daemon's VmRSS stays within a bound while they
//                    are open and returns near its baseline once they close
//   listen_warning   tcp:0.0.0.0 is served with a WARNING, 127.0.0.1 and unix sockets without
// Nothing here measures time against a target: every wait is bounded only to fail instead of
// hanging (the ctest TIMEOUT is the real bound).
// Usage: weft_aggd_security <path of weft-aggd> <case>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <functional>
#include <map>

#include "aggd_test_util.h"
#include "weft/offload.h"

using namespace aggd_test;
using namespace weft::aggd;

namespace {

std::string g_exe, g_dir;

struct Daemon {
  pid_t pid = -1;
  std::string sock, key_path, log;
  Key key{};  // the daemon key
};

Daemon start(const std::string& name, const std::vector<std::string>& extra = {}) {
  Daemon d;
  d.sock = g_dir + "/" + name + ".sock";
  d.key_path = g_dir + "/" + name + ".key";
  static int starts = 0;  // a log of its own per start: a restart must not read the last one's
  d.log = g_dir + "/" + name + "." + std::to_string(++starts) + ".log";
  std::vector<std::string> args = {"--listen", "unix:" + d.sock, "--key-file", d.key_path, "--fragment-bytes", "4096"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::string line;
  d.pid = start_daemon(g_exe, args, d.log, &line);
  d.key = read_key(d.key_path);
  return d;
}

// SIGTERM, exit 0 expected; the stats line.
std::string stop(Daemon& d) {
  CHECK(kill(d.pid, SIGTERM) == 0, "SIGTERM: %s", strerror(errno));
  int status = 0;
  CHECK(wait_pid(d.pid, 20, &status), "the daemon did not exit within 20 s of SIGTERM");
  forget_daemon(d.pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the daemon ended with status 0x%x", status);
  const std::string log = read_file(d.log);
  const size_t at = log.rfind("weft-aggd: ");
  return at == std::string::npos ? "" : log.substr(at);
}

void check_alive(const Daemon& d, const char* after) {
  int status = 0;
  CHECK(waitpid(d.pid, &status, WNOHANG) == 0, "the daemon died after %s (status 0x%x)", after, status);
}

int open_conn(const Daemon& d) {
  const int fd = connect_unix(d.sock);
  CHECK(fd >= 0, "cannot connect to %s: %s", d.sock.c_str(), strerror(errno));
  return fd;
}

// A connection that answered its CHALLENGE with a HELLO signed by job_k.
int join(const Daemon& d, const Key& job_k, const char* job, uint64_t comm, uint32_t index, uint32_t count) {
  const int fd = open_conn(d);
  CHECK(send_all(fd, answer_challenge(fd, job_k, hello(job, comm, index, count))), "sending HELLO");
  return fd;
}
int join(const Daemon& d, const char* job, uint64_t comm, uint32_t index, uint32_t count) {
  return join(d, job_key(d.key, job), job, comm, index, count);
}

void expect_welcome(int fd, const char* who) {
  RawFrame f;
  CHECK(read_frame(fd, &f, 20), "%s: no WELCOME", who);
  CHECK(f.type == uint16_t(FrameType::welcome) && f.payload.size() == sizeof(WelcomePayload),
        "%s: frame type %u instead of WELCOME%s", who, f.type,
        f.type == uint16_t(FrameType::error) ? (": " + std::string(reinterpret_cast<char*>(f.payload.data()) + 8)).c_str()
                                              : "");
}

// The connection ends with an ERROR whose text contains `text`; returns that text.
std::string expect_closed_with_error(int fd, const char* who, const char* text, double timeout_s = 20) {
  std::vector<uint8_t> bytes;
  const End end = read_to_end(fd, &bytes, timeout_s);
  close(fd);
  CHECK(end == End::closed, "%s: the daemon did not close the connection within %.0f s", who, timeout_s);
  std::vector<RawFrame> frames;
  std::string why;
  CHECK(split_frames(bytes, &frames, &why), "%s: the daemon sent %s", who, why.c_str());
  CHECK(!frames.empty() && frames.back().type == uint16_t(FrameType::error), "%s: no ERROR before the close", who);
  for (const RawFrame& f : frames)
    CHECK(f.type == uint16_t(FrameType::challenge) || f.type == uint16_t(FrameType::error),
          "%s: the daemon sent frame type %u to a refused connection", who, f.type);
  ErrorPayload e;
  std::memcpy(&e, frames.back().payload.data(), sizeof e);
  const std::string got(e.text, strnlen(e.text, sizeof e.text));
  CHECK(got.find(text) != std::string::npos, "%s: ERROR '%s', expected one about '%s'", who, got.c_str(), text);
  return got;
}

// No frame and no close on fd for a moment (the daemon has had a round trip to react).
void expect_quiet(int fd, const char* who) {
  pollfd pf{fd, POLLIN, 0};
  CHECK(poll(&pf, 1, 200) == 0, "%s: the daemon sent something or closed the connection", who);
}

// One allreduce (sum of one int64 per leader, sequence number seq) over the members; every
// member must get the sum of `values`.
void allreduce(const std::vector<int>& fds, const std::vector<int64_t>& values, uint64_t seq, const char* what) {
  for (size_t l = 0; l < fds.size(); ++l) {
    BeginPayload b{};
    b.seq = seq;
    b.coll = WEFT_OFFLOAD_ALLREDUCE;
    b.dtype = WEFT_OFFLOAD_INT64;
    b.op = WEFT_OFFLOAD_SUM;
    b.total_bytes = 8;
    b.want_bytes = 8;
    FragPayload fp{seq, 0, 0, 8, 0};
    std::vector<uint8_t> out = make_frame(FrameType::begin, b);
    const auto frag = make_frame(FrameType::frag, &fp, sizeof fp, &values[l], 8);
    out.insert(out.end(), frag.begin(), frag.end());
    CHECK(send_all(fds[l], out), "%s: sending leader %zu's operation", what, l);
  }
  int64_t want = 0;
  for (int64_t v : values) want += v;
  for (size_t l = 0; l < fds.size(); ++l) {
    RawFrame r;
    CHECK(read_frame(fds[l], &r, 20), "%s: leader %zu got no RESULT", what, l);
    CHECK(r.type == uint16_t(FrameType::result) && r.payload.size() == sizeof(FragPayload) + 8,
          "%s: leader %zu got frame type %u instead of its RESULT", what, l, r.type);
    int64_t got;
    std::memcpy(&got, r.payload.data() + sizeof(FragPayload), 8);
    CHECK(got == want, "%s: leader %zu's sum is %lld, expected %lld", what, l, (long long)got, (long long)want);
  }
}

uint64_t stat_of(const std::string& stats, const char* after_number) {
  // "..., N <after_number>..." : the number before the phrase.
  const size_t at = stats.find(after_number);
  CHECK(at != std::string::npos && at >= 2, "no '%s' in the stats line: %s", after_number, stats.c_str());
  size_t b = at - 1;
  while (b > 0 && isdigit(static_cast<unsigned char>(stats[b - 1]))) --b;
  return std::stoull(stats.substr(b, at - 1 - b));
}

// --- the cases ---------------------------------------------------------------------------------

void outsider() {
  Daemon d = start("outsider");
  Key stranger;
  RAND_bytes(stranger.data(), int(stranger.size()));
  const int leader0 = join(d, "job", 1, 0, 2);
  expect_quiet(leader0, "leader 0 waiting for its group");
  // No MAC at all, the MAC of another key, and a real leader's HELLO replayed on another
  // connection: each is refused, and slot 1 stays free.
  {
    const int fd = open_conn(d);
    send_all(fd, make_frame(FrameType::hello, hello("job", 1, 1, 2)));
    expect_closed_with_error(fd, "a HELLO without a MAC", "authentication failed");
  }
  {
    const int fd = open_conn(d);
    send_all(fd, answer_challenge(fd, stranger, hello("job", 1, 1, 2)));
    expect_closed_with_error(fd, "a HELLO signed with another key", "authentication failed");
  }
  {
    const int fd = open_conn(d);
    send_all(fd, answer_challenge(fd, job_key(stranger, "job"), hello("job", 1, 1, 2)));
    expect_closed_with_error(fd, "a HELLO signed with a job key of another daemon key", "authentication failed");
  }
  const int leader1 = open_conn(d);
  const std::vector<uint8_t> real_hello = answer_challenge(leader1, job_key(d.key, "job"), hello("job", 1, 1, 2));
  {
    const int fd = open_conn(d);
    Nonce ignored;
    CHECK(read_challenge(fd, &ignored), "no CHALLENGE");
    send_all(fd, real_hello);
    expect_closed_with_error(fd, "a real leader's HELLO replayed on another connection", "authentication failed");
  }
  // An outsider that goes on sending operations after its refused HELLO changes nothing.
  {
    const int fd = open_conn(d);
    int64_t poison = 1000000;
    BeginPayload b{};
    b.coll = WEFT_OFFLOAD_ALLREDUCE;
    b.dtype = WEFT_OFFLOAD_INT64;
    b.total_bytes = b.want_bytes = 8;
    FragPayload fp{0, 0, 0, 8, 0};
    std::vector<uint8_t> bytes = answer_challenge(fd, stranger, hello("job", 1, 1, 2));
    for (const auto& f : {make_frame(FrameType::begin, b), make_frame(FrameType::frag, &fp, sizeof fp, &poison, 8)})
      bytes.insert(bytes.end(), f.begin(), f.end());
    send_all(fd, bytes);
    expect_closed_with_error(fd, "an outsider's HELLO and poisoned operation", "authentication failed");
  }
  expect_quiet(leader0, "leader 0 after the outsiders");
  // The real leader 1 still gets its slot, and the sums are the real leaders' alone.
  CHECK(send_all(leader1, real_hello), "sending the real leader 1's HELLO");
  expect_welcome(leader0, "leader 0");
  expect_welcome(leader1, "the real leader 1");
  allreduce({leader0, leader1}, {5, 37}, 0, "after the outsiders");
  allreduce({leader0, leader1}, {-8, 1}, 1, "a second operation");
  close(leader0);
  close(leader1);
  const std::string stats = stop(d);
  CHECK(stat_of(stats, "failed authentication") == 5, "stats: %s", stats.c_str());
  printf("aggd.auth.outsider: ok: HELLOs without a MAC, with another key, replayed, and followed by a poisoned "
         "operation were refused; the real leader joined and the sums are right (%s)\n", stats.c_str());
}

void squatter() {
  Daemon d = start("squatter");
  Key stranger;
  RAND_bytes(stranger.data(), int(stranger.size()));
  const int leader0 = join(d, "job", 7, 0, 3);
  // An outsider claims the free slot 1 first: refused, the slot stays free for the real leader.
  {
    const int fd = open_conn(d);
    send_all(fd, answer_challenge(fd, stranger, hello("job", 7, 1, 3)));
    expect_closed_with_error(fd, "an outsider claiming a free slot", "authentication failed");
  }
  const int leader1 = join(d, "job", 7, 1, 3);
  // Authenticated, but claiming a held slot, or with another leader count: refused alone.
  expect_closed_with_error(join(d, "job", 7, 0, 3), "a second claim to slot 0", "another connection holds");
  expect_closed_with_error(join(d, "job", 7, 1, 3), "a second claim to slot 1", "another connection holds");
  expect_closed_with_error(join(d, "job", 7, 2, 4), "a HELLO with another leader count", "the group has 3 leaders");
  expect_closed_with_error(join(d, "job", 7, 3, 3), "a HELLO with an index outside the group", "not below leader_count");
  expect_quiet(leader0, "leader 0 after the squatters");
  expect_quiet(leader1, "leader 1 after the squatters");
  const int leader2 = join(d, "job", 7, 2, 3);
  expect_welcome(leader0, "leader 0");
  expect_welcome(leader1, "leader 1");
  expect_welcome(leader2, "leader 2");
  // Complete now: a late claim to any slot is refused, the group goes on.
  expect_closed_with_error(join(d, "job", 7, 2, 3), "a HELLO for a complete group", "already complete");
  allreduce({leader0, leader1, leader2}, {1, 20, 300}, 0, "after the squatters");
  close(leader0);
  close(leader1);
  close(leader2);
  const std::string stats = stop(d);
  printf("aggd.auth.squatter: ok: claims to a held slot, another leader count, an index outside the group and a "
         "complete group were refused without touching the group; an outsider could not take a free slot (%s)\n",
         stats.c_str());
}

void garbage() {
  Daemon d = start("garbage");
  const int leader0 = join(d, "job", 3, 0, 2);
  // Unauthenticated connections: noise, frames before any HELLO, a HELLO for the group's free
  // slot without a MAC followed by noise, a truncated HELLO then the end of stream.
  auto header_only = [](FrameType type, uint32_t length) {
    const FrameHeader h{kMagic, kVersion, uint16_t(type), length, 0};
    const auto* p = reinterpret_cast<const uint8_t*>(&h);
    return std::vector<uint8_t>(p, p + sizeof h);
  };
  const std::vector<std::pair<const char*, std::vector<uint8_t>>> cases = {
      {"noise", std::vector<uint8_t>(64, 0xee)},
      {"a BEGIN before HELLO", make_frame(FrameType::begin, BeginPayload{})},
      {"a FRAG header of 4 GiB", header_only(FrameType::frag, 0xFFFFFFF0u)},
      {"a HELLO of the wrong size", make_frame(FrameType::hello, "1234", 4)},
  };
  for (const auto& [name, bytes] : cases) {
    const int fd = open_conn(d);
    send_all(fd, bytes);
    expect_closed_with_error(fd, name, "");
  }
  {
    const int fd = open_conn(d);
    std::vector<uint8_t> b = make_frame(FrameType::hello, hello("job", 3, 1, 2));
    b.insert(b.end(), 100, 0xab);
    send_all(fd, b);
    expect_closed_with_error(fd, "a HELLO for the free slot without a MAC, then noise", "authentication failed");
  }
  {
    const int fd = open_conn(d);
    const auto h = make_frame(FrameType::hello, hello("job", 3, 1, 2));
    send_all(fd, h.data(), h.size() / 2);
    shutdown(fd, SHUT_WR);
    expect_closed_with_error(fd, "half a HELLO, then the end of stream", "stream ended");
  }
  expect_quiet(leader0, "leader 0 after the garbage");
  const int leader1 = join(d, "job", 3, 1, 2);
  expect_welcome(leader0, "leader 0");
  expect_welcome(leader1, "leader 1");
  // The group complete and working: more garbage from strangers still does not touch it.
  for (int k = 0; k < 3; ++k) {
    const int fd = open_conn(d);
    send_all(fd, std::vector<uint8_t>(200, uint8_t(k * 71)));
    expect_closed_with_error(fd, "noise beside a complete group", "");
  }
  allreduce({leader0, leader1}, {40, 2}, 0, "after the garbage");
  close(leader0);
  close(leader1);
  const std::string stats = stop(d);
  printf("aggd.auth.garbage: ok: 9 unauthenticated connections sent bad frames, the group formed and summed "
         "right (%s)\n", stats.c_str());
}

void job_isolation() {
  Daemon d = start("jobs");
  const Key key_a = job_key(d.key, "job-a");
  const int b0 = join(d, "job-b", 11, 0, 2);
  // A holder of job A's key speaking as job B, to B's free slot: refused.
  {
    const int fd = open_conn(d);
    send_all(fd, answer_challenge(fd, key_a, hello("job-b", 11, 1, 2)));
    expect_closed_with_error(fd, "job A's key for job B's group", "authentication failed");
  }
  expect_quiet(b0, "job B's leader 0");
  // Job A's key works for job A, on the same comm_key (groups are per job).
  const int a0 = join(d, key_a, "job-a", 11, 0, 1);
  expect_welcome(a0, "job A's leader");
  const int b1 = join(d, "job-b", 11, 1, 2);
  expect_welcome(b0, "job B's leader 0");
  expect_welcome(b1, "job B's leader 1");
  allreduce({b0, b1}, {3, 4}, 0, "job B");
  allreduce({a0}, {9}, 0, "job A");
  close(a0);
  close(b0);
  close(b1);
  stop(d);
  printf("aggd.auth.job_isolation: ok: job A's key did not admit to job B's group; both jobs' groups work\n");
}

void key_file() {
  const std::string path = g_dir + "/bad.key";
  Daemon d = start("made");
  (void)d;
  struct stat st;
  CHECK(stat(d.key_path.c_str(), &st) == 0 && (st.st_mode & 0777) == 0600, "the key file's mode is %04o, not 0600",
        unsigned(st.st_mode & 0777));
  const std::string text = read_file(d.key_path);
  CHECK(text.size() == 65 && text.back() == '\n' && text.find_first_not_of("0123456789abcdef\n") == std::string::npos,
        "the key file holds '%s'", text.c_str());
  CHECK(read_file(d.log).find("key created in " + d.key_path) != std::string::npos, "the log does not say the key was made");
  stop(d);
  // A second start reads the same key: a client holding it joins.
  Daemon again = start("made");
  CHECK(again.key == d.key, "the restarted daemon has another key");
  CHECK(read_file(again.log).find("key read from " + again.key_path) != std::string::npos, "the log does not say the key was read");
  const int fd = join(again, "job", 1, 0, 1);
  expect_welcome(fd, "a leader with the key of the first start");
  close(fd);
  stop(again);
  // --print-job-key: "job NAME" and HMAC(daemon key, label || 0 || NAME).
  {
    const std::string out_path = g_dir + "/job.key";
    const pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
      const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      dup2(out, 1);
      execl(g_exe.c_str(), g_exe.c_str(), "--key-file", again.key_path.c_str(), "--print-job-key", "slurm-42.0",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    CHECK(wait_pid(pid, 10, &status) && WIFEXITED(status) && WEXITSTATUS(status) == 0, "--print-job-key failed");
    std::string job;
    const Key k = read_key(out_path, &job);
    CHECK(job == "slurm-42.0" && k == job_key(again.key, "slurm-42.0"), "--print-job-key printed '%s'",
          read_file(out_path).c_str());
  }
  // Refused at start: a key file open to others, one that holds no key, a job key.
  auto refused = [](const std::string& key_path, const char* text) {
    const std::string log = g_dir + "/refused.log";
    const pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
      const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      dup2(fd, 2);
      const std::string listen = "unix:" + g_dir + "/refused.sock";
      execl(g_exe.c_str(), g_exe.c_str(), "--listen", listen.c_str(), "--key-file", key_path.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    CHECK(wait_pid(pid, 10, &status), "a daemon with a bad key file kept running");
    const std::string said = read_file(log);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1 && said.find(text) != std::string::npos &&
              said.find("listening") == std::string::npos,
          "a daemon with a bad key file: status 0x%x, said '%s'", status, said.c_str());
  };
  CHECK(chmod(again.key_path.c_str(), 0640) == 0, "chmod");
  refused(again.key_path, "open to other users");
  {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, "not a key\n", 10) == 10, "writing a bad key file");
    close(fd);
  }
  refused(path, "does not hold a key");
  refused(g_dir + "/job.key", "holds a job key");
  printf("aggd.auth.key_file: ok: made 0600, read again on restart, --print-job-key derives the job key; a key "
         "file open to others, one without a key and a job key are refused at start\n");
}

void connections() {
  constexpr int kLimit = 8;
  Daemon d = start("limit", {"--max-connections", std::to_string(kLimit)});
  std::vector<int> held;
  std::vector<Nonce> nonces(kLimit);
  for (int i = 0; i < kLimit; ++i) {
    held.push_back(open_conn(d));
    CHECK(read_challenge(held.back(), &nonces[size_t(i)]), "connection %d within the limit got no CHALLENGE", i);
  }
  for (int k = 0; k < 3; ++k)
    expect_closed_with_error(open_conn(d), "a connection over the limit", "too many connections");
  // A place freed is usable again (the daemon notices the close on its next round).
  close(held.back());
  held.pop_back();
  int fresh = -1;
  for (int attempt = 0; fresh < 0; ++attempt) {
    CHECK(attempt < 3000, "no place came free within 3000 attempts after a connection closed");
    const int fd = open_conn(d);
    RawFrame f;
    CHECK(read_frame(fd, &f, 10), "no answer to a connection");
    if (f.type == uint16_t(FrameType::challenge)) {
      fresh = fd;
      HelloPayload h = hello("job", 1, 0, 2);
      Nonce nonce;
      std::memcpy(nonce.data(), f.payload.data(), nonce.size());
      RAND_bytes(h.nonce, sizeof h.nonce);
      set_hello_mac(&h, job_key(d.key, "job"), nonce);
      CHECK(send_all(fd, make_frame(FrameType::hello, h)), "sending HELLO");
    } else {
      close(fd);
      usleep(10000);
    }
  }
  // One of the connections held all along joins the same group.
  {
    HelloPayload h = hello("job", 1, 1, 2);
    RAND_bytes(h.nonce, sizeof h.nonce);
    set_hello_mac(&h, job_key(d.key, "job"), nonces[0]);
    CHECK(send_all(held[0], make_frame(FrameType::hello, h)), "sending HELLO");
  }
  expect_welcome(fresh, "the connection in the freed place");
  expect_welcome(held[0], "a connection held from the start");
  allreduce({fresh, held[0]}, {100, 23}, 0, "at the connection limit");
  for (int fd : held) close(fd);
  close(fresh);
  const std::string stats = stop(d);
  CHECK(stat_of(stats, "refused at the connection limit") >= 3, "stats: %s", stats.c_str());
  printf("aggd.limit.connections: ok: %d connections held, more refused with an ERROR, a freed place used by a "
         "group (%s)\n", kLimit, stats.c_str());
}

void handshake() {
  // Long enough that the authenticated leader below says its HELLO in time even on a busy
  // machine, short enough to keep the test quick.
  Daemon d = start("handshake", {"--handshake-timeout", "2"});
  const int member = join(d, "job", 5, 0, 2);  // authenticated, waiting for its group
  const int silent = open_conn(d);              // never says anything
  const int half = open_conn(d);                // says half a HELLO, then nothing
  {
    const auto h = make_frame(FrameType::hello, hello("job", 5, 1, 2));
    send_all(half, h.data(), h.size() / 2);
  }
  const int nothing_read = open_conn(d);  // reads nothing either (not even its CHALLENGE)
  expect_closed_with_error(silent, "a silent connection", "no authenticated HELLO within 2000 ms", 60);
  expect_closed_with_error(half, "half a HELLO", "no authenticated HELLO within 2000 ms", 60);
  expect_closed_with_error(nothing_read, "a connection that reads nothing", "no authenticated HELLO", 60);
  // The authenticated leader was not subject to it: its group completes.
  const int other = join(d, "job", 5, 1, 2);
  expect_welcome(member, "the leader that waited");
  expect_welcome(other, "the second leader");
  allreduce({member, other}, {6, 7}, 0, "after the handshake deadline");
  close(member);
  close(other);
  const std::string stats = stop(d);
  CHECK(stat_of(stats, "closed at a deadline") == 3, "stats: %s", stats.c_str());
  printf("aggd.limit.handshake_timeout: ok: silent, half-sent and unread connections were closed with an ERROR; "
         "an authenticated leader waiting for its group was not (%s)\n", stats.c_str());
}

void idle() {
  Daemon d = start("idle", {"--idle-timeout", "2", "--handshake-timeout", "60"});
  const int a = join(d, "job", 9, 0, 2), b = join(d, "job", 9, 1, 2);
  expect_welcome(a, "leader 0");
  expect_welcome(b, "leader 1");
  allreduce({a, b}, {1, 2}, 0, "first operation");
  // An operation one leader enters well past the idle time: the other, waiting inside it,
  // is not idle.
  {
    BeginPayload bp{};
    bp.seq = 1;
    bp.coll = WEFT_OFFLOAD_ALLREDUCE;
    bp.dtype = WEFT_OFFLOAD_INT64;
    bp.total_bytes = bp.want_bytes = 8;
    const int64_t va = 10, vb = 32;
    FragPayload fp{1, 0, 0, 8, 0};
    CHECK(send_all(a, make_frame(FrameType::begin, bp)) && send_all(a, make_frame(FrameType::frag, &fp, sizeof fp, &va, 8)),
          "leader 0's operation");
    sleep(5);
    CHECK(send_all(b, make_frame(FrameType::begin, bp)) && send_all(b, make_frame(FrameType::frag, &fp, sizeof fp, &vb, 8)),
          "leader 1's operation");
    for (int fd : {a, b}) {
      RawFrame r;
      CHECK(read_frame(fd, &r, 20) && r.type == uint16_t(FrameType::result), "a leader waiting in an operation was cut off");
      int64_t got;
      std::memcpy(&got, r.payload.data() + sizeof(FragPayload), 8);
      CHECK(got == 42, "the slow operation's sum is %lld", (long long)got);
    }
  }
  // Now both sit idle: each is closed with an ERROR that says why.
  expect_closed_with_error(a, "idle leader 0", "idle for 2 s", 60);
  expect_closed_with_error(b, "idle leader 1", "idle for 2 s", 60);
  // An idle member of an incomplete group: closed, and the group with it.
  const int lonely = join(d, "job", 10, 0, 2);
  expect_closed_with_error(lonely, "an idle leader of an incomplete group", "idle", 60);
  const std::string stats = stop(d);
  CHECK(stat_of(stats, "closed at a deadline") == 3, "stats: %s", stats.c_str());
  printf("aggd.limit.idle_timeout: ok: idle members closed with an ERROR, a member waiting in an operation kept "
         "(%s)\n", stats.c_str());
}

long rss_kb(pid_t pid) {
  const std::string s = read_file("/proc/" + std::to_string(pid) + "/status");
  const size_t at = s.find("VmRSS:");
  CHECK(at != std::string::npos, "no VmRSS for pid %d", int(pid));
  return atol(s.c_str() + at + 6);
}

int open_fds(pid_t pid) {
  int n = 0;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  CHECK(dir, "cannot list the daemon's descriptors");
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n;
}

void wait_fds(pid_t pid, const std::function<bool(int)>& ok, const char* what) {
  for (int k = 0; !ok(open_fds(pid)); ++k) {
    CHECK(k < 12000, "%s: the daemon has %d descriptors open after 120 s", what, open_fds(pid));
    usleep(10000);
  }
}

void idle_memory() {
  constexpr int kConnections = 3000;
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < rlim_t(kConnections + 64)) {
    rl.rlim_cur = std::min<rlim_t>(rl.rlim_max, kConnections + 64);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  CHECK(rl.rlim_cur >= rlim_t(kConnections + 64), "the descriptor limit (%llu) is below %d",
        (unsigned long long)rl.rlim_cur, kConnections + 64);
  // A handshake deadline far beyond the test: the connections stay until this test closes them.
  Daemon d = start("memory", {"--handshake-timeout", "600"});
  const int base_fds = open_fds(d.pid);  // no connection yet
  // The baseline after one group has run (what the daemon needs anyway).
  {
    const int fd = join(d, "job", 1, 0, 1);
    expect_welcome(fd, "warm-up leader");
    allreduce({fd}, {1}, 0, "warm-up");
    close(fd);
  }
  wait_fds(d.pid, [&](int n) { return n <= base_fds; }, "warm-up");
  usleep(200 * 1000);
  const long baseline = rss_kb(d.pid);
  std::vector<int> fds;
  for (int i = 0; i < kConnections; ++i) fds.push_back(open_conn(d));
  wait_fds(d.pid, [&](int n) { return n >= base_fds + kConnections; }, "accepting the connections");
  const long held = rss_kb(d.pid);
  for (int fd : fds) close(fd);
  wait_fds(d.pid, [&](int n) { return n <= base_fds; }, "closing the connections");
  usleep(200 * 1000);  // the round that closed the last ones also hands memory back
  const long after = rss_kb(d.pid);
  printf("aggd.limit.idle_memory: VmRSS %ld kB at baseline, %ld kB with %d idle connections, %ld kB after they "
         "closed\n", baseline, held, kConnections, after);
  // Bounds on memory only: 8 KiB a connection while held, and back within 2x the baseline + 4 MiB.
  CHECK(held - baseline < kConnections * 8, "%d idle connections grew the daemon by %ld kB", kConnections,
        held - baseline);
  CHECK(after < 2 * baseline + 4096, "after the connections closed the daemon holds %ld kB (baseline %ld kB)", after,
        baseline);
  check_alive(d, "the idle connections");
  const int fd = join(d, "job", 2, 0, 1);
  expect_welcome(fd, "a leader after the idle connections");
  close(fd);
  stop(d);
  printf("aggd.limit.idle_memory: ok\n");
}

void listen_warning() {
  for (const std::string& address : {std::string("tcp:0.0.0.0:0"), std::string("tcp:127.0.0.1:0")}) {
    const std::string log = g_dir + "/warning.log";
    std::string line;
    const pid_t pid = start_daemon(g_exe, {"--listen", address, "--key-file", g_dir + "/warning.key"}, log, &line);
    kill(pid, SIGTERM);
    int status = 0;
    CHECK(wait_pid(pid, 10, &status), "the daemon did not stop");
    forget_daemon(pid);
    const std::string said = read_file(log);
    const bool warned = said.find("WARNING: " + address.substr(0, address.size() - 1)) != std::string::npos &&
                        said.find("reachable from other hosts") != std::string::npos;
    CHECK(warned == (address.find("0.0.0.0") != std::string::npos), "listening on %s: %s a warning:\n%s",
          address.c_str(), warned ? "with" : "without", said.c_str());
  }
  Daemon d = start("unix");
  stop(d);
  CHECK(read_file(d.log).find("WARNING") == std::string::npos, "a unix socket was served with a warning");
  printf("aggd.listen.warning: ok: tcp:0.0.0.0 warned, tcp:127.0.0.1 and a unix socket not\n");
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, void (*)()> cases = {
      {"outsider", outsider},         {"squatter", squatter},   {"garbage", garbage},
      {"job_isolation", job_isolation}, {"key_file", key_file}, {"connections", connections},
      {"handshake", handshake},       {"idle", idle},           {"idle_memory", idle_memory},
      {"listen_warning", listen_warning},
  };
  if (argc != 3 || !cases.count(argv[2])) {
    fprintf(stderr, "usage: %s <path of weft-aggd> <case>; cases:", argv[0]);
    for (const auto& [name, fn] : cases) fprintf(stderr, " %s", name.c_str());
    fprintf(stderr, "\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  g_exe = argv[1];
  g_dir = make_temp_dir();
  cases.at(argv[2])();
  remove_temp_dir();
  return 0;
}
