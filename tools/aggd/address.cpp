// Address parsing, listening and connecting for weft-aggd and its plugin.
#include "tools/aggd/address.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

namespace weft::aggd {

namespace {

std::string errno_text(const char* what, int err) { return std::string(what) + ": " + strerror(err); }

bool make_unix_addr(const std::string& path, sockaddr_un* sa, std::string* why) {
  *sa = {};
  sa->sun_family = AF_UNIX;
  if (path.size() >= sizeof sa->sun_path) {
    *why = "unix socket path of " + std::to_string(path.size()) + " bytes exceeds the limit of " +
           std::to_string(sizeof sa->sun_path - 1);
    return false;
  }
  std::memcpy(sa->sun_path, path.c_str(), path.size() + 1);
  return true;
}

int new_socket(int family, std::string* why) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) *why = errno_text("socket", errno);
  return fd;
}

void set_nodelay(int fd) {
  int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // latency matters more than packing
}

// A non-blocking connect, waited for with poll: 0 or an errno.
int connect_wait(int fd, const sockaddr* sa, socklen_t len, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (::connect(fd, sa, len) == 0) return 0;
    const int err = errno;
    if (err == EINTR) continue;
    // A unix listener with a full backlog answers EAGAIN: retry until the deadline.
    if (err == EAGAIN && sa->sa_family == AF_UNIX) {
      if (std::chrono::steady_clock::now() >= deadline) return ETIMEDOUT;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    if (err != EINPROGRESS) return err;
    break;
  }
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ETIMEDOUT;
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, int(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) continue;
    int err = 0;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return errno;
    return err;
  }
}

}  // namespace

bool parse_address(const std::string& text, Address* out, std::string* why) {
  Address a;
  if (text.rfind("unix:", 0) == 0) {
    a.kind = Address::Kind::unix_socket;
    a.path = text.substr(5);
    if (a.path.empty()) {
      *why = "'" + text + "' names no socket path";
      return false;
    }
    sockaddr_un sa;
    if (!make_unix_addr(a.path, &sa, why)) return false;
    *out = a;
    return true;
  }
  if (text.rfind("tcp:", 0) != 0) {
    *why = "'" + text + "' is neither unix:/path nor tcp:host:port";
    return false;
  }
  a.kind = Address::Kind::tcp;
  const std::string rest = text.substr(4);
  const size_t colon = rest.rfind(':');
  std::string port = rest;
  a.host = "127.0.0.1";
  if (colon != std::string::npos) {
    port = rest.substr(colon + 1);
    std::string host = rest.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (!host.empty()) a.host = host;
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535) {
    *why = "'" + text + "' has no valid port (0-65535)";
    return false;
  }
  a.port = uint16_t(std::stoul(port));
  *out = a;
  return true;
}

std::string to_string(const Address& a) {
  if (a.kind == Address::Kind::unix_socket) return "unix:" + a.path;
  if (a.host.find(':') != std::string::npos) return "tcp:[" + a.host + "]:" + std::to_string(a.port);
  return "tcp:" + a.host + ":" + std::to_string(a.port);
}


namespace {

// The socket addresses of a tcp address, for bind (passive) or connect; null, with *why, when
// the host does not resolve. Free with freeaddrinfo.
addrinfo* resolve(const Address& a, bool passive, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(a.host.c_str(), std::to_string(a.port).c_str(), &hints, &res);
  if (rc != 0) {
    *why = "cannot resolve " + a.host + ": " + gai_strerror(rc);
    return nullptr;
  }
  return res;
}

}  // namespace

int listen_on(const Address& a, Address* bound, std::string* why) {
  if (a.kind == Address::Kind::unix_socket) {
    sockaddr_un sa;
    if (!make_unix_addr(a.path, &sa, why)) return -1;
    struct stat st;
    if (lstat(a.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        *why = a.path + " exists and is not a socket";
        return -1;
      }
      // A socket file that still accepts belongs to a running daemon; only a stale one goes.
      std::string ignored;
      const int probe = connect_to(a, 200, &ignored);
      if (probe >= 0) {
        ::close(probe);
        *why = a.path + " is in use by a running daemon";
        return -1;
      }
      if (unlink(a.path.c_str()) != 0) {
        *why = errno_text(("cannot remove the stale socket " + a.path).c_str(), errno);
        return -1;
      }
    }
    const int fd = new_socket(AF_UNIX, why);
    if (fd < 0) return -1;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      *why = errno_text(("cannot listen on " + to_string(a)).c_str(), errno);
      ::close(fd);
      return -1;
    }
    *bound = a;
    return fd;
  }
  addrinfo* res = resolve(a, true, why);
  if (!res) return -1;
  int fd = -1;
  for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = new_socket(ai->ai_family, why);
    if (fd < 0) continue;
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // restarts within TIME_WAIT
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      *why = errno_text(("cannot listen on " + to_string(a)).c_str(), errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) return -1;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  *bound = a;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET) bound->port = ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    if (ss.ss_family == AF_INET6) bound->port = ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  return fd;
}

int connect_to(const Address& a, int timeout_ms, std::string* why) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (a.kind == Address::Kind::unix_socket) {
    sockaddr_un sa;
    if (!make_unix_addr(a.path, &sa, why)) return -1;
    const int fd = new_socket(AF_UNIX, why);
    if (fd < 0) return -1;
    if (const int err = connect_wait(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa, deadline); err != 0) {
      *why = errno_text(("cannot connect to " + to_string(a)).c_str(), err);
      ::close(fd);
      return -1;
    }
    return fd;
  }
  addrinfo* res = resolve(a, false, why);
  if (!res) return -1;
  int fd = -1;
  for (addrinfo* ai = res; ai && fd < 0; ai = ai->ai_next) {
    fd = new_socket(ai->ai_family, why);
    if (fd < 0) continue;
    if (const int err = connect_wait(fd, ai->ai_addr, ai->ai_addrlen, deadline); err != 0) {
      *why = errno_text(("cannot connect to " + to_string(a)).c_str(), err);
      ::close(fd);
      fd = -1;
      continue;
    }
    set_nodelay(fd);
  }
  freeaddrinfo(res);
  return fd;
}

void set_tcp_nodelay(int fd) { set_nodelay(fd); }

void set_tcp_keepalive(int fd) {
  // First probe after 60 s of silence, then every 10 s; 6 unanswered probes end it.
  const int on = 1, idle_s = 60, interval_s = 10, probes = 6;
  (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  (void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

bool only_local(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  switch (ss.ss_family) {
    case AF_UNIX: return true;
    case AF_INET: return (ntohl(reinterpret_cast<sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127;
    case AF_INET6: {
      const in6_addr& a = reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr;
      if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
      return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
    }
  }
  return false;
}

}  // namespace weft::aggd
