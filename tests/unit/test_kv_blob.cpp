// KV agent blobs (rma/kv/kv_blob.h): round trip, and every kind of damaged blob refused with a
// reason, never read out of bounds.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "rma/kv/kv_blob.h"

namespace weft::kv {
namespace {

AgentInfo sample() {
  AgentInfo a;
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
    } else {
      g.rkey.assign(40 + r, (unsigned char)(0x30 + r));
    }
    a.regions.push_back(g);
  }
  return a;
}

// Rewrites the checksum, so that a test reaches the check after it.
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
  const std::vector<unsigned char> b = encode_blob(a);
  AgentInfo d;
  std::string why;
  ASSERT_TRUE(decode_blob(b.data(), b.size(), &d, &why)) << why;
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
    EXPECT_EQ(d.regions[i].rkey, a.regions[i].rkey);
    EXPECT_EQ(d.regions[i].ipc, a.regions[i].ipc);
  }
}

TEST(KvBlob, EveryTruncationRefused) {
  const std::vector<unsigned char> b = encode_blob(sample());
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
  const std::vector<unsigned char> b = encode_blob(sample());
  for (size_t i = 0; i < b.size(); ++i) {
    std::vector<unsigned char> c = b;
    c[i] ^= 0x5a;
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(c.data(), c.size(), &d, &why)) << "byte " << i;
  }
}

TEST(KvBlob, WrongVersionNamed) {
  std::vector<unsigned char> b = encode_blob(sample());
  b[8] = 2;  // the version's low byte
  reseal(&b);
  AgentInfo d;
  std::string why;
  EXPECT_FALSE(decode_blob(b.data(), b.size(), &d, &why));
  EXPECT_NE(why.find("version 2"), std::string::npos) << why;
}

TEST(KvBlob, HostileLengthsRefused) {
  AgentInfo a = sample();
  const std::vector<unsigned char> good = encode_blob(a);
  // The name length field (after magic, version and total) claims more bytes than exist.
  {
    std::vector<unsigned char> b = good;
    b[16] = 0xff;
    b[17] = 0xff;
    reseal(&b);
    AgentInfo d;
    std::string why;
    EXPECT_FALSE(decode_blob(b.data(), b.size(), &d, &why));
  }
  // A region count far beyond the bytes present.
  {
    a.regions.clear();
    std::vector<unsigned char> b = encode_blob(a);
    const size_t count_at = b.size() - 8 - 4;
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
    std::vector<unsigned char> b = encode_blob(c);
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
  const std::vector<unsigned char> good = encode_blob(sample());
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<unsigned char> b = good;
    const int flips = 1 + int(rng() % 8);
    for (int f = 0; f < flips; ++f) b[16 + rng() % (b.size() - 24)] = uint8_t(rng());
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
    } else {
      EXPECT_FALSE(why.empty());
    }
  }
  EXPECT_LT(accepted, 20000);
}

}  // namespace
}  // namespace weft::kv
