// The aggd protocol (protocol.h) as both ends handle it: the names of its codes, the fragment
// arithmetic both ends must agree on, building frames into an output queue, and reading frames
// incrementally from a non-blocking socket.
#pragma once
#include <sys/types.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tools/aggd/protocol.h"
#include "weft/offload.h"

namespace weft::aggd {

// Frames travel as the structs' bytes; a big-endian port would need byte swapping.
static_assert(std::endian::native == std::endian::little, "the aggd wire format is little-endian");

inline constexpr uint32_t kMaxLeaders = 65536;
inline constexpr uint32_t kAllCollectives =
    WEFT_OFFLOAD_ALLREDUCE | WEFT_OFFLOAD_REDUCE_SCATTER | WEFT_OFFLOAD_ALLGATHER | WEFT_OFFLOAD_BARRIER;
inline constexpr uint32_t kAllDtypes = (1u << WEFT_OFFLOAD_DTYPE_COUNT) - 1;
inline constexpr uint32_t kAllOps = (1u << WEFT_OFFLOAD_OP_COUNT) - 1;

const char* frame_type_name(uint16_t type);  // "unknown" for codes outside FrameType
const char* coll_name(uint32_t coll);
const char* dtype_name(uint32_t dtype);
const char* op_name(uint32_t op);
size_t element_bytes(uint32_t dtype);  // 0: not a dtype
bool is_reduction(uint32_t coll);
bool is_float(uint32_t dtype);
bool is_bitwise(uint32_t op);
bool is_single_coll(uint32_t coll);  // exactly one known collective bit

// A byte range of an operation's result.
struct Range {
  uint64_t offset = 0, bytes = 0;
};
// Whether [offset, offset + bytes) lies inside [0, total), without overflow.
bool range_inside(uint64_t offset, uint64_t bytes, uint64_t total);
// max(1, ceil(total / fragment_bytes)): an empty result still has one fragment.
uint64_t fragment_count(uint64_t total, uint32_t fragment_bytes);
// Fragment f's bytes of the result (the last may be shorter, the only one of 0 bytes may be empty).
Range fragment_range(uint64_t total, uint32_t fragment_bytes, uint64_t f);
// The part of `wanted` inside `fragment`, its offset relative to the fragment's start; an empty
// overlap is {0, 0}. FRAG (allgather contributions) and RESULT (want ranges) carry exactly this.
Range overlap_in_fragment(Range wanted, Range fragment);

// Bytes waiting to be sent on a non-blocking socket.
class ByteQueue {
 public:
  void append(const void* data, size_t n);
  size_t size() const { return data_.size() - head_; }
  bool empty() const { return size() == 0; }
  // Sends what the socket takes now: the bytes sent, or -errno (EAGAIN counts as 0 bytes).
  ssize_t flush(int fd);

 private:
  std::vector<uint8_t> data_;
  size_t head_ = 0;
};

// Appends one frame: the header, `fixed` (a payload struct) and `data` (FRAG/RESULT bytes).
void put_frame(ByteQueue& out, FrameType type, const void* fixed, uint32_t fixed_len, const void* data = nullptr,
               uint32_t data_len = 0);
// An ERROR frame; code is a negative weft_offload_status_t, text cut to kMaxErrorText - 1.
void put_error(ByteQueue& out, int code, const std::string& text);

// Which end reads: each accepts only the frame types sent to it.
enum class Reader { daemon, client };

struct Frame {
  FrameType type;
  const uint8_t* payload;  // points into the bytes decoded (FrameReader: valid until its next call)
  uint32_t length;
};

// What a decoder accepts.
struct DecodeLimits {
  Reader reader = Reader::daemon;
  uint32_t fragment_bytes = 0;  // the most data bytes a FRAG or RESULT may carry
  bool handshake = false;       // daemon before authentication: only a HELLO is accepted
};

struct Decoded {
  enum class Status { frame, need_more, malformed } status = Status::need_more;
  Frame frame{};        // frame: points into the input
  size_t consumed = 0;  // frame: its bytes, header included
  size_t needed = 0;    // need_more: the whole frame's bytes once its header has passed (else 0)
  std::string why;      // malformed: what is wrong
};

// Decodes the frame at the start of [data, data + size): a pure function of those bytes and
// the limits (no I/O, no state), so a fuzzer can call it directly. Every header field is
// checked (magic, version, reserved, type for this reader, length against the type's fixed
// size or, for FRAG/RESULT, against fragment_bytes) before a payload is awaited, and a
// FRAG/RESULT's bytes field must match its length.
Decoded decode_frame(const uint8_t* data, size_t size, const DecodeLimits& limits);

// Frames from a byte stream, parsed as they complete; a partial frame stays buffered. The
// buffer starts at `initial_bytes` and grows only to hold a frame whose header decode_frame
// has accepted, so a peer cannot make it buffer more than the largest frame the limits allow.
class FrameReader {
 public:
  FrameReader(const DecodeLimits& limits, size_t initial_bytes);
  // The client learns the fragment size from WELCOME.
  void set_fragment_bytes(uint32_t fragment_bytes) { limits_.fragment_bytes = fragment_bytes; }
  // The daemon lifts the handshake limit once a HELLO is authenticated, and grows the buffer
  // to `bytes` so many small frames fit one recv.
  void end_handshake(size_t bytes);
  bool in_handshake() const { return limits_.handshake; }
  // One recv of at most max_bytes: bytes read, 0 at end of stream, -errno on error (-EAGAIN:
  // nothing to read now).
  ssize_t fill(int fd, size_t max_bytes);
  enum class Next { frame, need_more, malformed };
  // The next complete frame, or need_more, or malformed with *why naming the problem.
  Next next(Frame* frame, std::string* why);
  size_t buffered() const { return tail_ - head_; }
  // Drops everything buffered (a connection being closed reads only to see the end of stream).
  void discard() { head_ = tail_ = 0; }

 private:
  void compact();  // moves the unparsed bytes to the front

  DecodeLimits limits_;
  std::vector<uint8_t> buf_;
  size_t head_ = 0, tail_ = 0;
};

// A payload struct read from a frame whose length the reader has checked (copied: payloads
// are not aligned in the buffer).
template <class T>
T payload_as(const Frame& f) {
  T v;
  std::memcpy(&v, f.payload, sizeof v);
  return v;
}

}  // namespace weft::aggd
