// Encoding and validating decoding of KV agent blobs (kv_blob.h).
#include "kv_blob.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>

namespace weft::kv {

namespace {

constexpr char kMagic[8] = {'W', 'E', 'F', 'T', 'K', 'V', 'M', 'D'};

uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

// HMAC-SHA-256 of [p, p + n) under key.
bool seal(const unsigned char* p, size_t n, const SecretKey& key, unsigned char out[kMacBytes]) {
  unsigned int len = 0;
  return HMAC(EVP_sha256(), key.data(), int(key.size()), p, n, out, &len) != nullptr && len == kMacBytes;
}

class Writer {
 public:
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void text(const std::string& s) {
    u16(uint16_t(s.size()));
    bytes(s.data(), s.size());
  }
  void blob(const std::vector<unsigned char>& v) {
    u32(uint32_t(v.size()));
    bytes(v.data(), v.size());
  }
  std::vector<unsigned char>& out() { return out_; }

 private:
  void le(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(uint8_t(v >> (8 * i)));
  }
  std::vector<unsigned char> out_;
};

// Reads from [p, p + n); every read checks the bytes left first and fails for good once one
// does not fit.
class Reader {
 public:
  Reader(const unsigned char* p, size_t n) : p_(p), n_(n) {}
  bool ok() const { return ok_; }
  size_t left() const { return n_ - at_; }
  bool take(void* dst, size_t n) {
    if (!ok_ || n > left()) return ok_ = false;
    if (n) std::memcpy(dst, p_ + at_, n);
    at_ += n;
    return true;
  }
  uint64_t le(int n) {
    unsigned char b[8] = {};
    if (!take(b, size_t(n))) return 0;
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }
  uint8_t u8() { return uint8_t(le(1)); }
  uint16_t u16() { return uint16_t(le(2)); }
  uint32_t u32() { return uint32_t(le(4)); }
  uint64_t u64() { return le(8); }
  bool text(std::string* s, size_t max) {
    const size_t n = u16();
    if (!ok_ || n > max || n > left()) return ok_ = false;
    s->assign(reinterpret_cast<const char*>(p_ + at_), n);
    at_ += n;
    return true;
  }
  bool blob(std::vector<unsigned char>* v, size_t max) {
    const size_t n = u32();
    if (!ok_ || n > max || n > left()) return ok_ = false;
    v->assign(p_ + at_, p_ + at_ + n);
    at_ += n;
    return true;
  }

 private:
  const unsigned char* p_;
  size_t n_, at_ = 0;
  bool ok_ = true;
};

// Fixed bytes of one region record, without its descriptor.
constexpr size_t kRegionFixedBytes = 4 + 1 + 3 + 8 + 8 + 4;
constexpr size_t kHeaderBytes = sizeof kMagic + 4 + 4;
constexpr size_t kChecksumBytes = 8;
constexpr size_t kTrailerBytes = kMacBytes + kChecksumBytes;

bool fail(std::string* why, std::string msg) {
  *why = std::move(msg);
  return false;
}

}  // namespace

std::vector<unsigned char> encode_blob(const AgentInfo& info, const SecretKey& key) {
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.u32(kBlobVersion);
  w.u32(0);  // total length, filled in below
  w.bytes(info.instance.data(), info.instance.size());
  w.text(info.name);
  w.text(info.host);
  w.u32(info.pid);
  w.u64(info.start_time);
  w.blob(info.address);
  w.u32(uint32_t(info.regions.size()));
  for (const RegionInfo& r : info.regions) {
    w.u32(r.id);
    w.u8(uint8_t(r.kind));
    w.u8(0);
    w.u8(0);
    w.u8(0);
    w.u64(r.base);
    w.u64(r.length);
    w.blob(r.ipc);
  }
  std::vector<unsigned char>& out = w.out();
  const uint32_t total = uint32_t(out.size() + kMacBytes + kChecksumBytes);
  for (int i = 0; i < 4; ++i) out[12 + size_t(i)] = uint8_t(total >> (8 * i));
  unsigned char mac[kMacBytes] = {};
  if (!seal(out.data(), out.size(), key, mac)) return {};
  w.bytes(mac, sizeof mac);
  w.u64(fnv1a(out.data(), out.size()));
  return std::move(out);
}

bool blob_sealed_by(const void* blob, size_t length, const SecretKey& key) {
  if (blob == nullptr || length < kHeaderBytes + kTrailerBytes) return false;
  const auto* p = static_cast<const unsigned char*>(blob);
  const size_t sealed = length - kTrailerBytes;
  unsigned char mac[kMacBytes];
  return seal(p, sealed, key, mac) && CRYPTO_memcmp(mac, p + sealed, kMacBytes) == 0;
}

bool random_bytes(void* out, size_t n) { return RAND_bytes(static_cast<unsigned char*>(out), int(n)) == 1; }

bool decode_blob(const void* blob, size_t length, AgentInfo* out, std::string* why) {
  if (blob == nullptr) return fail(why, "the blob is null");
  const auto* p = static_cast<const unsigned char*>(blob);
  if (length < kHeaderBytes + kTrailerBytes) return fail(why, "the blob is truncated: " + std::to_string(length) + " bytes");
  if (length > kMaxBlobBytes) return fail(why, "the blob has " + std::to_string(length) + " bytes, more than any agent exports");
  if (std::memcmp(p, kMagic, sizeof kMagic) != 0) return fail(why, "not a weft KV agent blob (bad magic)");
  Reader head(p + sizeof kMagic, 8);
  const uint32_t version = head.u32();
  const uint32_t total = head.u32();
  if (version != kBlobVersion)
    return fail(why, "blob version " + std::to_string(version) + " is not supported (this build reads version " +
                         std::to_string(kBlobVersion) + ")");
  if (total != length)
    return fail(why, "the blob says it has " + std::to_string(total) + " bytes but " + std::to_string(length) +
                         " were given (truncated or padded)");
  Reader tail(p + length - kChecksumBytes, kChecksumBytes);
  if (tail.u64() != fnv1a(p, length - kChecksumBytes)) return fail(why, "the blob's checksum does not match (corrupt)");

  Reader r(p + kHeaderBytes, length - kHeaderBytes - kTrailerBytes);
  AgentInfo info;
  if (!r.take(info.instance.data(), info.instance.size())) return fail(why, "the blob is truncated");
  if (!r.text(&info.name, kMaxNameBytes) || info.name.empty()) return fail(why, "the blob's agent name is invalid");
  if (!r.text(&info.host, kMaxNameBytes)) return fail(why, "the blob's host name is invalid");
  info.pid = r.u32();
  info.start_time = r.u64();
  if (!r.blob(&info.address, kMaxAddressBytes) || info.address.empty())
    return fail(why, "the blob's worker address is invalid");
  const uint32_t regions = r.u32();
  if (!r.ok() || regions > r.left() / kRegionFixedBytes)
    return fail(why, "the blob's region count " + std::to_string(regions) + " exceeds its bytes");
  info.regions.resize(regions);
  for (uint32_t i = 0; i < regions; ++i) {
    RegionInfo& g = info.regions[i];
    g.id = r.u32();
    const uint8_t kind = r.u8();
    const uint8_t pad[3] = {r.u8(), r.u8(), r.u8()};
    g.base = r.u64();
    g.length = r.u64();
    if (!r.blob(&g.ipc, kIpcDescriptorBytes))
      return fail(why, "region record " + std::to_string(i) + " is truncated");
    if (kind > uint8_t(RegionKind::device) || (pad[0] | pad[1] | pad[2]) != 0)
      return fail(why, "region record " + std::to_string(i) + " has an unknown kind");
    g.kind = RegionKind(kind);
    if (g.length == 0 || g.base + g.length < g.base)
      return fail(why, "region " + std::to_string(g.id) + " has an invalid extent");
    if (g.kind == RegionKind::host ? !g.ipc.empty() : g.ipc.size() != kIpcDescriptorBytes)
      return fail(why, "region " + std::to_string(g.id) + " has a descriptor that does not fit its kind");
  }
  if (!r.ok()) return fail(why, "the blob is truncated");
  if (r.left() != 0) return fail(why, "the blob has " + std::to_string(r.left()) + " trailing bytes");
  std::vector<uint32_t> ids;
  for (const RegionInfo& g : info.regions) ids.push_back(g.id);
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) return fail(why, "a region id appears twice");
  *out = std::move(info);
  return true;
}

}  // namespace weft::kv
