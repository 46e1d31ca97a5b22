// Keys and MACs of the aggd protocol (protocol.h, "Version 2"): the daemon key and its key
// file, job keys derived from it, and the HMAC-SHA-256 proofs of the handshake. OpenSSL's
// libcrypto does the cryptography; comparisons of MACs take constant time.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "tools/aggd/protocol.h"

namespace weft::aggd {

inline constexpr size_t kKeyBytes = 32;
using Key = std::array<uint8_t, kKeyBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

// What a key file holds. A daemon key file is one line of 64 hex digits. A job key file, as
// `weft-aggd --print-job-key JOB` writes it, is "job JOB" on the first line and the job key
// (64 hex digits) on the second; its holder speaks as job JOB and can join no other job's
// groups.
struct KeyFile {
  enum class Kind { daemon, job } kind = Kind::daemon;
  Key key{};
  std::string job;  // Kind::job: the job the key belongs to
};

// $HOME/.weft/aggd.key (the daemon's and the plugin's default); "" if HOME is unset.
std::string default_key_path();

// Reads a key file. Refuses, with *why, one that is not a regular file of this user or that
// other users may read or write (a key others can read protects nothing), and text that is
// not one of the two forms above.
bool read_key_file(const std::string& path, KeyFile* out, std::string* why);

// The daemon's key: read from path, or, if there is no such file, a fresh random key written
// there (mode 0600; for the default path its directory is made 0700). *created says which.
bool load_or_create_daemon_key(const std::string& path, Key* out, bool* created, std::string* why);

// HMAC-SHA-256(daemon_key, "weft-aggd job key v2" || 0x00 || job_id).
Key derive_job_key(const Key& daemon_key, const std::string& job_id);

// A job key file's text for job_id (the form read_key_file accepts).
std::string job_key_file_text(const Key& daemon_key, const std::string& job_id);

// The job id a HELLO names: job_id up to its first NUL (all 64 bytes if none).
std::string hello_job_id(const HelloPayload& h);

// The HELLO's MAC over the daemon's nonce, the client's nonce (h.nonce) and the group fields.
Mac hello_mac(const Key& job_key, const uint8_t (&daemon_nonce)[kNonceBytes], const HelloPayload& h);
// The WELCOME's MAC over both nonces, the HELLO's group fields and w's fields before its mac.
Mac welcome_mac(const Key& job_key, const uint8_t (&daemon_nonce)[kNonceBytes], const HelloPayload& h,
                const WelcomePayload& w);

// Constant-time comparison of two MACs.
bool mac_equal(const uint8_t* a, const uint8_t* b);

// Cryptographically random bytes; false if the generator fails.
bool random_bytes(void* out, size_t n);

}  // namespace weft::aggd
