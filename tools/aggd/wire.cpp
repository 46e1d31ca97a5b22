// Frames of the aggd protocol: names, fragment arithmetic, output queue, incremental reader.
#include "tools/aggd/wire.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace weft::aggd {

const char* frame_type_name(uint16_t type) {
  switch (FrameType(type)) {
    case FrameType::hello: return "HELLO";
    case FrameType::welcome: return "WELCOME";
    case FrameType::begin: return "BEGIN";
    case FrameType::frag: return "FRAG";
    case FrameType::result: return "RESULT";
    case FrameType::error: return "ERROR";
    case FrameType::challenge: return "CHALLENGE";
  }
  return "unknown";
}

const char* coll_name(uint32_t coll) {
  switch (coll) {
    case WEFT_OFFLOAD_ALLREDUCE: return "allreduce";
    case WEFT_OFFLOAD_REDUCE_SCATTER: return "reduce_scatter";
    case WEFT_OFFLOAD_ALLGATHER: return "allgather";
    case WEFT_OFFLOAD_BARRIER: return "barrier";
  }
  return "unknown collective";
}

const char* dtype_name(uint32_t dtype) {
  static const char* const names[] = {"int32", "uint32", "int64", "uint64", "float32", "float64"};
  return dtype < WEFT_OFFLOAD_DTYPE_COUNT ? names[dtype] : "unknown type";
}

const char* op_name(uint32_t op) {
  static const char* const names[] = {"sum", "prod", "min", "max", "band", "bor", "bxor"};
  return op < WEFT_OFFLOAD_OP_COUNT ? names[op] : "unknown operation";
}

size_t element_bytes(uint32_t dtype) {
  switch (dtype) {
    case WEFT_OFFLOAD_INT32:
    case WEFT_OFFLOAD_UINT32:
    case WEFT_OFFLOAD_FLOAT32: return 4;
    case WEFT_OFFLOAD_INT64:
    case WEFT_OFFLOAD_UINT64:
    case WEFT_OFFLOAD_FLOAT64: return 8;
  }
  return 0;
}

bool is_reduction(uint32_t coll) { return coll == WEFT_OFFLOAD_ALLREDUCE || coll == WEFT_OFFLOAD_REDUCE_SCATTER; }
bool is_float(uint32_t dtype) { return dtype == WEFT_OFFLOAD_FLOAT32 || dtype == WEFT_OFFLOAD_FLOAT64; }
bool is_bitwise(uint32_t op) { return op == WEFT_OFFLOAD_BAND || op == WEFT_OFFLOAD_BOR || op == WEFT_OFFLOAD_BXOR; }
bool is_single_coll(uint32_t coll) { return std::has_single_bit(coll) && (coll & kAllCollectives) != 0; }

bool range_inside(uint64_t offset, uint64_t bytes, uint64_t total) {
  return offset <= total && bytes <= total - offset;
}

uint64_t fragment_count(uint64_t total, uint32_t fragment_bytes) {
  if (total == 0) return 1;
  return total / fragment_bytes + (total % fragment_bytes != 0);
}

Range fragment_range(uint64_t total, uint32_t fragment_bytes, uint64_t f) {
  const uint64_t start = f * fragment_bytes;
  if (start >= total) return {start, 0};
  return {start, std::min<uint64_t>(fragment_bytes, total - start)};
}

Range overlap_in_fragment(Range wanted, Range fragment) {
  const uint64_t begin = std::max(wanted.offset, fragment.offset);
  const uint64_t end = std::min(wanted.offset + wanted.bytes, fragment.offset + fragment.bytes);
  if (end <= begin) return {0, 0};
  return {begin - fragment.offset, end - begin};
}

void ByteQueue::append(const void* data, size_t n) {
  if (n == 0) return;
  // Reclaim the sent prefix once it dominates, so a long-lived queue does not creep.
  if (head_ > 0 && head_ >= data_.size() / 2) {
    data_.erase(data_.begin(), data_.begin() + ptrdiff_t(head_));
    head_ = 0;
  }
  const auto* p = static_cast<const uint8_t*>(data);
  data_.insert(data_.end(), p, p + n);
}

ssize_t ByteQueue::flush(int fd) {
  size_t sent = 0;
  while (head_ < data_.size()) {
    const ssize_t n = ::send(fd, data_.data() + head_, data_.size() - head_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return -errno;
    }
    head_ += size_t(n);
    sent += size_t(n);
  }
  if (head_ == data_.size()) {
    data_.clear();
    head_ = 0;
  }
  return ssize_t(sent);
}

void put_frame(ByteQueue& out, FrameType type, const void* fixed, uint32_t fixed_len, const void* data,
               uint32_t data_len) {
  const FrameHeader h{kMagic, kVersion, uint16_t(type), fixed_len + data_len, 0};
  out.append(&h, sizeof h);
  out.append(fixed, fixed_len);
  out.append(data, data_len);
}

void put_error(ByteQueue& out, int code, const std::string& text) {
  ErrorPayload e{};
  e.code = uint32_t(-code);
  const size_t n = std::min<size_t>(text.size(), kMaxErrorText - 1);
  std::memcpy(e.text, text.data(), n);
  put_frame(out, FrameType::error, &e, sizeof e);
}

namespace {

// Why a header is not acceptable to a reader with these limits; empty if it is.
std::string check_header(const FrameHeader& h, const DecodeLimits& limits) {
  if (h.magic != kMagic) {
    char text[64];
    snprintf(text, sizeof text, "bad magic 0x%08x (not an aggd frame)", h.magic);
    return text;
  }
  if (h.version != kVersion)
    return "protocol version " + std::to_string(h.version) + ", this end speaks version " + std::to_string(kVersion);
  if (h.reserved != 0) return "the header's reserved field is not 0";
  uint32_t fixed = 0;
  bool variable = false, for_daemon = false;
  switch (FrameType(h.type)) {
    case FrameType::hello: fixed = sizeof(HelloPayload), for_daemon = true; break;
    case FrameType::begin: fixed = sizeof(BeginPayload), for_daemon = true; break;
    case FrameType::frag: fixed = sizeof(FragPayload), variable = true, for_daemon = true; break;
    case FrameType::welcome: fixed = sizeof(WelcomePayload); break;
    case FrameType::result: fixed = sizeof(FragPayload), variable = true; break;
    case FrameType::error: fixed = sizeof(ErrorPayload); break;
    case FrameType::challenge: fixed = sizeof(ChallengePayload); break;
    default: return "unknown frame type " + std::to_string(h.type);
  }
  if (for_daemon != (limits.reader == Reader::daemon))
    return std::string("unexpected frame type ") + frame_type_name(h.type) +
           (limits.reader == Reader::daemon ? " from a client" : " from the daemon");
  if (limits.handshake && FrameType(h.type) != FrameType::hello)
    return std::string(frame_type_name(h.type)) + " before an authenticated HELLO";
  if (!variable && h.length != fixed)
    return std::string(frame_type_name(h.type)) + " of " + std::to_string(h.length) + " payload bytes, expected " +
           std::to_string(fixed);
  if (variable && (h.length < fixed || h.length - fixed > limits.fragment_bytes))
    return std::string(frame_type_name(h.type)) + " of " + std::to_string(h.length) +
           " payload bytes, outside [" + std::to_string(fixed) + ", " +
           std::to_string(uint64_t(fixed) + limits.fragment_bytes) + "]";
  return {};
}

}  // namespace

Decoded decode_frame(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  Decoded d;
  if (size < sizeof(FrameHeader)) return d;
  FrameHeader h;
  std::memcpy(&h, data, sizeof h);
  if (std::string bad = check_header(h, limits); !bad.empty()) {
    d.status = Decoded::Status::malformed;
    d.why = std::move(bad);
    return d;
  }
  const size_t whole = sizeof h + size_t(h.length);
  if (size < whole) {
    d.needed = whole;
    return d;
  }
  const uint8_t* payload = data + sizeof h;
  if (FrameType(h.type) == FrameType::frag || FrameType(h.type) == FrameType::result) {
    FragPayload fp;
    std::memcpy(&fp, payload, sizeof fp);
    if (uint64_t(fp.bytes) != uint64_t(h.length) - sizeof fp) {
      d.status = Decoded::Status::malformed;
      d.why = std::string(frame_type_name(h.type)) + " announces " + std::to_string(fp.bytes) + " bytes but carries " +
              std::to_string(h.length - sizeof fp);
      return d;
    }
  }
  d.status = Decoded::Status::frame;
  d.frame = Frame{FrameType(h.type), payload, h.length};
  d.consumed = whole;
  return d;
}

FrameReader::FrameReader(const DecodeLimits& limits, size_t initial_bytes)
    : limits_(limits), buf_(std::max(initial_bytes, sizeof(FrameHeader))) {}

void FrameReader::end_handshake(size_t bytes) {
  limits_.handshake = false;
  if (buf_.size() < bytes) buf_.resize(bytes);
}

void FrameReader::compact() {
  if (head_ == 0) return;
  std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
  tail_ -= head_;
  head_ = 0;
}

ssize_t FrameReader::fill(int fd, size_t max_bytes) {
  if (tail_ == buf_.size()) compact();
  const size_t room = std::min(buf_.size() - tail_, max_bytes);
  if (room == 0) return -EAGAIN;  // a whole frame is buffered: parse it first
  for (;;) {
    const ssize_t n = ::recv(fd, buf_.data() + tail_, room, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    tail_ += size_t(n);
    return n;
  }
}

FrameReader::Next FrameReader::next(Frame* frame, std::string* why) {
  const Decoded d = decode_frame(buf_.data() + head_, tail_ - head_, limits_);
  switch (d.status) {
    case Decoded::Status::malformed:
      *why = d.why;
      return Next::malformed;
    case Decoded::Status::need_more:
      // Room for the whole frame, now that its header has passed the checks.
      if (d.needed > buf_.size() - head_) {
        compact();
        if (d.needed > buf_.size()) buf_.resize(d.needed);
      }
      return Next::need_more;
    case Decoded::Status::frame: break;
  }
  *frame = d.frame;
  head_ += d.consumed;
  if (head_ == tail_) head_ = tail_ = 0;
  return Next::frame;
}

}  // namespace weft::aggd
