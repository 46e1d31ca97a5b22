// The metadata blob of a KV agent (include/weft/kv.h): what another agent needs to reach this
// one and its registered regions. It is a capability: whoever holds it may ask the agent for
// transfers to and from the regions it lists, and the agent (the owner) checks every request
// against what it has registered. Versioned, length-prefixed, little-endian, sealed with an
// HMAC-SHA-256 under the agent's secret key, which only the agent knows: an importer checks the
// structure and a plain checksum that catches damage (decode_blob), the owner checks the seal
// and that every region is still registered as listed (blob_sealed_by plus the agent's own
// check). A blob edited by anyone else fails the seal, whatever its checksum says.
//
//   "WEFTKVMD" | u32 version | u32 total bytes | agent instance (16 random bytes)
//   | name (u16 length, bytes) | host (u16, bytes) | u32 pid | u64 process start time
//   | UCX worker address (u32 length, bytes)
//   | u32 region count | per region: u32 id, u8 kind, u8[3] zero, u64 base, u64 length,
//     CUDA IPC descriptor (u32 length 0 or 104, bytes)
//   | HMAC-SHA-256 of every byte before it (32 bytes) | u64 FNV-1a checksum of every byte before it
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/kv.h"

namespace weft::kv {

enum class RegionKind : uint8_t { host = 0, device = 1 };

struct RegionInfo {
  uint32_t id = 0;
  RegionKind kind = RegionKind::host;
  uint64_t base = 0, length = 0;
  std::vector<unsigned char> ipc;  // CUDA IPC descriptor (device regions)
};

inline constexpr size_t kInstanceBytes = 16;
inline constexpr size_t kKeyBytes = 32;
inline constexpr size_t kMacBytes = 32;
using Instance = std::array<unsigned char, kInstanceBytes>;
using SecretKey = std::array<unsigned char, kKeyBytes>;

// Who the agent is: the incarnation (random per agent, so a blob of an earlier agent is refused
// by a later one), its name, where its process runs (host name, pid and the process's start time,
// which tell a dead peer on the same host from a live one), and its UCX worker address.
struct AgentInfo {
  Instance instance{};
  std::string name, host;
  uint32_t pid = 0;
  uint64_t start_time = 0;
  std::vector<unsigned char> address;
  std::vector<RegionInfo> regions;
};

inline constexpr uint32_t kBlobVersion = WEFT_KV_BLOB_VERSION;
inline constexpr size_t kMaxNameBytes = 255;
inline constexpr size_t kMaxAddressBytes = 64 * 1024;
inline constexpr size_t kIpcDescriptorBytes = 104;
inline constexpr size_t kMaxBlobBytes = 16 * 1024 * 1024;

std::vector<unsigned char> encode_blob(const AgentInfo& info, const SecretKey& key);
// Checks the structure only (an importer cannot check the seal): returns false and says why in
// *why when the bytes are not a well-formed version-3 blob.
bool decode_blob(const void* blob, size_t length, AgentInfo* out, std::string* why);
// Whether the blob's seal was made with key (constant time). The owner's check.
bool blob_sealed_by(const void* blob, size_t length, const SecretKey& key);

// Random bytes from the operating system's generator; false if it failed.
bool random_bytes(void* out, size_t n);

}  // namespace weft::kv
