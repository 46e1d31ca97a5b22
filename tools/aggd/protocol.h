// The wire protocol between weft-aggd (the aggregation daemon that plays an in-network
// reduction switch) and its clients (libweft-offload-aggd.so, one connection per node leader
// and communicator). Stream sockets (TCP or UNIX); every frame is a FrameHeader then `length`
// payload bytes; integers little-endian, structs packed as declared (no padding: every field
// is naturally aligned and the sizes are multiples of 8).
//
// Version 2 adds authentication. Keys (tools/aggd/auth.h):
//   daemon key K_d: 32 random bytes in the daemon's key file (created 0600 if absent);
//   job key K_j = HMAC-SHA-256(K_d, "weft-aggd job key v2" || 0x00 || job id), which the daemon
//   derives from the job id a HELLO names (job_id up to its first NUL). A client holds K_d
//   (and derives K_j) or only K_j (a job key file a launcher made with
//   `weft-aggd --print-job-key`).
// A session:
//   on accept, daemon CHALLENGE (a fresh random nonce); nothing else is sent before it
//   client HELLO: group identity, a nonce of its own, and
//     mac = HMAC-SHA-256(K_j, "weft-aggd hello v2" || 0x00 || daemon nonce || client nonce ||
//                             job_id[64] || comm_key || leader_index || leader_count)
//     (the integers as their little-endian bytes, as in the payload). The daemon's nonce makes
//     every HELLO good for one connection only: a HELLO seen on the wire cannot be replayed.
//     A wrong MAC, or any frame but a HELLO before it, gets ERROR and a close, and touches no
//     group. The first
//     authenticated HELLO of a (job id, comm_key) creates the group and fixes leader_count;
//     a HELLO for a slot already held, with another leader_count, or for a complete group is
//     refused the same way, leaving the group and its holders as they are.
//   daemon WELCOME (once every leader of the group has said HELLO), with
//     mac = HMAC-SHA-256(K_j, "weft-aggd welcome v2" || 0x00 || client nonce || daemon nonce ||
//                             the HELLO's group fields || the WELCOME's fields before mac),
//     which the client checks: the daemon proves it holds the key too.
//   per operation, in the same order at every leader (seq 0, 1, 2, ...):
//     client BEGIN, then FRAG for fragment 0, 1, ... of the result, at most `window`
//     fragments ahead of the RESULTs received;
//     daemon RESULT per fragment to every leader, once every leader has sent that fragment,
//     carrying the part of it inside the leader's want range (possibly 0 bytes: every
//     fragment gets a RESULT, which is also the client's credit to send one more)
//   a protocol violation by an authenticated leader, an inconsistency between leaders, or a
//   leader lost: daemon ERROR to every leader of the group, then it closes their connections
//   (the members of a group are one job's processes: one that breaks the sequence breaks the
//   collective for all of them).
// Limits the daemon enforces (options, defaults in tools/aggd/README.md): connections at once
// (one more gets ERROR and a close), a handshake deadline (no authenticated HELLO in time:
// ERROR and a close), an idle deadline for authenticated connections whose group has no
// operation in flight, and frame sizes checked from the header before a payload byte is
// buffered (before authentication only a HELLO fits).
// A result of total_bytes is cut into fragments of fragment_bytes (the last may be shorter;
// an operation of 0 bytes, e.g. a barrier, has exactly one fragment of 0 bytes). Reductions:
// each leader's FRAG f carries the whole fragment f of its vector. Allgather: FRAG f carries
// the part of fragment f inside the leader's contribution (possibly 0 bytes, still sent).
// The daemon keeps at most `window` fragments per group (fragment_bytes x window is its
// reduction-buffer limit); a client that runs further ahead is a protocol error.
#pragma once
#include <cstdint>

namespace weft::aggd {

inline constexpr uint32_t kMagic = 0x44474157;  // "WAGD"
inline constexpr uint16_t kVersion = 2;         // 2: CHALLENGE, authenticated HELLO and WELCOME
inline constexpr uint32_t kMaxJobId = 64;           // bytes of HelloPayload::job_id, NUL-padded
inline constexpr uint32_t kMaxErrorText = 256;
inline constexpr uint32_t kMaxFragmentBytes = 1u << 22;  // daemon option limit (4 MiB)
inline constexpr uint32_t kNonceBytes = 32;
inline constexpr uint32_t kMacBytes = 32;          // HMAC-SHA-256

enum class FrameType : uint16_t {
  hello = 1,    // client -> daemon: HelloPayload
  welcome = 2,  // daemon -> client: WelcomePayload
  begin = 3,    // client -> daemon: BeginPayload
  frag = 4,     // client -> daemon: FragPayload + bytes
  result = 5,   // daemon -> client: FragPayload + bytes
  error = 6,    // daemon -> client: ErrorPayload
  challenge = 7,  // daemon -> client, first on every connection: ChallengePayload
};

struct FrameHeader {
  uint32_t magic;    // kMagic
  uint16_t version;  // kVersion
  uint16_t type;     // FrameType
  uint32_t length;   // payload bytes after this header
  uint32_t reserved; // 0
};
static_assert(sizeof(FrameHeader) == 16);

struct ChallengePayload {
  uint8_t nonce[kNonceBytes];  // fresh random bytes per connection
};
static_assert(sizeof(ChallengePayload) == 32);

struct HelloPayload {
  char job_id[kMaxJobId];  // with comm_key, names the group; the job key is derived from it
  uint64_t comm_key;
  uint32_t leader_index;   // < leader_count, unique in the group
  uint32_t leader_count;   // the same at every leader
  uint8_t nonce[kNonceBytes];  // the client's, for the WELCOME's MAC
  uint8_t mac[kMacBytes];      // see the session above
};
static_assert(sizeof(HelloPayload) == 144);

// Collective and reduction codes are weft/offload.h's (weft_offload_coll_t bits,
// weft_offload_dtype_t, weft_offload_op_t).
struct WelcomePayload {
  uint32_t fragment_bytes;  // multiple of 8
  uint32_t window;          // fragments in flight per group
  uint32_t collectives;     // capability masks, as weft_offload_caps
  uint32_t dtypes;
  uint32_t ops;
  uint32_t reserved;
  uint64_t max_bytes;
  uint8_t mac[kMacBytes];   // see the session above
};
static_assert(sizeof(WelcomePayload) == 64);

struct BeginPayload {
  uint64_t seq;           // 0, 1, 2, ... per connection
  uint32_t coll;          // one weft_offload_coll_t bit
  uint32_t dtype;         // reductions: weft_offload_dtype_t
  uint32_t op;            // reductions: weft_offload_op_t
  uint32_t reserved;
  uint64_t total_bytes;   // bytes of the result (reductions: the whole vector); same at every leader
  uint64_t contrib_offset, contrib_bytes;  // allgather: this leader's part of the result
  uint64_t want_offset, want_bytes;        // the bytes of the result this leader receives
};
static_assert(sizeof(BeginPayload) == 64);

struct FragPayload {      // followed by `bytes` bytes
  uint64_t seq;
  uint32_t fragment;      // index of the fragment in the result
  uint32_t offset;        // where the bytes start within the fragment
  uint32_t bytes;
  uint32_t reserved;
};
static_assert(sizeof(FragPayload) == 24);

struct ErrorPayload {
  uint32_t code;          // a weft_offload_status_t, negated (positive)
  uint32_t reserved;
  char text[kMaxErrorText];  // NUL-terminated
};
static_assert(sizeof(ErrorPayload) == 264);

}  // namespace weft::aggd
