// KV agent blobs (rma/kv/kv_blob.h): round trip, every kind of damaged blob refused with a
// reason and never read out of bounds, and the owner's seal: a blob edited and given a correct
// checksum by anyone without the agent's key is told apart.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "rma/kv/kv_blob.h"

namespace weft::kv {
namespace {

SecretKey key_of(unsigned char fill) {
  SecretKey k;
  for (size_t i = 0; i < k.size(); ++i) k[i] = uint8_t(fill + i * 7);
  return k;
}
const SecretKey kKey = key_of(1);

AgentInfo sample() {
  AgentInfo a;
  for (size_t i = 0; i < a.instance.size(); ++i) a.instance[i] = uint8_t(0xc0 + i);
  a.name = "prefill-0";
  a.host = "node17";
  a.pid = 4242;
  a.start_time = 987654321;
  a.address.assign(120, 0);
  for (size_t i = 0; i < a.address.size(); ++i) a.address[i] = (unsigned char)(i * 7);
  for (uint32_t r = 0; r < 3; ++r) {
    RegionInfo g;
    g.id = 10 + r;
    g.base = 0x7f0000000000ull + r * 0x100000;
    g.length = 4096u << r;
    if (r == 2) {
      g.kind = RegionKind::device;
      g.ipc.assign(kIpcDescriptorBytes, (unsigned char)(0xa0 + r));
    }
    a.regions.push_back(g);
  }
  return a;
}

// Rewrites the plain checksum, as anyone can (so that a test reaches the checks after it, or
// forges a blob): the seal before it stays as it was.
void reseal(std::vector<unsigned char>* b) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i + 8 < b->size(); ++i) {
    h ^= (*b)[i];
    h *= 1099511628211ull;
  }
  for (int i = 0; i < 8; ++i) (*b)[b->size() - 8 + size_t(i)] = uint8_t(h >> (8 * i));
}

TEST(KvBlob, RoundTrip) {
  const AgentInfo a = sample();
  const std::vector<unsigned char> b = encode_blob(a, kKey);
  AgentInfo d;
  std::string why;
  ASSERT_TRUE(decode_blob(b.data(), b.size(), &d, &why)) << why;
  EXPECT_EQ(d.instance, a.instance);
  EXPECT_EQ(d.name, a.name);
  EXPECT_EQ(d.host, a.host);
  EXPECT_EQ(d.pid, a.pid);
  EXPECT_EQ(d.start_time, a.start_time);
  EXPECT_EQ(d.address, a.address);
  ASSERT_EQ(d.regions.size(), a.regions.size());
  for (size_t i = 0; i < a.regions.size(); ++i) {
    EXPECT_EQ(d.regions[i].id, a.regions[i].id);
    EXPECT_EQ(d.regions[i].kind, a.regions[i].kind);
    EXPECT_EQ(d.regions[i].base, a.regions[i].base);
    EXPECT_EQ(d.regions[i].length, a.regions[i].length);
    EXPECT_EQ(d.regions[i].ipc, a.regions[i].ipc);
  }
}

TEST(KvBlob, EveryTruncationRefused) {
  const std::vector<unsigned char> b = encode_blob(sample(), kKey);
  for (size_t n = 0; n < b.size(); ++n) {
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(b.data(), n, &d, &why)) << n;
    EXPECT_FALSE(why.empty());
  }
  std::vector<unsigned char> padded = b;
  padded.push_back(0);
  AgentInfo d;
  std::string why;
  EXPECT_FALSE(decode_blob(padded.data(), padded.size(), &d, &why));
}

TEST(KvBlob, EveryFlippedByteRefused) {
  const std::vector<unsigned char> b = encode_blob(sample(), kKey);
  for (size_t i = 0; i < b.size(); ++i) {
    std::vector<unsigned char> c = b;
    c[i] ^= 0x5a;
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(c.data(), c.size(), &d, &why)) << "byte " << i;
  }
}

TEST(KvBlob, WrongVersionNamed) {
  std::vector<unsigned char> b = encode_blob(sample(), kKey);
  b[8] = 1;  // the version's low byte: the unsealed version 1
  reseal(&b);
  AgentInfo d;
  std::string why;
  EXPECT_FALSE(decode_blob(b.data(), b.size(), &d, &why));
  EXPECT_NE(why.find("version 1"), std::string::npos) << why;
}

TEST(KvBlob, HostileLengthsRefused) {
  AgentInfo a = sample();
  const std::vector<unsigned char> good = encode_blob(a, kKey);
  // The name length field (after magic, version, total and instance) claims more bytes than exist.
  {
    std::vector<unsigned char> b = good;
    b[32] = 0xff;
    b[33] = 0xff;
    reseal(&b);
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(b.data(), b.size(), &d, &why));
  }
  // A region count far beyond the bytes present.
  {
    a.regions.clear();
    std::vector<unsigned char> b = encode_blob(a, kKey);
    const size_t count_at = b.size() - 8 - kMacBytes - 4;
    b[count_at + 3] = 0x7f;
    reseal(&b);
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(b.data(), b.size(), &d, &why));
    EXPECT_NE(why.find("region count"), std::string::npos) << why;
  }
  // Duplicate region ids, a zero-length region, an extent that wraps around.
  for (int kind = 0; kind < 3; ++kind) {
    AgentInfo c = sample();
    if (kind == 0) c.regions[1].id = c.regions[0].id;
    if (kind == 1) c.regions[0].length = 0;
    if (kind == 2) c.regions[0].base = ~0ull - 10;
    std::vector<unsigned char> b = encode_blob(c, kKey);
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(b.data(), b.size(), &d, &why)) << kind;
  }
  AgentInfo d;
  std::string why;
  EXPECT_FALSE(decode_blob(nullptr, 100, &d, &why));
}

// Random bytes with a valid header and checksum: refused or accepted, never read beyond.
TEST(KvBlob, RandomBlobsNeverCrash) {
  std::mt19937 rng(7);
  const std::vector<unsigned char> good = encode_blob(sample(), kKey);
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<unsigned char> b = good;
    const int flips = 1 + int(rng() % 8);
    for (int f = 0; f < flips; ++f) b[16 + rng() % (b.size() - 24 - kMacBytes)] = uint8_t(rng());
    if (iter % 3 == 0) b.resize(16 + rng() % (b.size() - 16));
    if (b.size() >= 24) {
      const uint32_t total = uint32_t(b.size());
      for (int i = 0; i < 4; ++i) b[12 + size_t(i)] = uint8_t(total >> (8 * i));
      reseal(&b);
    }
    AgentInfo d;
    std::string why;
    if (decode_blob(b.data(), b.size(), &d, &why)) {
      ++accepted;
      for (const RegionInfo& g : d.regions) EXPECT_GT(g.length, 0u);
      if (b != good) {
        EXPECT_FALSE(blob_sealed_by(b.data(), b.size(), kKey)) << "an altered blob kept its seal";
      }
    } else {
      EXPECT_FALSE(why.empty());
    }
  }
  EXPECT_LT(accepted, 20000);
}

// The owner's check: only the key that sealed a blob recognises it, and any edit, checksum
// recomputed or not, breaks the seal.
TEST(KvBlob, SealTellsForgeries) {
  const std::vector<unsigned char> good = encode_blob(sample(), kKey);
  EXPECT_TRUE(blob_sealed_by(good.data(), good.size(), kKey));
  EXPECT_FALSE(blob_sealed_by(good.data(), good.size(), key_of(2)));
  EXPECT_FALSE(blob_sealed_by(good.data(), 10, kKey));
  EXPECT_FALSE(blob_sealed_by(nullptr, good.size(), kKey));
  // A region's length doubled, the pid replaced, the worker address changed, the instance of
  // another agent: each forgery decodes (its checksum is right) but fails the seal.
  const size_t edits = 4;
  for (size_t e = 0; e < edits; ++e) {
    AgentInfo f = sample();
    if (e == 0) f.regions[0].length *= 2;
    if (e == 1) f.pid = 1;
    if (e == 2) f.address[5] ^= 1;
    if (e == 3) f.instance[0] ^= 1;
    std::vector<unsigned char> b = encode_blob(f, kKey);
    // The forger cannot compute the seal: it keeps the original's.
    std::copy(good.end() - 8 - ptrdiff_t(kMacBytes), good.end() - 8, b.end() - 8 - ptrdiff_t(kMacBytes));
    reseal(&b);
    AgentInfo d;
    std::string why;
    ASSERT_TRUE(decode_blob(b.data(), b.size(), &d, &why)) << e << ": " << why;
    EXPECT_FALSE(blob_sealed_by(b.data(), b.size(), kKey)) << "forgery " << e;
  }
  // Every byte flipped before the trailer, checksum recomputed: never sealed.
  for (size_t i = 0; i + 8 < good.size(); ++i) {
    std::vector<unsigned char> b = good;
    b[i] ^= 0x01;
    reseal(&b);
    EXPECT_FALSE(blob_sealed_by(b.data(), b.size(), kKey)) << "byte " << i;
  }
}

TEST(KvBlob, RandomKeysDiffer) {
  SecretKey a{}, b{};
  ASSERT_TRUE(random_bytes(a.data(), a.size()));
  ASSERT_TRUE(random_bytes(b.data(), b.size()));
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace weft::kv
