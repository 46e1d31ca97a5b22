// The active messages between KV agents (kv_agent.h). The agent that owns a region applies
// every transfer into or out of it itself, after checking it: an importer never writes or reads
// the owner's memory directly (no UCX remote keys, no cross-memory attach into the owner).
//
//   importer HELLO (its name, host, pid, worker address and the owner's blob)
//     -> owner checks the blob's seal and its regions, opens an endpoint back, VERDICT (session)
//   WRITE post: one WRITE per block (header + the block's bytes, eager or rendezvous); the owner
//     checks each against the session's regions and copies or receives it into place, and when
//     every block of the post is accounted for sends DONE (status, refused block's reason)
//   READ post: one READ (header + the block list); the owner checks every block, then sends one
//     READ_DATA per block and DONE; the importer receives each into its own local block
//   NOTIFY (after a WRITE's DONE), BYE (importer forgets the owner)
//
// Headers are fixed-size structs in the host's byte order (little-endian machines only); every
// header and payload length is checked against what its type allows before it is read.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

namespace weft::kv::wire {

enum AmId : unsigned {
  kNotify = 0x5746,
  kHello = 0x5747,
  kVerdict = 0x5748,
  kWrite = 0x5749,
  kRead = 0x574a,
  kReadData = 0x574b,
  kDone = 0x574c,
  kBye = 0x574d,
};

inline constexpr uint32_t kMaxBlocksPerPost = 1u << 20;
inline constexpr uint32_t kMaxReasonBytes = 256;

struct Hello {  // + name, host, worker address, blob
  uint64_t token;       // names the import at the importer
  uint64_t start_time;  // the importer's process, for the owner's liveness watch
  uint32_t pid;
  uint16_t name_bytes, host_bytes;
  uint32_t address_bytes, blob_bytes;
};
static_assert(sizeof(Hello) == 32);

struct Verdict {  // + reason text when refused
  uint64_t token;
  uint64_t session;  // the owner's name for this importer; 0 when refused
  int32_t status;    // a weft_kv_status_t
  uint32_t reserved;
};
static_assert(sizeof(Verdict) == 24);

struct Transfer {  // WRITE: + the block's bytes; READ: + `count` ReadBlock records
  uint64_t session;
  uint64_t request;  // names the request at the importer
  uint32_t post;     // which post of the request
  uint32_t index;    // WRITE: the block's index in the post
  uint32_t count;    // blocks in the post
  uint32_t region;   // WRITE: the owner's region
  uint64_t offset;   // WRITE: where in it
};
static_assert(sizeof(Transfer) == 40);

struct ReadBlock {
  uint32_t region;
  uint32_t reserved;
  uint64_t offset, length;
};
static_assert(sizeof(ReadBlock) == 24);

struct ReadData {  // + the block's bytes
  uint64_t request;
  uint32_t post;
  uint32_t index;
};
static_assert(sizeof(ReadData) == 16);

struct Done {  // + reason text when refused
  uint64_t request;
  uint32_t post;
  int32_t status;   // a weft_kv_status_t
  uint32_t blocks;  // READ: blocks sent
  uint32_t reserved;
};
static_assert(sizeof(Done) == 24);

struct SessionOnly {  // NOTIFY (+ the message), BYE
  uint64_t session;
};
static_assert(sizeof(SessionOnly) == 8);

template <class T>
std::vector<unsigned char> bytes_of(const T& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  return {p, p + sizeof v};
}

// Copies a received header of exactly sizeof(T) bytes; false for any other length.
template <class T>
bool read_header(const void* header, size_t length, T* out) {
  if (length != sizeof(T) || header == nullptr) return false;
  std::memcpy(out, header, sizeof(T));
  return true;
}

}  // namespace weft::kv::wire
