// The chunk scheduling of pipelined device staging (runtime/device_pipeline.h), without a
// GPU: "device memory" is a host vector and the copier runs memcpy. By default the copier only
// queues a started copy and runs it when the pipeline waits for it (or copies out of sequence),
// as a stream would, so reading a pinned chunk before its copy is done, or refilling one whose
// copy to the device has not run yet, shows up as wrong bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "deferred_copies.h"
#include "runtime/device_pipeline.h"

namespace weft {
namespace {

enum class Timing { deferred, immediate, random };

class TestCopier : public ChunkCopier {
 public:
  explicit TestCopier(Timing timing, uint32_t seed = 1) : timing_(timing), rng_(seed) {}

  Status start_to_host(int slot, void* host, const void* device, size_t n) override {
    ++to_host;
    return start(slot, host, device, n);
  }
  Status start_to_device(int slot, void* device, const void* host, size_t n) override {
    ++to_device;
    return start(slot, device, host, n);
  }
  Status wait(int slot) override {
    if (fail_now()) return Status::internal;
    ++waits;
    copies_.wait(slot);
    return Status::ok;
  }
  Status copy_now(void* dst, const void* src, size_t n) override {
    if (fail_now()) return Status::internal;
    ++direct;
    copies_.copy_now(dst, src, n);
    return Status::ok;
  }
  // Runs what is still queued (the end of the stream), as the test's final synchronisation.
  void drain() { copies_.run(copies_.queued()); }
  size_t queued() const { return copies_.queued(); }

  int fail_at = -1;  // the operation (0-based) that fails, or -1
  size_t to_host = 0, to_device = 0, waits = 0, direct = 0;

 private:
  bool fail_now() { return fail_at >= 0 && ops_++ == fail_at; }
  Status start(int slot, void* dst, const void* src, size_t n) {
    if (fail_now()) return Status::internal;
    copies_.start(slot, dst, src, n);
    if (timing_ == Timing::immediate) copies_.run(copies_.queued());
    if (timing_ == Timing::random) copies_.run(std::uniform_int_distribution<size_t>(0, copies_.queued())(rng_));
    return Status::ok;
  }

  Timing timing_;
  std::mt19937 rng_;
  test::DeferredCopies copies_;
  int ops_ = 0;
};

std::vector<unsigned char> pattern(size_t n, uint32_t seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (unsigned char)((i * 131u) ^ (i >> 7) ^ (seed * 29u) ^ (i >> 13));
  return v;
}

// Two "pinned" chunks, filled with junk so stale reads show.
struct Chunks {
  explicit Chunks(size_t chunk) : a(chunk, 0xa5), b(chunk, 0x5a) {}
  std::vector<unsigned char> a, b;
};

void expect_bytes(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, size_t n,
                  const std::string& what) {
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      ADD_FAILURE() << what << ": byte " << i << " of " << n << " is " << int(got[i]) << ", expected " << int(want[i]);
      return;
    }
}

constexpr size_t kChunk = 64;

// Message sizes around the chunk: zero, one, chunk - 1, chunk, chunk + 1, 3.5 chunks, odd.
std::vector<size_t> sizes() { return {0, 1, kChunk - 1, kChunk, kChunk + 1, kChunk * 7 / 2, 1001}; }
// Fragment sizes: smaller, equal and larger than the chunk, and odd.
std::vector<size_t> fragments() { return {1, 7, kChunk / 2, kChunk - 1, kChunk, kChunk + 1, 3 * kChunk + 5, 4096}; }

// ------------------------------------------------------------------ pack (sender)

std::vector<unsigned char> pack_in_sequence(TestCopier& c, const std::vector<unsigned char>& dev, size_t frag,
                                            PackPipeline* p_out = nullptr) {
  Chunks ch(kChunk);
  PackPipeline p;
  p.reset(&c, ch.a.data(), ch.b.data(), kChunk);
  p.start(dev.data(), dev.size());
  std::vector<unsigned char> wire(dev.size() + 1, 0xee);
  size_t off = 0;
  while (off < dev.size()) {
    const size_t got = p.pack(off, wire.data() + off, frag);
    EXPECT_EQ(got, std::min(frag, dev.size() - off));
    if (got == 0) break;
    off += got;
  }
  EXPECT_EQ(p.pack(dev.size(), wire.data(), frag), 0u);  // nothing past the end
  EXPECT_EQ(p.finish(), Status::ok);
  EXPECT_EQ(c.queued(), 0u) << "finish must wait for every copy";
  if (p_out) *p_out = p;
  return wire;
}

TEST(DevicePipeline, PackInSequenceEveryFragmentSize) {
  for (Timing t : {Timing::deferred, Timing::immediate, Timing::random})
    for (size_t n : sizes())
      for (size_t frag : fragments()) {
        TestCopier c(t, uint32_t(n * 7 + frag));
        const auto dev = pattern(n, uint32_t(n + frag));
        const auto wire = pack_in_sequence(c, dev, frag);
        expect_bytes(wire, dev, n, "pack n=" + std::to_string(n) + " frag=" + std::to_string(frag));
        // In sequence: every chunk copied once through a pinned chunk, nothing out of sequence.
        EXPECT_EQ(c.to_host, (n + kChunk - 1) / kChunk) << "n=" << n << " frag=" << frag;
        EXPECT_EQ(c.direct, 0u);
        EXPECT_EQ(wire[n], 0xee) << "wrote past the message";
      }
}

TEST(DevicePipeline, PackOverlapsTheNextChunk) {
  // When the first byte of chunk k is packed, the copy of chunk k+1 has been started already.
  const size_t n = kChunk * 6 + 3;
  const auto dev = pattern(n, 3);
  TestCopier c(Timing::deferred);
  Chunks ch(kChunk);
  PackPipeline p;
  p.reset(&c, ch.a.data(), ch.b.data(), kChunk);
  p.start(dev.data(), n);
  EXPECT_EQ(c.to_host, 2u);  // chunks 0 and 1 on their way before UCX asks for anything
  std::vector<unsigned char> wire(n);
  const size_t chunks = (n + kChunk - 1) / kChunk;
  for (size_t k = 0; k < chunks; ++k) {
    const size_t off = k * kChunk;
    (void)p.pack(off, wire.data() + off, 1);
    EXPECT_EQ(c.to_host, std::min(k + 2, chunks)) << "chunk " << k;
    (void)p.pack(off + 1, wire.data() + off + 1, std::min(kChunk, n - off) - 1);
  }
  EXPECT_EQ(p.finish(), Status::ok);
  expect_bytes(wire, dev, n, "overlap");
}

TEST(DevicePipeline, PackOutOfSequence) {
  for (Timing t : {Timing::deferred, Timing::random})
    for (size_t n : {kChunk + 1, kChunk * 7 / 2, size_t(1001)})
      for (size_t frag : {size_t(7), kChunk / 2, kChunk, kChunk + 1}) {
        // Fragments in a shuffled order, and some asked for twice (a repack).
        std::vector<std::pair<size_t, size_t>> frags;
        for (size_t off = 0; off < n; off += frag) frags.emplace_back(off, std::min(frag, n - off));
        std::mt19937 rng(uint32_t(n + frag));
        std::vector<std::pair<size_t, size_t>> order = frags;
        std::shuffle(order.begin(), order.end(), rng);
        order.push_back(frags.front());
        order.push_back(frags.back());
        TestCopier c(t, uint32_t(n));
        const auto dev = pattern(n, uint32_t(frag));
        Chunks ch(kChunk);
        PackPipeline p;
        p.reset(&c, ch.a.data(), ch.b.data(), kChunk);
        p.start(dev.data(), n);
        std::vector<unsigned char> wire(n, 0xee);
        for (auto [off, len] : order) {
          std::vector<unsigned char> piece(len, 0xcc);
          EXPECT_EQ(p.pack(off, piece.data(), len), len);
          for (size_t i = 0; i < len; ++i)
            ASSERT_EQ(piece[i], dev[off + i]) << "n=" << n << " frag=" << frag << " offset " << off + i;
          memcpy(wire.data() + off, piece.data(), len);
        }
        EXPECT_EQ(p.finish(), Status::ok);
        expect_bytes(wire, dev, n, "pack out of sequence");
      }
}

TEST(DevicePipeline, PackZeroBytes) {
  TestCopier c(Timing::deferred);
  Chunks ch(kChunk);
  PackPipeline p;
  p.reset(&c, ch.a.data(), ch.b.data(), kChunk);
  p.start(nullptr, 0);
  unsigned char x = 0x11;
  EXPECT_EQ(p.pack(0, &x, 100), 0u);
  EXPECT_EQ(x, 0x11);
  EXPECT_EQ(p.finish(), Status::ok);
  EXPECT_EQ(c.to_host + c.direct + c.waits, 0u);
}

TEST(DevicePipeline, PackCopyFailureIsKept) {
  const size_t n = kChunk * 5;
  const auto dev = pattern(n, 9);
  for (int fail_at = 0; fail_at < 8; ++fail_at) {
    TestCopier c(Timing::deferred);
    c.fail_at = fail_at;
    Chunks ch(kChunk);
    PackPipeline p;
    p.reset(&c, ch.a.data(), ch.b.data(), kChunk);
    p.start(dev.data(), n);
    std::vector<unsigned char> wire(n);
    size_t off = 0;
    while (off < n) off += p.pack(off, wire.data() + off, 40);  // every byte still "packed"
    EXPECT_EQ(off, n);
    EXPECT_EQ(p.error(), Status::internal) << "fail_at " << fail_at;
    EXPECT_EQ(p.finish(), Status::internal);
    EXPECT_EQ(p.finish(), Status::internal);  // idempotent
  }
}

// ------------------------------------------------------------------ unpack (receiver)

// Delivers the fragments in `order` into a "device" buffer of `capacity` bytes and returns it.
std::vector<unsigned char> unpack_fragments(TestCopier& c, const std::vector<unsigned char>& msg, size_t capacity,
                                            const std::vector<std::pair<size_t, size_t>>& order,
                                            Status* result = nullptr) {
  Chunks ch(kChunk);
  std::vector<unsigned char> dev(capacity + 1, 0x77);
  UnpackPipeline u;
  u.reset(&c, ch.a.data(), ch.b.data(), kChunk);
  u.start(dev.data(), capacity);
  for (auto [off, len] : order) {
    // UCX's buffer is reused for the next fragment: scribble over it after each call.
    std::vector<unsigned char> frag(msg.begin() + ptrdiff_t(off), msg.begin() + ptrdiff_t(off + len));
    u.unpack(off, frag.data(), len);
    std::fill(frag.begin(), frag.end(), 0xdd);
  }
  const Status s = u.finish();
  if (result) {
    *result = s;
  } else {
    EXPECT_EQ(s, Status::ok);
  }
  EXPECT_EQ(c.queued(), 0u) << "finish must wait for every copy";
  EXPECT_EQ(u.finish(), s);  // idempotent
  return dev;
}

std::vector<std::pair<size_t, size_t>> split(size_t n, size_t frag) {
  std::vector<std::pair<size_t, size_t>> v;
  for (size_t off = 0; off < n; off += frag) v.emplace_back(off, std::min(frag, n - off));
  return v;
}

TEST(DevicePipeline, UnpackInSequenceEveryFragmentSize) {
  for (Timing t : {Timing::deferred, Timing::immediate, Timing::random})
    for (size_t n : sizes())
      for (size_t frag : fragments()) {
        TestCopier c(t, uint32_t(n * 3 + frag));
        const auto msg = pattern(n, uint32_t(n * 5 + frag));
        const auto dev = unpack_fragments(c, msg, n, split(n, frag));
        expect_bytes(dev, msg, n, "unpack n=" + std::to_string(n) + " frag=" + std::to_string(frag));
        EXPECT_EQ(dev[n], 0x77) << "wrote past the buffer";
        EXPECT_EQ(c.to_device, (n + kChunk - 1) / kChunk) << "n=" << n << " frag=" << frag;
        EXPECT_EQ(c.direct, 0u);
      }
}

TEST(DevicePipeline, UnpackStartsEachFullChunkAtOnce) {
  const size_t n = kChunk * 4 + 9;
  const auto msg = pattern(n, 4);
  TestCopier c(Timing::deferred);
  Chunks ch(kChunk);
  std::vector<unsigned char> dev(n);
  UnpackPipeline u;
  u.reset(&c, ch.a.data(), ch.b.data(), kChunk);
  u.start(dev.data(), n);
  for (size_t off = 0; off < n; off += 16) {
    const size_t len = std::min<size_t>(16, n - off);
    u.unpack(off, msg.data() + off, len);
    EXPECT_EQ(c.to_device, (off + len) / kChunk + ((off + len) == n && n % kChunk ? 1 : 0)) << "after " << off + len;
  }
  EXPECT_EQ(u.finish(), Status::ok);
  expect_bytes(dev, msg, n, "full chunks");
}

TEST(DevicePipeline, UnpackOutOfSequence) {
  for (Timing t : {Timing::deferred, Timing::random})
    for (size_t n : {kChunk + 1, kChunk * 7 / 2, size_t(1001)})
      for (size_t frag : {size_t(7), kChunk / 2, kChunk, kChunk + 1}) {
        const auto msg = pattern(n, uint32_t(n ^ frag));
        auto in_order = split(n, frag);
        std::vector<std::vector<std::pair<size_t, size_t>>> orders;
        orders.push_back(std::vector(in_order.rbegin(), in_order.rend()));  // reversed
        auto swapped = in_order;  // neighbours swapped
        for (size_t i = 0; i + 1 < swapped.size(); i += 2) std::swap(swapped[i], swapped[i + 1]);
        orders.push_back(swapped);
        auto shuffled = in_order;
        std::mt19937 rng(uint32_t(n + frag));
        std::shuffle(shuffled.begin(), shuffled.end(), rng);
        orders.push_back(shuffled);
        auto late_first = in_order;  // the first fragment last, the rest in sequence
        std::rotate(late_first.begin(), late_first.begin() + 1, late_first.end());
        orders.push_back(late_first);
        for (size_t o = 0; o < orders.size(); ++o) {
          TestCopier c(t, uint32_t(o + n));
          const auto dev = unpack_fragments(c, msg, n, orders[o]);
          expect_bytes(dev, msg, n, "unpack order " + std::to_string(o) + " n=" + std::to_string(n) +
                                        " frag=" + std::to_string(frag));
          if (frag < n && o != 2) {
            EXPECT_GT(c.direct, 0u) << "order " << o;
          }
          // Neighbours swapped: only the early one of each pair goes straight to the device;
          // the run skips over it when it gets there and everything else is gathered.
          if (o == 1) {
            EXPECT_EQ(c.direct, in_order.size() / 2) << "n=" << n << " frag=" << frag;
          }
        }
      }
}

TEST(DevicePipeline, UnpackShorterMessageThanBuffer) {
  // A message shorter than the receive buffer: the rest of the buffer is left alone.
  const size_t n = kChunk * 2 + 5, capacity = kChunk * 5;
  const auto msg = pattern(n, 12);
  TestCopier c(Timing::deferred);
  const auto dev = unpack_fragments(c, msg, capacity, split(n, 10));
  expect_bytes(dev, msg, n, "short message");
  for (size_t i = n; i <= capacity; ++i) ASSERT_EQ(dev[i], 0x77) << "byte " << i << " beyond the message";
}

TEST(DevicePipeline, UnpackZeroBytes) {
  TestCopier c(Timing::deferred);
  std::vector<unsigned char> msg;
  const auto dev = unpack_fragments(c, msg, 0, {{0, 0}});
  EXPECT_EQ(dev[0], 0x77);
  EXPECT_EQ(c.to_device + c.direct + c.waits, 0u);
  TestCopier c2(Timing::deferred);
  const auto dev2 = unpack_fragments(c2, msg, kChunk, {});  // nothing arrives into a real buffer
  EXPECT_EQ(dev2[0], 0x77);
}

TEST(DevicePipeline, UnpackBeyondTheBufferIsAnError) {
  const auto msg = pattern(kChunk * 2, 5);
  TestCopier c(Timing::deferred);
  Status s = Status::ok;
  (void)unpack_fragments(c, msg, kChunk + 3, split(kChunk * 2, 16), &s);
  EXPECT_EQ(s, Status::truncated);
}

TEST(DevicePipeline, UnpackCopyFailureIsKept) {
  const size_t n = kChunk * 5 + 1;
  const auto msg = pattern(n, 6);
  for (int fail_at = 0; fail_at < 10; ++fail_at) {
    TestCopier c(Timing::deferred);
    c.fail_at = fail_at;
    Status s = Status::ok;
    auto order = split(n, 24);
    std::swap(order[3], order[4]);  // one out-of-sequence fragment too
    (void)unpack_fragments(c, msg, n, order, &s);
    EXPECT_EQ(s, Status::internal) << "fail_at " << fail_at;
    c.drain();
  }
}

TEST(DevicePipeline, ReusedAcrossMessages) {
  // One staging set serves message after message (the pool reuses them).
  TestCopier c(Timing::random, 42);
  Chunks ch(kChunk);
  PackPipeline p;
  UnpackPipeline u;
  for (size_t m = 0; m < 20; ++m) {
    const size_t n = (m * 37) % (kChunk * 5);
    const auto data = pattern(n, uint32_t(m));
    p.reset(&c, ch.a.data(), ch.b.data(), kChunk);
    p.start(data.data(), n);
    std::vector<unsigned char> wire(n);
    for (size_t off = 0; off < n;) off += p.pack(off, wire.data() + off, 1 + m);
    ASSERT_EQ(p.finish(), Status::ok);
    std::vector<unsigned char> dev(n + 1, 0);
    u.reset(&c, ch.a.data(), ch.b.data(), kChunk);
    u.start(dev.data(), n);
    for (size_t off = 0; off < n; off += 3 + m) u.unpack(off, wire.data() + off, std::min(3 + m, n - off));
    ASSERT_EQ(u.finish(), Status::ok);
    expect_bytes(dev, data, n, "message " + std::to_string(m));
  }
}

}  // namespace
}  // namespace weft
