// The plugin's connection to weft-aggd: the authenticated setup, argument checks, BEGIN/FRAG
// out, RESULT/ERROR in.
#include "tools/aggd/client.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace weft::aggd {

namespace {

constexpr size_t kReadBudget = 8 << 20;  // per test() call: test must return promptly
constexpr size_t kReaderBuffer = 64 * 1024;  // many RESULTs per recv; grows for a larger frame
constexpr int kRounds = 8;               // send/receive rounds per test() while bytes move

bool overlaps(const void* a, uint64_t a_len, const void* b, uint64_t b_len) {
  if (!a_len || !b_len) return false;
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + b_len && y < x + a_len;
}

}  // namespace

struct AggdComm::Operation {
  BeginPayload begin{};
  const uint8_t* send = nullptr;  // the bytes FRAGs carry: the caller's, or send_copy
  std::vector<uint8_t> send_copy;
  uint8_t* recv = nullptr;        // receives the want range
  Range contrib, want;
  uint64_t fragments = 0, sent = 0, results = 0;
  Clock::time_point last_progress;
};

void PluginContext::report(int level, const std::string& message) const {
  if (log) {
    log(level, message.c_str());
  } else if (level <= WEFT_OFFLOAD_LOG_WARN) {
    fprintf(stderr, "weft offload aggd: %s\n", message.c_str());
  }
}

AggdComm::AggdComm(PluginContext& ctx, int fd, std::string label)
    : ctx_(ctx), fd_(fd), label_(std::move(label)), reader_(DecodeLimits{Reader::client, 0, false}, kReaderBuffer) {}

AggdComm::~AggdComm() {
  if (fd_ >= 0) ::close(fd_);
}

int AggdComm::setup(PluginContext& ctx, const weft_offload_comm_info& info, std::unique_ptr<AggdComm>* out) {
  char label[96];
  snprintf(label, sizeof label, "comm 0x%llx leader %d/%d", (unsigned long long)info.comm_key, info.leader_index,
           info.leader_count);
  auto refuse = [&](int status, const std::string& why) {
    ctx.last_error = std::string(label) + ": " + why;
    ctx.report(WEFT_OFFLOAD_LOG_WARN, ctx.last_error);
    return status;
  };
  if (info.leader_count < 1 || uint32_t(info.leader_count) > kMaxLeaders || info.leader_index < 0 ||
      info.leader_index >= info.leader_count)
    return refuse(WEFT_OFFLOAD_ERR_ARG, "leader index and count out of range");
  std::string why;
  const int fd = connect_to(ctx.address, ctx.timeout_ms, &why);
  if (fd < 0) return refuse(WEFT_OFFLOAD_ERR_NETWORK, "the aggregation daemon is unreachable: " + why);
  std::unique_ptr<AggdComm> comm(new AggdComm(ctx, fd, label));
  HelloPayload& h = comm->hello_;  // sent once the daemon's CHALLENGE has come
  std::memcpy(h.job_id, ctx.job_id.data(), std::min<size_t>(ctx.job_id.size(), kMaxJobId - 1));
  h.comm_key = info.comm_key;
  h.leader_index = uint32_t(info.leader_index);
  h.leader_count = uint32_t(info.leader_count);
  if (!random_bytes(h.nonce, sizeof h.nonce))
    return refuse(WEFT_OFFLOAD_ERR_INTERNAL, "cannot draw a random nonce (libcrypto's generator failed)");
  if (const int rc = comm->wait_for_welcome(); rc != WEFT_OFFLOAD_OK) {
    ctx.last_error = comm->last_error_;  // fail() reported it
    return rc;
  }
  ctx.report(WEFT_OFFLOAD_LOG_INFO, std::string(label) + ": connected to " + ctx.address_text + " (fragments of " +
                                        std::to_string(comm->welcome_.fragment_bytes) + " bytes, window " +
                                        std::to_string(comm->welcome_.window) + ")");
  *out = std::move(comm);
  return WEFT_OFFLOAD_OK;
}

int AggdComm::wait_for_welcome() {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ctx_.timeout_ms);
  bool welcomed = false;
  while (!welcomed) {
    size_t bytes = 0;
    if (const int rc = read_available(&bytes, &welcomed); rc != WEFT_OFFLOAD_OK) return rc;
    if (welcomed) break;
    if (const ssize_t n = out_.flush(fd_); n < 0) return fail_errno(int(-n), "sending HELLO");
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      return fail(WEFT_OFFLOAD_ERR_TIMEOUT,
                  challenged_ ? "no WELCOME from the aggregation daemon within " + std::to_string(ctx_.timeout_ms) +
                                    " ms (have all leaders of the communicator joined?)"
                              : "no CHALLENGE from " + ctx_.address_text + " within " +
                                    std::to_string(ctx_.timeout_ms) + " ms (is it weft-aggd, protocol version " +
                                    std::to_string(kVersion) + "?)");
    pollfd p{fd_, short(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
    if (::poll(&p, 1, int(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR)
      return fail_errno(errno, "waiting for WELCOME");
  }
  return WEFT_OFFLOAD_OK;
}

int AggdComm::fail(int status, const std::string& message) {
  broken_ = status;
  last_error_ = label_ + ": " + message;
  ctx_.report(WEFT_OFFLOAD_LOG_WARN, last_error_);
  op_.reset();
  if (fd_ >= 0) ::close(fd_);  // the daemon then ends the group for every leader
  fd_ = -1;
  return status;
}

int AggdComm::fail_errno(int err, const char* doing) {
  if (err == EPIPE || err == ECONNRESET || err == ENOTCONN) {
    // The daemon may have said why before it closed: an ERROR frame waiting to be read.
    size_t bytes = 0;
    bool welcomed = false;
    if (const int rc = read_available(&bytes, &welcomed); rc != WEFT_OFFLOAD_OK) return rc;
    return fail(WEFT_OFFLOAD_ERR_NETWORK, std::string("the aggregation daemon closed the connection (") + doing +
                                              ": " + strerror(err) + ")");
  }
  return fail(WEFT_OFFLOAD_ERR_NETWORK, std::string(doing) + ": " + strerror(err));
}

int AggdComm::error_frame(const Frame& f) {
  const auto e = payload_as<ErrorPayload>(f);
  const std::string text(e.text, strnlen(e.text, sizeof e.text));
  int status = -int(e.code);
  if (e.code < 1 || e.code > uint32_t(-WEFT_OFFLOAD_ERR_INTERNAL)) status = WEFT_OFFLOAD_ERR_PROTOCOL;
  return fail(status, "the aggregation daemon reports: " + (text.empty() ? std::string("(no text)") : text));
}

int AggdComm::on_challenge(const Frame& f) {
  if (challenged_) return fail(WEFT_OFFLOAD_ERR_PROTOCOL, "a second CHALLENGE from the aggregation daemon");
  challenged_ = true;
  const auto ch = payload_as<ChallengePayload>(f);
  std::memcpy(daemon_nonce_, ch.nonce, sizeof daemon_nonce_);
  const Mac mac = hello_mac(ctx_.job_key, daemon_nonce_, hello_);
  std::memcpy(hello_.mac, mac.data(), sizeof hello_.mac);
  put_frame(out_, FrameType::hello, &hello_, sizeof hello_);
  return WEFT_OFFLOAD_OK;
}

int AggdComm::on_welcome(const Frame& f, bool* welcomed) {
  if (!challenged_) return fail(WEFT_OFFLOAD_ERR_PROTOCOL, "a WELCOME before any CHALLENGE from the aggregation daemon");
  if (welcome_.fragment_bytes) return fail(WEFT_OFFLOAD_ERR_PROTOCOL, "a second WELCOME from the aggregation daemon");
  const auto w = payload_as<WelcomePayload>(f);
  const Mac expected = welcome_mac(ctx_.job_key, daemon_nonce_, hello_, w);
  if (!mac_equal(expected.data(), w.mac))
    return fail(WEFT_OFFLOAD_ERR_PROTOCOL,
                "the WELCOME from " + ctx_.address_text +
                    " does not prove that it holds the key (is it weft-aggd with the key file of WEFT_AGGD_KEY_FILE?)");
  if (w.fragment_bytes < 8 || w.fragment_bytes % 8 || w.fragment_bytes > kMaxFragmentBytes || w.window == 0)
    return fail(WEFT_OFFLOAD_ERR_PROTOCOL, "a WELCOME with fragments of " + std::to_string(w.fragment_bytes) +
                                               " bytes and window " + std::to_string(w.window));
  welcome_ = w;
  welcome_.collectives &= kAllCollectives;
  welcome_.dtypes &= kAllDtypes;
  welcome_.ops &= kAllOps;
  reader_.set_fragment_bytes(w.fragment_bytes);
  *welcomed = true;
  return WEFT_OFFLOAD_OK;
}

int AggdComm::handle(const Frame& f, bool* welcomed) {
  if (f.type == FrameType::error) return error_frame(f);
  if (f.type == FrameType::challenge) return on_challenge(f);
  if (f.type == FrameType::welcome) return on_welcome(f, welcomed);
  // A RESULT: of the operation in flight, the next fragment, exactly its part of the want range.
  const auto r = payload_as<FragPayload>(f);
  Operation* op = op_.get();
  if (!op || r.seq != op->begin.seq || r.fragment != op->results || op->results >= op->sent)
    return fail(WEFT_OFFLOAD_ERR_PROTOCOL,
                "an unexpected RESULT (seq " + std::to_string(r.seq) + ", fragment " + std::to_string(r.fragment) + ")");
  const Range frag = fragment_range(op->begin.total_bytes, welcome_.fragment_bytes, r.fragment);
  const Range part = overlap_in_fragment(op->want, frag);
  if (r.offset != part.offset || r.bytes != part.bytes)
    return fail(WEFT_OFFLOAD_ERR_PROTOCOL, "a RESULT for fragment " + std::to_string(r.fragment) + " with " +
                                               std::to_string(r.bytes) + " bytes at " + std::to_string(r.offset) +
                                               ", expected " + std::to_string(part.bytes) + " at " +
                                               std::to_string(part.offset));
  if (part.bytes)
    std::memcpy(op->recv + (frag.offset + part.offset - op->want.offset), f.payload + sizeof(FragPayload), part.bytes);
  ++op->results;
  return WEFT_OFFLOAD_OK;
}

int AggdComm::read_available(size_t* bytes, bool* welcomed) {
  while (*bytes < kReadBudget) {
    const ssize_t n = reader_.fill(fd_, kReadBudget - *bytes);
    if (n == -EAGAIN) return WEFT_OFFLOAD_OK;
    if (n == 0 || n == -ECONNRESET)
      return fail(WEFT_OFFLOAD_ERR_NETWORK, "the aggregation daemon closed the connection");
    if (n < 0) return fail(WEFT_OFFLOAD_ERR_NETWORK, std::string("reading from the aggregation daemon: ") + strerror(int(-n)));
    *bytes += size_t(n);
    Frame f;
    std::string why;
    for (;;) {
      const auto next = reader_.next(&f, &why);
      if (next == FrameReader::Next::need_more) break;
      if (next == FrameReader::Next::malformed)
        return fail(WEFT_OFFLOAD_ERR_PROTOCOL, "a malformed frame from the aggregation daemon: " + why);
      if (const int rc = handle(f, welcomed); rc != WEFT_OFFLOAD_OK) return rc;
    }
  }
  return WEFT_OFFLOAD_OK;
}

int AggdComm::query(weft_offload_caps* caps) const {
  if (!caps) return WEFT_OFFLOAD_ERR_ARG;
  if (caps->struct_size != 0 && caps->struct_size < sizeof(weft_offload_caps)) return WEFT_OFFLOAD_ERR_ARG;
  caps->struct_size = sizeof(weft_offload_caps);
  caps->collectives = welcome_.collectives;
  caps->dtypes = welcome_.dtypes;
  caps->ops = welcome_.ops;
  caps->max_bytes = welcome_.max_bytes;
  caps->fragment_bytes = welcome_.fragment_bytes;
  return WEFT_OFFLOAD_OK;
}

int AggdComm::post(const weft_offload_op_args& a, void** handle) {
  if (broken_ != WEFT_OFFLOAD_OK) return broken_;
  auto refuse = [&](int status, const std::string& why) {
    last_error_ = label_ + ": " + why;
    ctx_.report(WEFT_OFFLOAD_LOG_WARN, last_error_);
    return status;
  };
  if (a.struct_size < sizeof(weft_offload_op_args))
    return refuse(WEFT_OFFLOAD_ERR_ARG, "operation arguments of " + std::to_string(a.struct_size) + " bytes, expected " +
                                            std::to_string(sizeof(weft_offload_op_args)));
  if (op_) return refuse(WEFT_OFFLOAD_ERR_ARG, "an operation is already in flight on this communicator");
  if (!is_single_coll(a.coll) || !(welcome_.collectives & a.coll))
    return refuse(WEFT_OFFLOAD_ERR_UNSUPPORTED, "collective code " + std::to_string(a.coll) + " is not offered");

  auto op = std::make_unique<Operation>();
  BeginPayload& b = op->begin;
  b.seq = next_seq_;
  b.coll = a.coll;
  uint64_t send_len = 0, recv_len = 0;
  if (is_reduction(a.coll)) {
    if (a.dtype >= WEFT_OFFLOAD_DTYPE_COUNT || !(welcome_.dtypes & (1u << a.dtype)) || a.op >= WEFT_OFFLOAD_OP_COUNT ||
        !(welcome_.ops & (1u << a.op)) || (is_float(a.dtype) && is_bitwise(a.op)))
      return refuse(WEFT_OFFLOAD_ERR_UNSUPPORTED, std::string("reduction ") + op_name(a.op) + " on " +
                                                      dtype_name(a.dtype) + " is not offered");
    const uint64_t es = element_bytes(a.dtype);
    if (a.count > welcome_.max_bytes / es)
      return refuse(WEFT_OFFLOAD_ERR_UNSUPPORTED, std::to_string(a.count) + " elements of " + dtype_name(a.dtype) +
                                                      " exceed the daemon's limit of " +
                                                      std::to_string(welcome_.max_bytes) + " bytes");
    b.dtype = a.dtype;
    b.op = a.op;
    b.total_bytes = a.count * es;
    if (a.coll == WEFT_OFFLOAD_ALLREDUCE) {
      op->want = {0, b.total_bytes};
    } else {
      if (!range_inside(a.recv_offset, a.recv_count, a.count))
        return refuse(WEFT_OFFLOAD_ERR_ARG, "reduce_scatter range of " + std::to_string(a.recv_count) +
                                                " elements at " + std::to_string(a.recv_offset) + " outside " +
                                                std::to_string(a.count) + " elements");
      op->want = {a.recv_offset * es, a.recv_count * es};
    }
    send_len = b.total_bytes;
  } else if (a.coll == WEFT_OFFLOAD_ALLGATHER) {
    if (a.total_bytes > welcome_.max_bytes)
      return refuse(WEFT_OFFLOAD_ERR_UNSUPPORTED, "allgather of " + std::to_string(a.total_bytes) +
                                                      " bytes exceeds the daemon's limit of " +
                                                      std::to_string(welcome_.max_bytes));
    if (!range_inside(a.send_offset, a.send_bytes, a.total_bytes))
      return refuse(WEFT_OFFLOAD_ERR_ARG, "allgather contribution of " + std::to_string(a.send_bytes) + " bytes at " +
                                              std::to_string(a.send_offset) + " outside the result of " +
                                              std::to_string(a.total_bytes));
    b.total_bytes = a.total_bytes;
    op->contrib = {a.send_offset, a.send_bytes};
    op->want = {0, a.total_bytes};
    send_len = a.send_bytes;
  }
  recv_len = op->want.bytes;
  if ((send_len && !a.send) || (recv_len && !a.recv))
    return refuse(WEFT_OFFLOAD_ERR_ARG, "a NULL buffer for a non-empty operation");
  b.contrib_offset = op->contrib.offset;
  b.contrib_bytes = op->contrib.bytes;
  b.want_offset = op->want.offset;
  b.want_bytes = op->want.bytes;
  op->fragments = fragment_count(b.total_bytes, welcome_.fragment_bytes);
  if (op->fragments > (uint64_t(1) << 32))
    return refuse(WEFT_OFFLOAD_ERR_UNSUPPORTED, "more fragments than the protocol can number");
  op->send = static_cast<const uint8_t*>(a.send);
  op->recv = static_cast<uint8_t*>(a.recv);
  // RESULTs land in recv while later fragments of send are still to go: overlapping buffers
  // are safe only where each result byte replaces the send byte already sent from the same
  // place (allreduce in place, allgather in place); otherwise send is copied first.
  const bool in_place = (a.coll == WEFT_OFFLOAD_ALLREDUCE && a.send == a.recv) ||
                        (a.coll == WEFT_OFFLOAD_ALLGATHER && op->send == op->recv + a.send_offset);
  if (!in_place && overlaps(a.send, send_len, a.recv, recv_len)) {
    op->send_copy.assign(op->send, op->send + send_len);
    op->send = op->send_copy.data();
  }
  put_frame(out_, FrameType::begin, &b, sizeof b);
  op->last_progress = Clock::now();
  ++next_seq_;
  op_ = std::move(op);
  *handle = op_.get();
  return WEFT_OFFLOAD_OK;
}

void AggdComm::queue_fragments() {
  Operation& op = *op_;
  const uint64_t limit = std::min(op.fragments, op.results + welcome_.window);
  // The socket buffer is the pipeline: two fragments queued beyond it keep it full without
  // copying a whole (possibly huge) window at once.
  const size_t max_queued = 2 * size_t(welcome_.fragment_bytes) + 64 * 1024;
  for (; op.sent < limit && out_.size() < max_queued; ++op.sent) {
    const Range frag = fragment_range(op.begin.total_bytes, welcome_.fragment_bytes, op.sent);
    Range part{0, 0};
    const uint8_t* data = nullptr;
    if (is_reduction(op.begin.coll)) {
      part = {0, frag.bytes};
      data = op.send + frag.offset;
    } else if (op.begin.coll == WEFT_OFFLOAD_ALLGATHER) {
      part = overlap_in_fragment(op.contrib, frag);
      if (part.bytes) data = op.send + (frag.offset + part.offset - op.contrib.offset);
    }
    const FragPayload fp{op.begin.seq, uint32_t(op.sent), uint32_t(part.offset), uint32_t(part.bytes), 0};
    put_frame(out_, FrameType::frag, &fp, sizeof fp, data, uint32_t(part.bytes));
  }
}

int AggdComm::test(void* handle, int* done) {
  if (!done || !handle) return WEFT_OFFLOAD_ERR_ARG;
  if (handle != op_.get()) {
    if (broken_ != WEFT_OFFLOAD_OK) return broken_;  // the error already ended it
    last_error_ = label_ + ": test of an operation that is not in flight on this communicator";
    ctx_.report(WEFT_OFFLOAD_LOG_WARN, last_error_);
    return WEFT_OFFLOAD_ERR_ARG;
  }
  bool moved = false;
  for (int round = 0; round < kRounds && op_->results < op_->fragments; ++round) {
    queue_fragments();
    const ssize_t sent = out_.flush(fd_);
    if (sent < 0) return fail_errno(int(-sent), "sending to the aggregation daemon");
    size_t received = 0;
    bool welcomed = false;
    if (const int rc = read_available(&received, &welcomed); rc != WEFT_OFFLOAD_OK) return rc;
    if (sent == 0 && received == 0) break;
    moved = true;
  }
  if (op_->results == op_->fragments) {
    op_.reset();
    *done = 1;
    return WEFT_OFFLOAD_OK;
  }
  const auto now = Clock::now();
  if (moved) {
    op_->last_progress = now;
  } else if (now - op_->last_progress > std::chrono::milliseconds(ctx_.timeout_ms)) {
    return fail(WEFT_OFFLOAD_ERR_TIMEOUT,
                "no progress for " + std::to_string(ctx_.timeout_ms) + " ms on operation seq " +
                    std::to_string(op_->begin.seq) + " (" + std::to_string(op_->results) + " of " +
                    std::to_string(op_->fragments) + " fragments answered; have the other leaders posted it?)");
  }
  *done = 0;
  return WEFT_OFFLOAD_OK;
}

}  // namespace weft::aggd
