// Helpers shared by the aggd tests: a temporary directory, the daemon as a child process (its
// stderr in a file), failing loudly (the daemon is killed on every failure path), raw socket
// I/O where every wait has a timeout, and the handshake's keys and MACs computed here from
// protocol.h's description with OpenSSL directly (not with the daemon's own code).
#pragma once
#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tools/aggd/protocol.h"

namespace aggd_test {

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Test state: which daemons to kill on failure, and whether this process is a forked leader
// (which must only _exit, never touch the daemons).
struct State {
  std::vector<pid_t> daemons;
  std::vector<std::string> logs;  // daemon logs, printed on failure
  std::string dir;                // removed on success
  bool in_child = false;
};
inline State& state() {
  static State s;
  return s;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

[[noreturn]] inline void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline void fail(const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (state().in_child) {
    fprintf(stderr, "FAIL (pid %d): %s\n", int(getpid()), msg);
    _exit(1);
  }
  fprintf(stderr, "FAIL: %s\n", msg);
  for (pid_t p : state().daemons)
    if (p > 0) kill(p, SIGKILL);
  for (pid_t p : state().daemons)
    if (p > 0) waitpid(p, nullptr, 0);
  for (const std::string& log : state().logs) {
    std::string text = read_file(log);
    if (text.size() > 4000) text = "...\n" + text.substr(text.size() - 4000);
    fprintf(stderr, "--- %s (tail) ---\n%s", log.c_str(), text.c_str());
  }
  fprintf(stderr, "(files kept in %s)\n", state().dir.c_str());
  exit(1);
}

#define CHECK(cond, ...)                                                  \
  do {                                                                    \
    if (!(cond)) ::aggd_test::fail("%s:%d: %s", __FILE__, __LINE__,       \
                                   ::aggd_test::format(__VA_ARGS__).c_str()); \
  } while (0)

inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return msg;
}

inline std::string make_temp_dir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/weft-aggd-test.XXXXXX";
  // Unix socket paths are short (108 bytes): fall back to /tmp if TMPDIR is deep.
  if (tmpl.size() > 60) tmpl = "/tmp/weft-aggd-test.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) fail("mkdtemp %s: %s", tmpl.c_str(), strerror(errno));
  state().dir = buf.data();
  return buf.data();
}

// AGGD_TEST_KEEP=1 keeps the directory (daemon logs) for a look.
inline void remove_temp_dir() {
  if (state().dir.empty()) return;
  if (const char* keep = getenv("AGGD_TEST_KEEP"); keep && *keep && *keep != '0') {
    printf("kept %s\n", state().dir.c_str());
    return;
  }
  nftw(state().dir.c_str(),
       [](const char* path, const struct stat*, int, struct FTW*) { return remove(path); }, 16,
       FTW_DEPTH | FTW_PHYS);
}

// The daemon as a child process with stderr in log_path. Returns its pid; waits until it
// printed its listening line (returned in *line).
inline pid_t start_daemon(const std::string& exe, const std::vector<std::string>& args, const std::string& log_path,
                          std::string* line, double timeout_s = 10) {
  const pid_t pid = fork();
  if (pid < 0) fail("fork: %s", strerror(errno));
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) _exit(126);
    dup2(fd, 2);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  state().daemons.push_back(pid);
  state().logs.push_back(log_path);
  const double deadline = now_s() + timeout_s;
  for (;;) {
    const std::string text = read_file(log_path);
    const size_t at = text.find("weft-aggd: listening on ");
    if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
      if (line) *line = text.substr(at, text.find('\n', at) - at);
      return pid;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      state().daemons.back() = -1;
      fail("the daemon exited before listening (status 0x%x): %s", status, text.c_str());
    }
    if (now_s() > deadline) fail("the daemon did not print its listening line within %.0f s", timeout_s);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Waits for a child with a timeout: true and *status if it ended.
inline bool wait_pid(pid_t pid, double timeout_s, int* status) {
  const double deadline = now_s() + timeout_s;
  for (;;) {
    const pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return false;
    if (now_s() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

inline void forget_daemon(pid_t pid) {
  for (pid_t& p : state().daemons)
    if (p == pid) p = -1;
}

// A blocking-free connect to a unix socket; -1 on failure.
inline int connect_unix(const std::string& path, double timeout_s = 5) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
  const double deadline = now_s() + timeout_s;
  for (;;) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) return fd;
    const int err = errno;
    close(fd);
    if ((err != EAGAIN && err != EINTR) || now_s() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Sends everything within timeout_s; false if the peer closed or the time ran out.
inline bool send_all(int fd, const void* data, size_t n, double timeout_s = 5) {
  const auto* p = static_cast<const uint8_t*>(data);
  const double deadline = now_s() + timeout_s;
  while (n > 0) {
    const ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      p += k;
      n -= size_t(k);
      continue;
    }
    if (k < 0 && errno != EAGAIN && errno != EINTR) return false;
    if (now_s() > deadline) return false;
    pollfd pf{fd, POLLOUT, 0};
    poll(&pf, 1, 50);
  }
  return true;
}
inline bool send_all(int fd, const std::vector<uint8_t>& bytes, double timeout_s = 5) {
  return send_all(fd, bytes.data(), bytes.size(), timeout_s);
}

enum class End { closed, timeout };

// Reads until the peer closes (end of stream or reset) or timeout_s passes.
inline End read_to_end(int fd, std::vector<uint8_t>* out, double timeout_s = 5) {
  const double deadline = now_s() + timeout_s;
  uint8_t buf[65536];
  for (;;) {
    const double left = deadline - now_s();
    if (left <= 0) return End::timeout;
    pollfd pf{fd, POLLIN, 0};
    const int n = poll(&pf, 1, int(left * 1000) + 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (k > 0) {
      out->insert(out->end(), buf, buf + k);
      continue;
    }
    if (k == 0) return End::closed;
    if (errno == EAGAIN || errno == EINTR) continue;
    return End::closed;  // ECONNRESET and the like
  }
}

// Reads exactly n bytes within timeout_s.
inline bool read_exact(int fd, void* data, size_t n, double timeout_s = 5) {
  auto* p = static_cast<uint8_t*>(data);
  const double deadline = now_s() + timeout_s;
  while (n > 0) {
    const double left = deadline - now_s();
    if (left <= 0) return false;
    pollfd pf{fd, POLLIN, 0};
    if (poll(&pf, 1, int(left * 1000) + 1) <= 0) continue;
    const ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
    if (k == 0) return false;
    if (k < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    p += k;
    n -= size_t(k);
  }
  return true;
}

struct RawFrame {
  uint16_t type = 0;
  std::vector<uint8_t> payload;
};

// Splits bytes from the daemon into frames; false if they are not well-formed frames.
inline bool split_frames(const std::vector<uint8_t>& bytes, std::vector<RawFrame>* frames, std::string* why) {
  using namespace weft::aggd;
  size_t at = 0;
  while (at < bytes.size()) {
    FrameHeader h;
    if (bytes.size() - at < sizeof h) {
      *why = "a truncated header";
      return false;
    }
    std::memcpy(&h, bytes.data() + at, sizeof h);
    if (h.magic != kMagic || h.version != kVersion || h.reserved != 0) {
      *why = "a bad header";
      return false;
    }
    if (bytes.size() - at - sizeof h < h.length) {
      *why = "a truncated payload";
      return false;
    }
    RawFrame f;
    f.type = h.type;
    f.payload.assign(bytes.begin() + ptrdiff_t(at + sizeof h), bytes.begin() + ptrdiff_t(at + sizeof h + h.length));
    if (h.type == uint16_t(FrameType::error) && h.length != sizeof(ErrorPayload)) {
      *why = "an ERROR of the wrong size";
      return false;
    }
    frames->push_back(std::move(f));
    at += sizeof h + h.length;
  }
  return true;
}

// Reads one frame within timeout_s.
inline bool read_frame(int fd, RawFrame* f, double timeout_s = 5) {
  weft::aggd::FrameHeader h;
  if (!read_exact(fd, &h, sizeof h, timeout_s)) return false;
  if (h.magic != weft::aggd::kMagic || h.length > (64u << 20)) return false;
  f->type = h.type;
  f->payload.resize(h.length);
  return h.length == 0 || read_exact(fd, f->payload.data(), h.length, timeout_s);
}

// The bytes of one frame with the given payload (fields of the header overridable).
inline std::vector<uint8_t> make_frame(weft::aggd::FrameType type, const void* payload, size_t n,
                                       const void* extra = nullptr, size_t extra_n = 0) {
  weft::aggd::FrameHeader h{weft::aggd::kMagic, weft::aggd::kVersion, uint16_t(type), uint32_t(n + extra_n), 0};
  std::vector<uint8_t> out(sizeof h + n + extra_n);
  std::memcpy(out.data(), &h, sizeof h);
  if (n) std::memcpy(out.data() + sizeof h, payload, n);
  if (extra_n) std::memcpy(out.data() + sizeof h + n, extra, extra_n);
  return out;
}
template <class T>
std::vector<uint8_t> make_frame(weft::aggd::FrameType type, const T& payload) {
  return make_frame(type, &payload, sizeof payload);
}

// An unauthenticated HELLO (its MAC is zeros).
inline weft::aggd::HelloPayload hello(const char* job, uint64_t key, uint32_t index, uint32_t count) {
  weft::aggd::HelloPayload h{};
  snprintf(h.job_id, sizeof h.job_id, "%s", job);
  h.comm_key = key;
  h.leader_index = index;
  h.leader_count = count;
  return h;
}

// --- keys and MACs -----------------------------------------------------------------------------

using Key = std::array<uint8_t, 32>;
using Nonce = std::array<uint8_t, weft::aggd::kNonceBytes>;

// HMAC-SHA-256 of label, a 0x00 byte, then the parts.
inline Key hmac(const Key& key, const char* label, const std::vector<std::pair<const void*, size_t>>& parts) {
  std::vector<uint8_t> msg(label, label + strlen(label) + 1);
  for (const auto& [p, n] : parts) msg.insert(msg.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  Key out{};
  unsigned len = 0;
  HMAC(EVP_sha256(), key.data(), int(key.size()), msg.data(), msg.size(), out.data(), &len);
  return out;
}

inline Key job_key(const Key& daemon_key, const std::string& job) {
  return hmac(daemon_key, "weft-aggd job key v2", {{job.data(), job.size()}});
}

// 64 hex digits (optionally after a "job NAME" line), as the key files hold them.
inline Key parse_key_text(const std::string& text, std::string* job = nullptr) {
  std::string hex = text;
  if (hex.rfind("job ", 0) == 0) {
    const size_t nl = hex.find('\n');
    if (job) *job = hex.substr(4, nl - 4);
    hex = hex.substr(nl + 1);
  }
  Key k{};
  if (hex.size() < 64) fail("a key file of %zu bytes: '%s'", text.size(), text.c_str());
  for (size_t i = 0; i < 32; ++i) k[i] = uint8_t(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return k;
}
inline Key read_key(const std::string& path, std::string* job = nullptr) { return parse_key_text(read_file(path), job); }

inline void set_hello_mac(weft::aggd::HelloPayload* h, const Key& job_k, const Nonce& daemon_nonce) {
  const Key mac = hmac(job_k, "weft-aggd hello v2",
                       {{daemon_nonce.data(), daemon_nonce.size()}, {h->nonce, sizeof h->nonce}, {h->job_id, sizeof h->job_id},
                        {&h->comm_key, 8}, {&h->leader_index, 4}, {&h->leader_count, 4}});
  std::memcpy(h->mac, mac.data(), mac.size());
}

inline Key welcome_mac(const Key& job_k, const Nonce& daemon_nonce, const weft::aggd::HelloPayload& h,
                       const weft::aggd::WelcomePayload& w) {
  return hmac(job_k, "weft-aggd welcome v2",
              {{h.nonce, sizeof h.nonce}, {daemon_nonce.data(), daemon_nonce.size()}, {h.job_id, sizeof h.job_id},
               {&h.comm_key, 8}, {&h.leader_index, 4}, {&h.leader_count, 4}, {&w, offsetof(weft::aggd::WelcomePayload, mac)}});
}

// The CHALLENGE the daemon sends first on every connection; false if something else came.
inline bool read_challenge(int fd, Nonce* nonce, double timeout_s = 5) {
  RawFrame f;
  if (!read_frame(fd, &f, timeout_s) || f.type != uint16_t(weft::aggd::FrameType::challenge) ||
      f.payload.size() != sizeof(weft::aggd::ChallengePayload))
    return false;
  std::memcpy(nonce->data(), f.payload.data(), nonce->size());
  return true;
}

// Reads the CHALLENGE on fd and returns the bytes of a HELLO that answers it with job_k.
inline std::vector<uint8_t> answer_challenge(int fd, const Key& job_k, weft::aggd::HelloPayload h) {
  Nonce nonce;
  if (!read_challenge(fd, &nonce)) fail("no CHALLENGE from the daemon");
  RAND_bytes(h.nonce, sizeof h.nonce);
  set_hello_mac(&h, job_k, nonce);
  return make_frame(weft::aggd::FrameType::hello, h);
}

}  // namespace aggd_test
