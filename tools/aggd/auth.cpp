// Keys and MACs of the aggd protocol: key files, job key derivation, the handshake's MACs.
#include "tools/aggd/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace weft::aggd {

namespace {

constexpr size_t kMaxKeyFileBytes = 4096;
constexpr std::string_view kJobKeyLabel = "weft-aggd job key v2";
constexpr std::string_view kHelloLabel = "weft-aggd hello v2";
constexpr std::string_view kWelcomeLabel = "weft-aggd welcome v2";

// A message to MAC, built from labelled byte fields.
class Message {
 public:
  explicit Message(std::string_view label) {
    add(label.data(), label.size());
    bytes_.push_back(0);  // the label ends here, whatever follows
  }
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  template <class T>
  void add(const T& v) {
    add(&v, sizeof v);  // little-endian, as on the wire (wire.h asserts the host is)
  }
  Mac mac(const Key& key) const {
    Mac out{};
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), int(key.size()), bytes_.data(), bytes_.size(), out.data(), &len);
    return out;
  }

 private:
  std::vector<uint8_t> bytes_;
};

void add_group_fields(Message& m, const HelloPayload& h) {
  m.add(h.job_id, sizeof h.job_id);
  m.add(h.comm_key);
  m.add(h.leader_index);
  m.add(h.leader_count);
}

std::string errno_text(const std::string& what, int err) { return what + ": " + strerror(err); }

std::string to_hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

bool from_hex(std::string_view text, Key* out) {
  if (text.size() != 2 * kKeyBytes) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < kKeyBytes; ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = uint8_t(hi << 4 | lo);
  }
  return true;
}

bool valid_job_name(std::string_view job) {
  if (job.empty() || job.size() >= kMaxJobId) return false;
  for (char c : job)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

// The text of a key file, after checking who may read it.
bool read_private_file(const std::string& path, std::string* text, std::string* why) {
  why->clear();
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = errno_text("cannot open the key file " + path, errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *why = errno_text("cannot stat the key file " + path, errno);
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) *why = "the key file " + path + " is not a regular file";
  else if (st.st_uid != geteuid())
    *why = "the key file " + path + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (uid " +
           std::to_string(geteuid()) + ")";
  else if (st.st_mode & 077) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    *why = "the key file " + path + " is open to other users (mode " + mode +
           "): a key others can read protects nothing (chmod 600 it)";
  } else if (st.st_size > off_t(kMaxKeyFileBytes))
    *why = "the key file " + path + " is " + std::to_string(st.st_size) + " bytes, not a key";
  if (!why->empty()) {
    close(fd);
    return false;
  }
  char buf[kMaxKeyFileBytes + 1];
  size_t got = 0;
  while (got < sizeof buf) {
    const ssize_t n = read(fd, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = errno_text("cannot read the key file " + path, errno);
      close(fd);
      return false;
    }
    if (n == 0) break;
    got += size_t(n);
  }
  close(fd);
  text->assign(buf, got);
  return true;
}

}  // namespace

std::string default_key_path() {
  const char* home = getenv("HOME");
  if (!home || !*home) return {};
  return std::string(home) + "/.weft/aggd.key";
}

bool read_key_file(const std::string& path, KeyFile* out, std::string* why) {
  std::string text;
  why->clear();
  if (!read_private_file(path, &text, why)) return false;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  KeyFile k;
  std::string_view rest = text;
  if (rest.substr(0, 4) == "job ") {
    const size_t nl = rest.find('\n');
    std::string_view job = rest.substr(4, nl == std::string_view::npos ? std::string_view::npos : nl - 4);
    if (!job.empty() && job.back() == '\r') job.remove_suffix(1);
    if (nl == std::string_view::npos || !valid_job_name(job)) {
      *why = "the key file " + path + " starts with 'job ' but names no valid job (1-" + std::to_string(kMaxJobId - 1) +
             " printable characters without spaces, then the key on the next line)";
      return false;
    }
    k.kind = KeyFile::Kind::job;
    k.job = std::string(job);
    rest = rest.substr(nl + 1);
  }
  if (!from_hex(rest, &k.key)) {
    *why = "the key file " + path + " does not hold a key (" + std::to_string(2 * kKeyBytes) + " hex digits" +
           (k.kind == KeyFile::Kind::job ? " after the job line)" : ")");
    return false;
  }
  *out = k;
  return true;
}

bool load_or_create_daemon_key(const std::string& path, Key* out, bool* created, std::string* why) {
  *created = false;
  if (path.empty()) {
    *why = "no key file: HOME is unset, so give --key-file";
    return false;
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    if (path == default_key_path()) {
      const std::string dir = path.substr(0, path.rfind('/'));
      if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        *why = errno_text("cannot make the directory " + dir + " for the key file", errno);
        return false;
      }
    }
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      Key key;
      if (!random_bytes(key.data(), key.size())) {
        *why = "cannot draw a random key (libcrypto's generator failed)";
        close(fd);
        unlink(path.c_str());
        return false;
      }
      const std::string text = to_hex(key.data(), key.size()) + "\n";
      const bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size()) && fsync(fd) == 0;
      const int err = errno;
      close(fd);
      if (!ok) {
        unlink(path.c_str());
        *why = errno_text("cannot write the key file " + path, err);
        return false;
      }
      *out = key;
      *created = true;
      return true;
    }
    if (errno != EEXIST) {  // EEXIST: another daemon made it just now; read it
      *why = errno_text("cannot create the key file " + path, errno);
      return false;
    }
  }
  KeyFile k;
  if (!read_key_file(path, &k, why)) return false;
  if (k.kind != KeyFile::Kind::daemon) {
    *why = "the key file " + path + " holds a job key (for job '" + k.job + "'), not a daemon key";
    return false;
  }
  *out = k.key;
  return true;
}

Key derive_job_key(const Key& daemon_key, const std::string& job_id) {
  Message m(kJobKeyLabel);
  m.add(job_id.data(), job_id.size());
  return m.mac(daemon_key);
}

std::string job_key_file_text(const Key& daemon_key, const std::string& job_id) {
  const Key k = derive_job_key(daemon_key, job_id);
  return "job " + job_id + "\n" + to_hex(k.data(), k.size()) + "\n";
}

std::string hello_job_id(const HelloPayload& h) { return std::string(h.job_id, strnlen(h.job_id, sizeof h.job_id)); }

Mac hello_mac(const Key& job_key, const uint8_t (&daemon_nonce)[kNonceBytes], const HelloPayload& h) {
  Message m(kHelloLabel);
  m.add(daemon_nonce, kNonceBytes);
  m.add(h.nonce, kNonceBytes);
  add_group_fields(m, h);
  return m.mac(job_key);
}

Mac welcome_mac(const Key& job_key, const uint8_t (&daemon_nonce)[kNonceBytes], const HelloPayload& h,
                const WelcomePayload& w) {
  Message m(kWelcomeLabel);
  m.add(h.nonce, kNonceBytes);
  m.add(daemon_nonce, kNonceBytes);
  add_group_fields(m, h);
  m.add(&w, offsetof(WelcomePayload, mac));
  return m.mac(job_key);
}

bool mac_equal(const uint8_t* a, const uint8_t* b) { return CRYPTO_memcmp(a, b, kMacBytes) == 0; }

bool random_bytes(void* out, size_t n) { return RAND_bytes(static_cast<unsigned char*>(out), int(n)) == 1; }

}  // namespace weft::aggd
