// aggd.fuzz: weft-aggd against malformed input. Each case opens a raw connection, sends bad
// frames (or a valid prefix, authenticated, then a violation) and checks that the daemon
// answers with an ERROR frame and closes; thousands of random frames follow. Afterwards the daemon must still be
// alive, serve a healthy two-leader group correctly, and exit 0 on SIGTERM with a stats line
// that counts the refused connections.
// Usage: weft_aggd_fuzz <path of weft-aggd>
#include <random>

#include "aggd_test_util.h"
#include "weft/offload.h"

using namespace aggd_test;
using namespace weft::aggd;

namespace {

constexpr uint32_t kFragment = 4096;
constexpr uint32_t kWindow = 4;
constexpr uint64_t kMaxBytes = 1 << 20;

std::string g_socket;
pid_t g_daemon = -1;
Key g_job_key;  // the key of job "fuzz" (and "rand"): derived from the daemon's key file
Key g_rand_key;
int g_cases = 0;
uint64_t g_key = 1;  // a fresh comm_key per case: cases never share groups

int open_conn() {
  const int fd = connect_unix(g_socket);
  CHECK(fd >= 0, "cannot connect to the daemon at %s: %s", g_socket.c_str(), strerror(errno));
  return fd;
}

void check_alive(const char* after) {
  int status = 0;
  CHECK(waitpid(g_daemon, &status, WNOHANG) == 0, "the daemon died after %s (status 0x%x)", after, status);
}

// Reads to the end of the connection: it must close, and its last frame must be an ERROR with
// `code` (0: any code). Returns the ERROR's text.
std::string expect_error(const char* name, int fd, int code = WEFT_OFFLOAD_ERR_PROTOCOL) {
  std::vector<uint8_t> bytes;
  const End end = read_to_end(fd, &bytes, 10);
  close(fd);
  CHECK(end == End::closed, "%s: the daemon did not close the connection within 10 s", name);
  std::vector<RawFrame> frames;
  std::string why;
  CHECK(split_frames(bytes, &frames, &why), "%s: the daemon sent %s", name, why.c_str());
  CHECK(!frames.empty() && frames.back().type == uint16_t(FrameType::error), "%s: no ERROR frame before the close",
        name);
  ErrorPayload e;
  std::memcpy(&e, frames.back().payload.data(), sizeof e);
  CHECK(memchr(e.text, '\0', sizeof e.text) != nullptr, "%s: ERROR text not NUL-terminated", name);
  CHECK(code == 0 || e.code == uint32_t(-code), "%s: ERROR code %u, expected %d (%s)", name, e.code, -code, e.text);
  ++g_cases;
  return e.text;
}

// One connection, some bytes, then an ERROR and the close are expected.
void case_bytes(const char* name, const std::vector<uint8_t>& bytes, bool shut = false, int code = WEFT_OFFLOAD_ERR_PROTOCOL) {
  const int fd = open_conn();
  send_all(fd, bytes);  // the daemon may close before taking everything
  if (shut) shutdown(fd, SHUT_WR);
  expect_error(name, fd, code);
}

std::vector<uint8_t> with_header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length,
                                 const std::vector<uint8_t>& payload = {}) {
  FrameHeader h{magic, version, type, length, 0};
  std::vector<uint8_t> out(sizeof h);
  std::memcpy(out.data(), &h, sizeof h);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

std::vector<uint8_t> operator+(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

BeginPayload begin(uint64_t seq, uint32_t coll, uint32_t dtype, uint32_t op, uint64_t total) {
  BeginPayload b{};
  b.seq = seq;
  b.coll = coll;
  b.dtype = dtype;
  b.op = op;
  b.total_bytes = total;
  b.want_bytes = total;
  return b;
}

std::vector<uint8_t> frag(uint64_t seq, uint32_t fragment, uint32_t offset, uint32_t n, uint8_t fill = 1) {
  FragPayload fp{seq, fragment, offset, n, 0};
  std::vector<uint8_t> data(n, fill);
  return make_frame(FrameType::frag, &fp, sizeof fp, data.data(), n);
}

// An authenticated HELLO on a new connection (its CHALLENGE read).
int said_hello(const HelloPayload& h) {
  const int fd = open_conn();
  CHECK(send_all(fd, answer_challenge(fd, g_job_key, h)), "sending HELLO");
  return fd;
}

// A connection of a group of `count` leaders that has said HELLO (not yet read WELCOME).
int joined(uint64_t key, uint32_t index, uint32_t count) { return said_hello(hello("fuzz", key, index, count)); }

void read_welcome(int fd, const char* name) {
  RawFrame f;
  CHECK(read_frame(fd, &f), "%s: no WELCOME", name);
  CHECK(f.type == uint16_t(FrameType::welcome) && f.payload.size() == sizeof(WelcomePayload),
        "%s: WELCOME expected, got frame type %u", name, f.type);
}

int solo() {
  const int fd = joined(g_key++, 0, 1);
  read_welcome(fd, "solo group");
  return fd;
}

void framing_cases() {
  const auto good_hello = make_frame(FrameType::hello, hello("fuzz", g_key++, 0, 2));
  case_bytes("truncated header then close", {good_hello.begin(), good_hello.begin() + 10}, true);
  case_bytes("truncated payload then close", {good_hello.begin(), good_hello.begin() + 40}, true);
  case_bytes("bad magic", with_header(0x12345678, kVersion, 1, 80, std::vector<uint8_t>(80)));
  case_bytes("bad version", with_header(kMagic, 2, 1, 80, std::vector<uint8_t>(80)));
  case_bytes("version 0", with_header(kMagic, 0, 1, 80, std::vector<uint8_t>(80)));
  case_bytes("unknown type 7", with_header(kMagic, kVersion, 7, 0));
  case_bytes("unknown type 0", with_header(kMagic, kVersion, 0, 0));
  case_bytes("unknown type 0xffff", with_header(kMagic, kVersion, 0xffff, 16, std::vector<uint8_t>(16)));
  // Oversized lengths are refused from the header alone: no payload is ever sent.
  case_bytes("oversized FRAG length", with_header(kMagic, kVersion, uint16_t(FrameType::frag), 0xFFFFFFF0u));
  case_bytes("oversized HELLO length", with_header(kMagic, kVersion, uint16_t(FrameType::hello), 0xFFFFFFF0u));
  case_bytes("FRAG one byte above the fragment size",
             with_header(kMagic, kVersion, uint16_t(FrameType::frag), sizeof(FragPayload) + kFragment + 1));
  case_bytes("HELLO of 143 bytes", with_header(kMagic, kVersion, uint16_t(FrameType::hello), 143, std::vector<uint8_t>(143)));
  case_bytes("HELLO of 145 bytes", with_header(kMagic, kVersion, uint16_t(FrameType::hello), 145, std::vector<uint8_t>(145)));
  case_bytes("version 1 HELLO", with_header(kMagic, 1, uint16_t(FrameType::hello), 80, std::vector<uint8_t>(80)));
  case_bytes("BEGIN of 72 bytes", with_header(kMagic, kVersion, uint16_t(FrameType::begin), 72, std::vector<uint8_t>(72)));
  case_bytes("FRAG shorter than its header", with_header(kMagic, kVersion, uint16_t(FrameType::frag), 8, std::vector<uint8_t>(8)));
  case_bytes("CHALLENGE from a client", make_frame(FrameType::challenge, ChallengePayload{}));
  {
    FragPayload fp{0, 0, 0, 16, 0};  // announces 16 bytes, carries 8
    case_bytes("FRAG bytes field disagrees with length", make_frame(FrameType::frag, &fp, sizeof fp, "12345678", 8));
  }
  {
    auto bad = make_frame(FrameType::hello, hello("fuzz", g_key++, 0, 1));
    bad[12] = 1;  // header.reserved
    case_bytes("header reserved field set", bad);
  }
  case_bytes("WELCOME from a client", make_frame(FrameType::welcome, WelcomePayload{}));
  {
    auto r = frag(0, 0, 0, 8);
    r[6] = uint8_t(FrameType::result);  // header.type
    case_bytes("RESULT from a client", r);
  }
  case_bytes("ERROR from a client", make_frame(FrameType::error, ErrorPayload{}));
  // The same length checks once authenticated (before it, only a HELLO passes at all).
  auto member_case = [](const char* name, const std::vector<uint8_t>& bytes) {
    const int fd = said_hello(hello("fuzz", g_key++, 0, 1));
    read_welcome(fd, name);
    send_all(fd, bytes);
    expect_error(name, fd);
  };
  member_case("member: oversized FRAG length", with_header(kMagic, kVersion, uint16_t(FrameType::frag), 0xFFFFFFF0u));
  member_case("member: FRAG one byte above the fragment size",
              with_header(kMagic, kVersion, uint16_t(FrameType::frag), sizeof(FragPayload) + kFragment + 1));
  member_case("member: BEGIN of 72 bytes",
              with_header(kMagic, kVersion, uint16_t(FrameType::begin), 72, std::vector<uint8_t>(72)));
  member_case("member: FRAG shorter than its header",
              with_header(kMagic, kVersion, uint16_t(FrameType::frag), 8, std::vector<uint8_t>(8)));
  member_case("member: HELLO again", make_frame(FrameType::hello, hello("fuzz", g_key++, 0, 1)));
}

void hello_cases() {
  case_bytes("FRAG before HELLO", frag(0, 0, 0, 8));
  case_bytes("BEGIN before HELLO", make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 8)));
  case_bytes("HELLO without a MAC", make_frame(FrameType::hello, hello("fuzz", g_key++, 0, 1)));
  expect_error("HELLO index = count", said_hello(hello("fuzz", g_key++, 3, 3)));
  expect_error("HELLO index > count", said_hello(hello("fuzz", g_key++, 70000, 2)));
  expect_error("HELLO count 0", said_hello(hello("fuzz", g_key++, 0, 0)));
  expect_error("HELLO count 65537", said_hello(hello("fuzz", g_key++, 0, 65537)));
  {
    const int fd = said_hello(hello("fuzz", g_key++, 0, 2));
    send_all(fd, make_frame(FrameType::hello, hello("fuzz", g_key++, 1, 2)));
    expect_error("HELLO twice on one connection", fd, 0);
  }
  {
    const int fd = said_hello(hello("fuzz", g_key++, 0, 1));
    read_welcome(fd, "a one-leader group");
    send_all(fd, make_frame(FrameType::hello, hello("fuzz", g_key++, 0, 1)));
    expect_error("HELLO twice after WELCOME", fd);
  }
  {  // A HELLO without NUL in job_id is accepted (64 bytes, the job key derived from all of
     // them); its group then works.
    HelloPayload h = hello("", g_key++, 0, 1);
    memset(h.job_id, 'j', sizeof h.job_id);
    const int fd = open_conn();
    CHECK(send_all(fd, answer_challenge(fd, job_key(read_key(g_socket + ".key"), std::string(64, 'j')), h)),
          "sending HELLO");
    read_welcome(fd, "64-byte job id");
    close(fd);
  }
  {  // Duplicate index in one group: the newcomer is refused, the holder keeps its place.
    const uint64_t key = g_key++;
    const int a = joined(key, 0, 2);
    const int b = joined(key, 0, 2);
    expect_error("duplicate leader index", b);
    const int c = joined(key, 1, 2);
    read_welcome(a, "holder of the duplicated index");
    read_welcome(c, "second leader after a duplicate");
    close(a);
    close(c);
  }
  {  // A leader count that differs from the group's.
    const uint64_t key = g_key++;
    const int a = joined(key, 0, 2);
    const int b = joined(key, 1, 3);
    expect_error("leader count differs from the group's", b);
    close(a);
  }
  {  // A leader lost before the group is complete ends it for the others.
    const uint64_t key = g_key++;
    const int a = joined(key, 0, 3);
    const int b = joined(key, 1, 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    close(b);
    expect_error("leader lost before WELCOME", a, WEFT_OFFLOAD_ERR_NETWORK);
  }
}

void begin_cases() {
  auto solo_case = [](const char* name, const std::vector<uint8_t>& bytes, int code = WEFT_OFFLOAD_ERR_PROTOCOL) {
    const int fd = solo();
    send_all(fd, bytes);
    expect_error(name, fd, code);
  };
  solo_case("BEGIN total not a multiple of int32",
            make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_INT32, WEFT_OFFLOAD_SUM, 6)));
  solo_case("BEGIN total not a multiple of float64",
            make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_REDUCE_SCATTER, WEFT_OFFLOAD_FLOAT64, WEFT_OFFLOAD_SUM, 12)));
  solo_case("BEGIN band on float32",
            make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_FLOAT32, WEFT_OFFLOAD_BAND, 8)),
            WEFT_OFFLOAD_ERR_UNSUPPORTED);
  solo_case("BEGIN bxor on float64",
            make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_FLOAT64, WEFT_OFFLOAD_BXOR, 8)),
            WEFT_OFFLOAD_ERR_UNSUPPORTED);
  solo_case("BEGIN dtype 6", make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 6, WEFT_OFFLOAD_SUM, 8)));
  solo_case("BEGIN op 7", make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 7, 8)));
  solo_case("BEGIN coll 0", make_frame(FrameType::begin, begin(0, 0, 0, 0, 8)));
  solo_case("BEGIN two coll bits", make_frame(FrameType::begin, begin(0, 3, 0, 0, 8)));
  solo_case("BEGIN coll 16", make_frame(FrameType::begin, begin(0, 16, 0, 0, 8)));
  solo_case("BEGIN seq 1 first", make_frame(FrameType::begin, begin(1, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 8)));
  solo_case("BEGIN above max bytes",
            make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, kMaxBytes + 8)),
            WEFT_OFFLOAD_ERR_UNSUPPORTED);
  solo_case("BEGIN total near 2^64",
            make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLGATHER, 0, 0, ~uint64_t(0) - 7)),
            WEFT_OFFLOAD_ERR_UNSUPPORTED);
  solo_case("barrier with bytes", make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_BARRIER, 0, 0, 8)));
  {
    BeginPayload b = begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 64);
    b.want_offset = 32;
    b.want_bytes = 64;
    solo_case("BEGIN want range outside", make_frame(FrameType::begin, b));
    b.want_offset = ~uint64_t(0);
    b.want_bytes = 2;
    solo_case("BEGIN want range wrapping", make_frame(FrameType::begin, b));
  }
  {
    BeginPayload b = begin(0, WEFT_OFFLOAD_ALLGATHER, 0, 0, 64);
    b.contrib_offset = 60;
    b.contrib_bytes = 8;
    solo_case("allgather contribution outside", make_frame(FrameType::begin, b));
    b.contrib_offset = 0;
    b.contrib_bytes = 32;  // alone in its group: half the result has no contributor
    solo_case("allgather contribution leaves a gap", make_frame(FrameType::begin, b));
  }
  {
    const auto b0 = make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 3 * kFragment));
    const auto b1 = make_frame(FrameType::begin, begin(1, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 8));
    solo_case("BEGIN before the previous operation's fragments", b0 + b1);
    solo_case("BEGIN with the same seq twice", b0 + b0);
    solo_case("FRAG for a future fragment", b0 + frag(0, 1, 0, kFragment));
    solo_case("FRAG beyond the last fragment", b0 + frag(0, 3, 0, kFragment));
    solo_case("FRAG of another seq", b0 + frag(1, 0, 0, kFragment));
    solo_case("FRAG with an offset", b0 + frag(0, 0, 8, kFragment - 8));
    solo_case("FRAG short of its fragment", b0 + frag(0, 0, 0, kFragment - 8));
    solo_case("FRAG after the last fragment",
              b0 + frag(0, 0, 0, kFragment) + frag(0, 1, 0, kFragment) + frag(0, 2, 0, kFragment) + frag(0, 3, 0, 8));
  }
  {
    const auto b = make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 100));
    solo_case("FRAG bytes beyond the fragment", b + frag(0, 0, 0, 104));
  }
  {  // FRAG for another leader's part of an allgather.
    const uint64_t key = g_key++;
    const int a = joined(key, 0, 2), c = joined(key, 1, 2);
    read_welcome(a, "allgather leader 0");
    read_welcome(c, "allgather leader 1");
    BeginPayload b = begin(0, WEFT_OFFLOAD_ALLGATHER, 0, 0, 100);
    b.contrib_bytes = 50;
    send_all(a, make_frame(FrameType::begin, b) + frag(0, 0, 50, 50));
    expect_error("allgather FRAG outside the contribution", a);
    expect_error("the other leader of that allgather", c, 0);
  }
  {  // BEGIN in a group that is not complete.
    const uint64_t key = g_key++;
    const int a = joined(key, 0, 2);
    send_all(a, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_BARRIER, 0, 0, 0)));
    expect_error("BEGIN before WELCOME", a);
  }
}

// Two leaders of one group; both read WELCOME.
std::pair<int, int> pair_group() {
  const uint64_t key = g_key++;
  const int a = joined(key, 0, 2), b = joined(key, 1, 2);
  read_welcome(a, "pair leader 0");
  read_welcome(b, "pair leader 1");
  return {a, b};
}

void group_cases() {
  {  // A client running more than the window ahead: it and the other leader get ERRORs.
    auto [a, b] = pair_group();
    const auto b0 = make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 10 * kFragment));
    send_all(b, b0);
    std::vector<uint8_t> burst = b0;
    for (uint32_t f = 0; f <= kWindow; ++f) burst = burst + frag(0, f, 0, kFragment);
    send_all(a, burst);
    const std::string text = expect_error("exceeding the window", a);
    CHECK(text.find("window") != std::string::npos, "the window error says: %s", text.c_str());
    expect_error("the other leader of a window violation", b);
  }
  {  // Inconsistent BEGINs: both leaders hear of it.
    auto [a, b] = pair_group();
    send_all(a, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, kFragment)));
    send_all(b, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 2 * kFragment)));
    expect_error("inconsistent BEGIN (size), leader 0", a);
    expect_error("inconsistent BEGIN (size), leader 1", b);
  }
  {
    auto [a, b] = pair_group();
    send_all(a, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_INT32, 0, 64)) +
                    frag(0, 0, 0, 64));
    send_all(b, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_UINT32, 0, 64)));
    expect_error("inconsistent BEGIN (type), leader 0", a);
    expect_error("inconsistent BEGIN (type), leader 1", b);
  }
  {
    auto [a, b] = pair_group();
    send_all(a, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 0)));
    send_all(b, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_BARRIER, 0, 0, 0)));
    expect_error("inconsistent BEGIN (collective), leader 0", a);
    expect_error("inconsistent BEGIN (collective), leader 1", b);
  }
  {  // Overlapping allgather contributions.
    auto [a, b] = pair_group();
    BeginPayload x = begin(0, WEFT_OFFLOAD_ALLGATHER, 0, 0, 150);
    x.contrib_bytes = 100;
    BeginPayload y = x;
    y.contrib_offset = 50;
    send_all(a, make_frame(FrameType::begin, x));
    send_all(b, make_frame(FrameType::begin, y));
    expect_error("overlapping allgather contributions, leader 0", a);
    expect_error("overlapping allgather contributions, leader 1", b);
  }
  {  // A leader lost in the middle of an operation.
    auto [a, b] = pair_group();
    send_all(a, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, 0, 0, 2 * kFragment)) +
                    frag(0, 0, 0, kFragment));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    close(a);
    const std::string text = expect_error("leader lost mid-operation", b, WEFT_OFFLOAD_ERR_NETWORK);
    CHECK(text.find("lost") != std::string::npos, "the lost-leader error says: %s", text.c_str());
  }
  {  // A leader that left cleanly between operations: the other hears of it at its next BEGIN.
    auto [a, b] = pair_group();
    close(a);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    send_all(b, make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_BARRIER, 0, 0, 0)));
    expect_error("BEGIN after the other leader left", b, WEFT_OFFLOAD_ERR_NETWORK);
  }
}

// Random frames from a fixed seed: the daemon must close every connection within the
// timeout (after an ERROR or on our end of stream), answer only well-formed frames, and live.
void random_cases(int count) {
  std::mt19937_64 rng(20240601);
  auto pick = [&](uint64_t n) { return n ? rng() % n : 0; };
  const uint32_t fixed_sizes[] = {0, 8, 24, 32, 64, 80, 264, 24 + 8, 24 + 100, 24 + kFragment, 24 + kFragment + 1};
  auto random_header = [&](std::vector<uint8_t>* out) {
    FrameHeader h{};
    h.magic = pick(10) < 8 ? kMagic : uint32_t(rng());
    h.version = pick(10) < 8 ? kVersion : uint16_t(pick(4));
    h.type = uint16_t(pick(10) < 9 ? pick(8) : rng());
    const uint64_t l = pick(4);
    h.length = l == 0 ? fixed_sizes[pick(std::size(fixed_sizes))] : l == 1 ? uint32_t(pick(400)) : l == 2 ? uint32_t(rng()) : 80;
    h.reserved = pick(20) == 0 ? uint32_t(rng()) : 0;
    const size_t at = out->size();
    out->resize(at + sizeof h);
    std::memcpy(out->data() + at, &h, sizeof h);
    // Payload: mostly plausible structs with random small fields.
    const size_t n = std::min<size_t>(h.length, 24 + kFragment + 64);
    std::vector<uint8_t> payload(n);
    for (auto& x : payload) x = uint8_t(pick(10) < 7 ? 0 : rng());
    if (n >= sizeof(BeginPayload) && h.type == uint16_t(FrameType::begin)) {
      BeginPayload b{};
      b.seq = pick(3);
      b.coll = uint32_t(1u << pick(5));
      b.dtype = uint32_t(pick(7));
      b.op = uint32_t(pick(8));
      b.total_bytes = pick(3) == 0 ? rng() : pick(5 * kFragment);
      b.contrib_offset = pick(2 * kFragment);
      b.contrib_bytes = pick(3 * kFragment);
      b.want_offset = pick(kFragment);
      b.want_bytes = pick(3 * kFragment);
      std::memcpy(payload.data(), &b, sizeof b);
    }
    if (n >= sizeof(FragPayload) && h.type == uint16_t(FrameType::frag)) {
      FragPayload fp{pick(3), uint32_t(pick(4)), uint32_t(pick(3) ? 0 : pick(kFragment)), uint32_t(n - 24), 0};
      if (pick(4) == 0) fp.bytes = uint32_t(rng());
      std::memcpy(payload.data(), &fp, sizeof fp);
    }
    if (n >= sizeof(HelloPayload) && h.type == uint16_t(FrameType::hello)) {
      HelloPayload hp = hello("rand", 900000 + pick(8), uint32_t(pick(3)), uint32_t(pick(3)));
      std::memcpy(payload.data(), &hp, sizeof hp);
    }
    out->insert(out->end(), payload.begin(), payload.end());
  };
  // Stands for a HELLO, made and signed once the connection's CHALLENGE is known.
  const std::vector<uint8_t> kSignedHello = make_frame(FrameType::hello, hello("placeholder", 0, 0, 1));
  int closed_with_error = 0;
  for (int i = 0; i < count; ++i) {
    std::vector<uint8_t> bytes;
    switch (pick(4)) {
      case 0:  // noise
        bytes.resize(pick(200));
        for (auto& x : bytes) x = uint8_t(rng());
        break;
      case 1:
        random_header(&bytes);
        break;
      case 2: {  // a valid HELLO of a one-leader group, then random frames
        bytes = kSignedHello;
        for (uint64_t k = 1 + pick(4); k > 0; --k) random_header(&bytes);
        break;
      }
      default: {  // HELLO and a valid BEGIN, then fragments that are mostly right
        bytes = kSignedHello;
        const uint64_t total = 4 * pick(3 * kFragment / 4);
        bytes = bytes + make_frame(FrameType::begin, begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_INT32,
                                                           uint32_t(pick(7)), total));
        for (uint32_t f = 0; f < 1 + pick(4); ++f) {
          const uint64_t len = std::min<uint64_t>(kFragment, total > f * kFragment ? total - f * kFragment : 0);
          if (pick(4) == 0) random_header(&bytes);
          else bytes = bytes + frag(0, pick(5) ? f : uint32_t(pick(5)), 0, uint32_t(pick(5) ? len : pick(kFragment)), uint8_t(rng()));
        }
      }
    }
    if (pick(2) == 0 && !bytes.empty()) bytes.resize(pick(bytes.size()));
    const int fd = open_conn();
    if (bytes.size() >= kSignedHello.size() && std::equal(kSignedHello.begin(), kSignedHello.end(), bytes.begin())) {
      // The HELLO placeholder becomes one that answers this connection's CHALLENGE.
      const auto signed_hello = answer_challenge(fd, g_rand_key, hello("rand", g_key++, 0, 1));
      std::copy(signed_hello.begin(), signed_hello.end(), bytes.begin());
    }
    send_all(fd, bytes, 2);
    shutdown(fd, SHUT_WR);
    std::vector<uint8_t> reply;
    const End end = read_to_end(fd, &reply, 10);
    close(fd);
    CHECK(end == End::closed, "random case %d: the daemon did not close within 10 s", i);
    std::vector<RawFrame> frames;
    std::string why;
    CHECK(split_frames(reply, &frames, &why), "random case %d: the daemon sent %s", i, why.c_str());
    for (const RawFrame& f : frames) {
      CHECK(f.type == uint16_t(FrameType::challenge) || f.type == uint16_t(FrameType::welcome) ||
                f.type == uint16_t(FrameType::result) || f.type == uint16_t(FrameType::error),
            "random case %d: the daemon sent frame type %u", i, f.type);
      if (f.type == uint16_t(FrameType::error)) ++closed_with_error;
    }
    if (i % 250 == 0) check_alive("random frames");
  }
  check_alive("random frames");
  g_cases += count;
  printf("aggd.fuzz: %d random connections, %d answered with an ERROR\n", count, closed_with_error);
}

// A healthy two-leader group speaking the protocol directly: allreduce over three fragments
// (within the window), allgather, barrier; every RESULT checked.
void healthy_group() {
  auto [a, b] = pair_group();
  const int fds[2] = {a, b};
  const uint64_t n = (3 * kFragment - 80) / 8;  // int64 elements: the last fragment is short
  std::vector<int64_t> v[2];
  for (int l = 0; l < 2; ++l) {
    v[l].resize(n);
    for (uint64_t i = 0; i < n; ++i) v[l][i] = int64_t(i * 7919 + uint64_t(l) * 1000003) * (l ? -1 : 1);
  }
  const uint64_t total = n * 8;
  for (int l = 0; l < 2; ++l) {
    BeginPayload bp = begin(0, WEFT_OFFLOAD_ALLREDUCE, WEFT_OFFLOAD_INT64, WEFT_OFFLOAD_SUM, total);
    std::vector<uint8_t> out = make_frame(FrameType::begin, bp);
    for (uint32_t f = 0; f < 3; ++f) {
      const uint64_t off = uint64_t(f) * kFragment, len = std::min<uint64_t>(kFragment, total - off);
      FragPayload fp{0, f, 0, uint32_t(len), 0};
      out = out + make_frame(FrameType::frag, &fp, sizeof fp, reinterpret_cast<uint8_t*>(v[l].data()) + off, len);
    }
    CHECK(send_all(fds[l], out), "healthy group: sending leader %d's operation", l);
  }
  for (int l = 0; l < 2; ++l) {
    std::vector<int64_t> got(n);
    for (uint32_t f = 0; f < 3; ++f) {
      RawFrame r;
      CHECK(read_frame(fds[l], &r), "healthy group: leader %d: no RESULT %u", l, f);
      CHECK(r.type == uint16_t(FrameType::result), "healthy group: leader %d: frame type %u instead of RESULT", l, r.type);
      FragPayload fp;
      std::memcpy(&fp, r.payload.data(), sizeof fp);
      const uint64_t off = uint64_t(f) * kFragment, len = std::min<uint64_t>(kFragment, total - off);
      CHECK(fp.seq == 0 && fp.fragment == f && fp.offset == 0 && fp.bytes == len && r.payload.size() == 24 + len,
            "healthy group: leader %d: RESULT %u is seq %llu fragment %u offset %u bytes %u", l, f,
            (unsigned long long)fp.seq, fp.fragment, fp.offset, fp.bytes);
      std::memcpy(reinterpret_cast<uint8_t*>(got.data()) + off, r.payload.data() + 24, len);
    }
    for (uint64_t i = 0; i < n; ++i)
      CHECK(got[i] == v[0][i] + v[1][i], "healthy group: leader %d: element %llu is %lld", l, (unsigned long long)i,
            (long long)got[i]);
  }
  // Allgather of 10 bytes: leader 0 gives 3, leader 1 gives 7; barrier after.
  const char* parts[2] = {"abc", "defghij"};
  for (int l = 0; l < 2; ++l) {
    BeginPayload bp = begin(1, WEFT_OFFLOAD_ALLGATHER, 0, 0, 10);
    bp.contrib_offset = l ? 3 : 0;
    bp.contrib_bytes = l ? 7 : 3;
    FragPayload fp{1, 0, uint32_t(bp.contrib_offset), uint32_t(bp.contrib_bytes), 0};
    CHECK(send_all(fds[l], make_frame(FrameType::begin, bp) + make_frame(FrameType::frag, &fp, sizeof fp, parts[l],
                                                                         bp.contrib_bytes) +
                               make_frame(FrameType::begin, begin(2, WEFT_OFFLOAD_BARRIER, 0, 0, 0)) +
                               frag(2, 0, 0, 0)),
          "healthy group: sending allgather and barrier");
  }
  for (int l = 0; l < 2; ++l) {
    RawFrame r;
    CHECK(read_frame(fds[l], &r) && r.type == uint16_t(FrameType::result) && r.payload.size() == 34 &&
              memcmp(r.payload.data() + 24, "abcdefghij", 10) == 0,
          "healthy group: leader %d: allgather RESULT wrong", l);
    CHECK(read_frame(fds[l], &r) && r.type == uint16_t(FrameType::result) && r.payload.size() == 24,
          "healthy group: leader %d: barrier RESULT wrong", l);
  }
  close(a);
  close(b);
}

// A stale socket file (bound, never unlinked) where the daemon will listen.
void make_stale_socket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
  CHECK(fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0, "making a stale socket: %s",
        strerror(errno));
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <path of weft-aggd>\n", argv[0]);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  const double t0 = now_s();
  const std::string dir = make_temp_dir();
  g_socket = dir + "/aggd.sock";
  make_stale_socket(g_socket);
  std::string line;
  g_daemon = start_daemon(argv[1],
                          {"--listen", "unix:" + g_socket, "--key-file", g_socket + ".key", "--fragment-bytes",
                           std::to_string(kFragment), "--window", std::to_string(kWindow), "--max-bytes",
                           std::to_string(kMaxBytes)},
                          dir + "/daemon.log", &line);
  g_job_key = job_key(read_key(g_socket + ".key"), "fuzz");
  g_rand_key = job_key(read_key(g_socket + ".key"), "rand");
  CHECK(line.find("fragments of 4096 bytes, window 4: 16384-byte reduction buffer") != std::string::npos,
        "unexpected listening line: %s", line.c_str());

  framing_cases();
  check_alive("the framing cases");
  hello_cases();
  check_alive("the HELLO cases");
  begin_cases();
  check_alive("the BEGIN and FRAG cases");
  group_cases();
  check_alive("the group cases");
  const int targeted = g_cases;
  random_cases(3000);
  healthy_group();
  check_alive("the healthy group");

  CHECK(kill(g_daemon, SIGTERM) == 0, "SIGTERM: %s", strerror(errno));
  int status = 0;
  CHECK(wait_pid(g_daemon, 10, &status), "the daemon did not exit within 10 s of SIGTERM");
  forget_daemon(g_daemon);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the daemon ended with status 0x%x after SIGTERM", status);
  const std::string log = read_file(dir + "/daemon.log");
  unsigned long long groups = 0, ops = 0, frags = 0, refused = 0;
  const size_t at = log.rfind("weft-aggd: ");
  CHECK(at != std::string::npos &&
            sscanf(log.c_str() + at,
                   "weft-aggd: %llu groups, %llu operations, %llu fragments reduced, %llu connections refused for "
                   "protocol errors",
                   &groups, &ops, &frags, &refused) == 4,
        "no stats line at the end of the daemon's log");
  CHECK(refused >= uint64_t(targeted) / 2 && ops >= 3 && frags >= 5,
        "stats: %llu groups, %llu operations, %llu fragments, %llu refused", groups, ops, frags, refused);
  CHECK(access(g_socket.c_str(), F_OK) != 0, "the daemon left its socket file behind");
  printf("aggd.fuzz: ok: %d targeted malformed-input cases refused with an ERROR and a close, 3000 random "
         "connections closed cleanly, a healthy group served after them; daemon stats: %llu groups, %llu operations, "
         "%llu fragments, %llu connections refused (%.1f s)\n",
         targeted, groups, ops, frags, refused, now_s() - t0);
  remove_temp_dir();
  return 0;
}
