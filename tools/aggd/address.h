// Daemon addresses, "unix:/path/to/socket" or "tcp:HOST:PORT" (HOST defaults to 127.0.0.1),
// and the sockets both ends open on them. All sockets are non-blocking and close-on-exec.
#pragma once
#include <cstdint>
#include <string>

namespace weft::aggd {

struct Address {
  enum class Kind { unix_socket, tcp } kind = Kind::unix_socket;
  std::string path;  // unix
  std::string host;  // tcp
  uint16_t port = 0; // tcp; 0 at listen: an ephemeral port
};

// Parses text; on failure returns false with *why saying what is wrong.
bool parse_address(const std::string& text, Address* out, std::string* why);
std::string to_string(const Address& a);

// A listening socket on a (a stale unix socket file is removed first; a live one is an error).
// *bound gets the address actually bound (the chosen port for tcp port 0). -1 on failure.
int listen_on(const Address& a, Address* bound, std::string* why);

// Connects to a, waiting at most timeout_ms. The socket on success, else -1 with *why set.
int connect_to(const Address& a, int timeout_ms, std::string* why);

// TCP_NODELAY on a tcp socket (a no-op on a unix one): frames are small and latency-bound.
void set_tcp_nodelay(int fd);

// Keepalive probes on an accepted tcp socket, so a peer whose host vanished (a half-open
// connection) is noticed in minutes rather than hours.
void set_tcp_keepalive(int fd);

// Whether a listening socket is reachable only from this host: a unix socket, or tcp bound to
// a loopback address (127.0.0.0/8, ::1). A wildcard (0.0.0.0, ::) or any other address is not.
bool only_local(int fd);

}  // namespace weft::aggd
