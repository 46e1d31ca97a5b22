// weft-aggd: the aggregation daemon that plays an in-network reduction switch for the aggd
// offload plugin. Command line, the key, signals, the listening line (with a warning for an
// address other hosts can reach) and the stats line at exit.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/aggd/address.h"
#include "tools/aggd/auth.h"
#include "tools/aggd/daemon.h"

namespace {

using weft::aggd::Address;
using weft::aggd::Aggregator;

int g_wake_write = -1;  // the signal handler's end of the wake-up pipe

void on_stop_signal(int) {
  const char byte = 1;
  const int saved = errno;
  (void)!write(g_wake_write, &byte, 1);
  errno = saved;
}

void usage(FILE* out) {
  fprintf(out,
          "usage: weft-aggd --listen ADDR [--listen ADDR]... [--key-file PATH] [--fragment-bytes N]\n"
          "                 [--window W] [--max-bytes N] [--max-connections N] [--handshake-timeout S]\n"
          "                 [--idle-timeout S] [--quiet]\n"
          "       weft-aggd [--key-file PATH] --print-job-key JOB\n"
          "  --listen ADDR         unix:/path/to/socket or tcp:HOST:PORT (HOST 127.0.0.1 if omitted,\n"
          "                        PORT 0 picks a free port, printed at start); an address other\n"
          "                        hosts can reach (e.g. tcp:0.0.0.0:N) is served with a warning\n"
          "  --key-file PATH       the daemon's secret key, made (mode 0600) if absent\n"
          "                        (default $HOME/.weft/aggd.key); clients need it, or a job key\n"
          "  --print-job-key JOB   print a job key file for JOB and exit: its holder can join\n"
          "                        only JOB's groups (give it to the job as WEFT_AGGD_KEY_FILE)\n"
          "  --fragment-bytes N    reduction unit, a multiple of 8 up to %u (default 65536)\n"
          "  --window W            fragments each group may have in flight (default 8)\n"
          "  --max-bytes N         largest result of one operation (default 1 GiB)\n"
          "  --max-connections N   connections at once; one more is refused (default 4096)\n"
          "  --handshake-timeout S seconds from connecting to an authenticated HELLO (default 5)\n"
          "  --idle-timeout S      seconds without input after which a connection whose group has\n"
          "                        no operation in flight is closed; 0: never (default 3600)\n"
          "  --quiet               no line per refused or lost connection\n"
          "Sizes take a K, M or G suffix (binary); seconds may have a fraction.\n"
          "SIGTERM or SIGINT stops the daemon after a stats line.\n",
          weft::aggd::kMaxFragmentBytes);
}

// Seconds, possibly fractional, as milliseconds; false unless a number in [0, 1e6].
bool parse_seconds(const char* text, int64_t* ms) {
  if (!text || !*text) return false;
  errno = 0;
  char* end = nullptr;
  const double v = strtod(text, &end);
  if (errno || end == text || *end != '\0' || !(v >= 0) || v > 1e6) return false;
  *ms = int64_t(v * 1000 + 0.5);
  return true;
}

// Enough descriptors for the connection limit: the soft limit is raised towards the hard one.
// Returns the connections the descriptors allow (a few are kept for listeners and the pipe).
size_t raise_descriptor_limit(size_t connections) {
  constexpr size_t kSpare = 32;
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return connections;
  const rlim_t want = rlim_t(connections + kSpare);
  if (rl.rlim_cur < want) {
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? want : std::min(want, rl.rlim_max);
    (void)setrlimit(RLIMIT_NOFILE, &rl);
    (void)getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want) return connections;
  return rl.rlim_cur > kSpare ? size_t(rl.rlim_cur - kSpare) : 1;
}

// A size: digits with an optional K/M/G suffix (powers of 1024).
bool parse_size(const char* text, uint64_t* out) {
  if (!text || !*text || *text == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text) return false;
  int shift = 0;
  if (*end == 'k' || *end == 'K') shift = 10, ++end;
  else if (*end == 'm' || *end == 'M') shift = 20, ++end;
  else if (*end == 'g' || *end == 'G') shift = 30, ++end;
  if (*end != '\0' || (shift && v > (~0ull >> shift))) return false;
  *out = uint64_t(v) << shift;
  return true;
}

bool install_signals(int wake_write) {
  g_wake_write = wake_write;
  struct sigaction sa{};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  return sigaction(SIGTERM, &sa, nullptr) == 0 && sigaction(SIGINT, &sa, nullptr) == 0 &&
         sigaction(SIGPIPE, &ignore, nullptr) == 0;  // write errors come back as EPIPE instead
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> listen_texts;
  uint64_t fragment_bytes = 64 * 1024, window = 8, max_bytes = uint64_t(1) << 30, max_connections = 4096;
  int64_t handshake_ms = 5000, idle_ms = 3600 * 1000;
  std::string key_path = weft::aggd::default_key_path(), print_job;
  bool print_job_key = false;
  Aggregator::Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take_value = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) {
        fprintf(stderr, "weft-aggd: %s needs a value\n", arg.c_str());
        return false;
      }
      value = argv[++i];
      return true;
    };
    auto take_size = [&](uint64_t* out) -> bool {
      if (!take_value()) return false;
      if (!parse_size(value.c_str(), out)) {
        fprintf(stderr, "weft-aggd: %s '%s' is not a size\n", arg.c_str(), value.c_str());
        return false;
      }
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      usage(stdout);
      return 0;
    } else if (arg == "--listen") {
      if (!take_value()) return 2;
      listen_texts.push_back(value);
    } else if (arg == "--fragment-bytes") {
      if (!take_size(&fragment_bytes)) return 2;
    } else if (arg == "--window") {
      if (!take_size(&window)) return 2;
    } else if (arg == "--max-bytes") {
      if (!take_size(&max_bytes)) return 2;
    } else if (arg == "--max-connections") {
      if (!take_size(&max_connections)) return 2;
    } else if (arg == "--handshake-timeout" || arg == "--idle-timeout") {
      if (!take_value()) return 2;
      int64_t* out = arg == "--handshake-timeout" ? &handshake_ms : &idle_ms;
      if (!parse_seconds(value.c_str(), out)) {
        fprintf(stderr, "weft-aggd: %s '%s' is not a number of seconds\n", arg.c_str(), value.c_str());
        return 2;
      }
    } else if (arg == "--key-file") {
      if (!take_value()) return 2;
      key_path = value;
    } else if (arg == "--print-job-key") {
      if (!take_value()) return 2;
      print_job = value;
      print_job_key = true;
    } else if (arg == "--quiet" && !has_value) {
      options.quiet = true;
    } else {
      fprintf(stderr, "weft-aggd: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (print_job_key) {
    // For a launcher: a key that admits its holder to JOB's groups only.
    if (print_job.empty() || print_job.size() >= weft::aggd::kMaxJobId ||
        print_job.find_first_of(" \t\r\n") != std::string::npos) {
      fprintf(stderr, "weft-aggd: --print-job-key needs a job id of 1-%u characters without spaces\n",
              weft::aggd::kMaxJobId - 1);
      return 2;
    }
    weft::aggd::KeyFile k;
    std::string why;
    if (!weft::aggd::read_key_file(key_path, &k, &why)) {
      fprintf(stderr, "weft-aggd: %s\n", why.c_str());
      return 1;
    }
    if (k.kind != weft::aggd::KeyFile::Kind::daemon) {
      fprintf(stderr, "weft-aggd: %s holds a job key, not the daemon's key\n", key_path.c_str());
      return 1;
    }
    fputs(weft::aggd::job_key_file_text(k.key, print_job).c_str(), stdout);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (listen_texts.empty()) {
    fprintf(stderr, "weft-aggd: no --listen address given\n");
    usage(stderr);
    return 2;
  }
  if (fragment_bytes == 0 || fragment_bytes % 8 != 0 || fragment_bytes > weft::aggd::kMaxFragmentBytes) {
    fprintf(stderr, "weft-aggd: --fragment-bytes %" PRIu64 " must be a positive multiple of 8 up to %u\n",
            fragment_bytes, weft::aggd::kMaxFragmentBytes);
    return 2;
  }
  if (window == 0 || window > 65536) {
    fprintf(stderr, "weft-aggd: --window %" PRIu64 " must be between 1 and 65536\n", window);
    return 2;
  }
  if (max_bytes == 0 || max_bytes / fragment_bytes >= (uint64_t(1) << 32)) {
    fprintf(stderr, "weft-aggd: --max-bytes %" PRIu64 " must be positive and at most 2^32 fragments\n", max_bytes);
    return 2;
  }
  if (max_connections == 0 || max_connections > (1u << 20)) {
    fprintf(stderr, "weft-aggd: --max-connections %" PRIu64 " must be between 1 and %u\n", max_connections, 1u << 20);
    return 2;
  }
  if (handshake_ms == 0) {
    fprintf(stderr, "weft-aggd: --handshake-timeout must be above 0\n");
    return 2;
  }
  options.fragment_bytes = uint32_t(fragment_bytes);
  options.window = uint32_t(window);
  options.max_bytes = max_bytes;
  weft::aggd::Daemon::Limits limits;
  limits.handshake = std::chrono::milliseconds(handshake_ms);
  limits.idle = std::chrono::milliseconds(idle_ms);
  limits.max_connections = raise_descriptor_limit(size_t(max_connections));
  if (limits.max_connections < max_connections)
    fprintf(stderr,
            "weft-aggd: warning: the descriptor limit (ulimit -n) allows only %zu connections, not the %" PRIu64
            " of --max-connections\n",
            limits.max_connections, max_connections);
  {
    bool created = false;
    std::string why;
    if (!weft::aggd::load_or_create_daemon_key(key_path, &options.daemon_key, &created, &why)) {
      fprintf(stderr, "weft-aggd: %s\n", why.c_str());
      return 1;
    }
    fprintf(stderr, "weft-aggd: key %s %s; clients need it (WEFT_AGGD_KEY_FILE) or a job key (--print-job-key)\n",
            created ? "created in" : "read from", key_path.c_str());
  }

  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0 || !install_signals(wake[1])) {
    fprintf(stderr, "weft-aggd: cannot set up signal handling: %s\n", strerror(errno));
    return 1;
  }

  std::vector<weft::aggd::Daemon::Listener> listeners;
  std::string names;
  auto close_listeners = [&] {
    for (auto& l : listeners) {
      close(l.fd);
      if (l.address.kind == Address::Kind::unix_socket) unlink(l.address.path.c_str());
    }
  };
  for (const std::string& text : listen_texts) {
    Address a, bound;
    std::string why;
    if (!weft::aggd::parse_address(text, &a, &why)) {
      fprintf(stderr, "weft-aggd: --listen %s\n", why.c_str());
      close_listeners();
      return 2;
    }
    const int fd = weft::aggd::listen_on(a, &bound, &why);
    if (fd < 0) {
      fprintf(stderr, "weft-aggd: %s\n", why.c_str());
      close_listeners();
      return 1;
    }
    listeners.push_back({fd, bound});
    names += (names.empty() ? "" : " and ") + weft::aggd::to_string(bound);
    if (!weft::aggd::only_local(fd))
      fprintf(stderr,
              "weft-aggd: WARNING: %s is reachable from other hosts, not only from this one (the default is "
              "127.0.0.1): anyone who can reach it can connect and hold connections up to the limits; only holders "
              "of the key can join a group, but frames travel unencrypted\n",
              weft::aggd::to_string(bound).c_str());
  }
  char idle_text[32] = "never";
  if (limits.idle.count()) snprintf(idle_text, sizeof idle_text, "%.6g s", double(limits.idle.count()) / 1000);
  fprintf(stderr,
          "weft-aggd: at most %zu connections; authenticated HELLO within %.6g s; idle connections closed after %s\n",
          limits.max_connections, double(limits.handshake.count()) / 1000, idle_text);
  fprintf(stderr, "weft-aggd: listening on %s (fragments of %u bytes, window %u: %" PRIu64 "-byte reduction buffer)\n",
          names.c_str(), options.fragment_bytes, options.window, uint64_t(options.fragment_bytes) * options.window);

  bool ok;
  Aggregator::Stats stats;
  uint64_t over_limit = 0;
  {
    weft::aggd::Daemon daemon(options, limits, std::move(listeners), wake[0]);
    ok = daemon.run();
    stats = daemon.stats();
    over_limit = daemon.over_limit();
  }
  fprintf(stderr,
          "weft-aggd: %" PRIu64 " groups, %" PRIu64 " operations, %" PRIu64 " fragments reduced, %" PRIu64
          " connections refused for protocol errors (%" PRIu64 " failed authentication), %" PRIu64
          " refused at the connection limit, %" PRIu64 " closed at a deadline\n",
          stats.groups, stats.operations, stats.fragments, stats.refused, stats.unauthenticated, over_limit,
          stats.timed_out);
  return ok ? 0 : 1;
}
