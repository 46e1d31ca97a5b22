// The metadata blob of a KV agent (include/weft/kv.h): what another agent needs to reach this
// one and its registered regions. Versioned, length-prefixed, little-endian, checksummed; the
// decoder checks every length against the bytes it was given before reading them, so a
// corrupt, truncated or hostile blob is refused with a reason and never read out of bounds.
//
//   "WEFTKVMD" | u32 version | u32 total bytes | name (u16 length, bytes) | host (u16, bytes)
//   | u32 pid | u64 process start time | UCX worker address (u32 length, bytes)
//   | u32 region count | per region: u32 id, u8 kind, u8[3] zero, u64 base, u64 length,
//     UCX remote key (u32 length, bytes), CUDA IPC descriptor (u32 length 0 or 88, bytes)
//   | u64 FNV-1a checksum of every byte before it
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::kv {

enum class RegionKind : uint8_t { host = 0, device = 1 };

struct RegionInfo {
  uint32_t id = 0;
  RegionKind kind = RegionKind::host;
  uint64_t base = 0, length = 0;
  std::vector<unsigned char> rkey;  // packed UCX remote key (host regions)
  std::vector<unsigned char> ipc;   // CUDA IPC descriptor (device regions)
};

// Who the agent is: its name, where its process runs (host name, pid and the process's start
// time, which tell a dead peer on the same host from a live one), and its UCX worker address.
struct AgentInfo {
  std::string name, host;
  uint32_t pid = 0;
  uint64_t start_time = 0;
  std::vector<unsigned char> address;
  std::vector<RegionInfo> regions;
};

inline constexpr uint32_t kBlobVersion = 1;
inline constexpr size_t kMaxNameBytes = 255;
inline constexpr size_t kMaxAddressBytes = 64 * 1024;
inline constexpr size_t kMaxKeyBytes = 64 * 1024;
inline constexpr size_t kIpcDescriptorBytes = 88;

std::vector<unsigned char> encode_blob(const AgentInfo& info);
// Returns false and says why in *why when the blob is not a valid version-1 blob.
bool decode_blob(const void* blob, size_t length, AgentInfo* out, std::string* why);

}  // namespace weft::kv
