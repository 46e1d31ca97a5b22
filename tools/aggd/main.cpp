// weft-aggd: the aggregation daemon that plays an in-network reduction switch for the aggd
// offload plugin. Command line, signals, the listening line and the stats line at exit.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tools/aggd/address.h"
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
          "usage: weft-aggd --listen ADDR [--listen ADDR]... [--fragment-bytes N] [--window W]\n"
          "                 [--max-bytes N] [--quiet]\n"
          "  --listen ADDR         unix:/path/to/socket or tcp:HOST:PORT (HOST 127.0.0.1 if omitted,\n"
          "                        PORT 0 picks a free port, printed at start)\n"
          "  --fragment-bytes N    reduction unit, a multiple of 8 up to %u (default 65536)\n"
          "  --window W            fragments each group may have in flight (default 8)\n"
          "  --max-bytes N         largest result of one operation (default 1 GiB)\n"
          "  --quiet               no line per refused or lost connection\n"
          "Sizes take a K, M or G suffix (binary). SIGTERM or SIGINT stops the daemon after a stats line.\n",
          weft::aggd::kMaxFragmentBytes);
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
  uint64_t fragment_bytes = 64 * 1024, window = 8, max_bytes = uint64_t(1) << 30;
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
    } else if (arg == "--quiet" && !has_value) {
      options.quiet = true;
    } else {
      fprintf(stderr, "weft-aggd: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
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
  options.fragment_bytes = uint32_t(fragment_bytes);
  options.window = uint32_t(window);
  options.max_bytes = max_bytes;

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
  }
  fprintf(stderr, "weft-aggd: listening on %s (fragments of %u bytes, window %u: %" PRIu64 "-byte reduction buffer)\n",
          names.c_str(), options.fragment_bytes, options.window, uint64_t(options.fragment_bytes) * options.window);

  bool ok;
  Aggregator::Stats stats;
  {
    weft::aggd::Daemon daemon(options, std::move(listeners), wake[0]);
    ok = daemon.run();
    stats = daemon.stats();
  }
  fprintf(stderr,
          "weft-aggd: %" PRIu64 " groups, %" PRIu64 " operations, %" PRIu64 " fragments reduced, %" PRIu64
          " connections refused for protocol errors\n",
          stats.groups, stats.operations, stats.fragments, stats.refused);
  return ok ? 0 : 1;
}
