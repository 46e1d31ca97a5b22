// Fuzzes the KV blob decoder (rma/kv/kv_blob.h): hostile bytes are refused with a reason or
// decoded, never read out of bounds; a decoded blob encodes and decodes to the same fields, and
// only a blob sealed with the key passes the owner's check.
#include <cstdint>
#include <cstdlib>

#include "rma/kv/kv_blob.h"

using namespace weft::kv;

namespace {

SecretKey test_key() {
  SecretKey k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = uint8_t(i * 29 + 3);
  return k;
}

void require(bool ok) {
  if (!ok) abort();
}

// The input with its total-length field and plain checksum made right, as anyone could: the
// fuzzer cannot guess a 64-bit checksum, and the decoder's structure checks come after it.
std::vector<uint8_t> with_checksum(const uint8_t* data, size_t size) {
  std::vector<uint8_t> b(data, data + size);
  if (b.size() < 16 + 8) return b;
  for (int i = 0; i < 4; ++i) b[12 + size_t(i)] = uint8_t(b.size() >> (8 * i));
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i + 8 < b.size(); ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  for (int i = 0; i < 8; ++i) b[b.size() - 8 + size_t(i)] = uint8_t(h >> (8 * i));
  return b;
}

int one_input(const uint8_t* data, size_t size);

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)one_input(data, size);
  const std::vector<uint8_t> fixed = with_checksum(data, size);
  return one_input(fixed.data(), fixed.size());
}

namespace {

int one_input(const uint8_t* data, size_t size) {
  static const SecretKey key = test_key();
  AgentInfo info;
  std::string why;
  const bool decoded = decode_blob(data, size, &info, &why);
  require(decoded || !why.empty());
  (void)blob_sealed_by(data, size, key);
  if (!decoded) return 0;
  const std::vector<unsigned char> again = encode_blob(info, key);
  AgentInfo back;
  require(decode_blob(again.data(), again.size(), &back, &why));
  require(blob_sealed_by(again.data(), again.size(), key));
  require(back.name == info.name && back.host == info.host && back.pid == info.pid &&
          back.address == info.address && back.regions.size() == info.regions.size());
  for (size_t i = 0; i < info.regions.size(); ++i)
    require(back.regions[i].id == info.regions[i].id && back.regions[i].length == info.regions[i].length &&
            back.regions[i].base == info.regions[i].base && back.regions[i].ipc == info.regions[i].ipc);
  return 0;
}

}  // namespace
