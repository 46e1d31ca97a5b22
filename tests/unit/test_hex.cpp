// MPIX_Info_set_hex's encoding (runtime/hex): round trips, zero runs, and malformed text refused.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/hex.h"

namespace weft {
namespace {

TEST(Hex, EncodesUpperCaseInMemoryOrder) {
  const unsigned char bytes[] = {0x00, 0x0f, 0xa5, 0xff};
  EXPECT_EQ(hex_encode(bytes, sizeof bytes), "000FA5FF");
  EXPECT_EQ(hex_encode(bytes, 0), "");
}

TEST(Hex, RoundTripsEveryByteValue) {
  std::vector<unsigned char> bytes(256);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i);
  std::vector<unsigned char> back;
  ASSERT_TRUE(hex_decode(hex_encode(bytes.data(), bytes.size()), &back));
  EXPECT_EQ(back, bytes);
}

TEST(Hex, DecodesLowerCaseAndZeroRuns) {
  std::vector<unsigned char> out;
  ASSERT_TRUE(hex_decode("ab[3]Cd", &out));
  EXPECT_EQ(out, (std::vector<unsigned char>{0xab, 0, 0, 0, 0xcd}));
  ASSERT_TRUE(hex_decode("", &out));
  EXPECT_TRUE(out.empty());
}

TEST(Hex, RefusesMalformedText) {
  std::vector<unsigned char> out;
  for (const char* bad : {"A", "0G", "zz", "[", "[]", "[3", "[x]", "[12345678]", "AB[2"}) {
    EXPECT_FALSE(hex_decode(bad, &out)) << bad;
  }
}

TEST(Hex, RefusesTextLongerThanTheLimit) {
  std::vector<unsigned char> out;
  ASSERT_TRUE(hex_decode("0102[2]", &out, 4));
  EXPECT_EQ(out, (std::vector<unsigned char>{1, 2, 0, 0}));
  EXPECT_FALSE(hex_decode("0102[3]", &out, 4));
  EXPECT_FALSE(hex_decode("0102030405", &out, 4));
  EXPECT_FALSE(hex_decode("[9999999][9999999]", &out, 8));
}

}  // namespace
}  // namespace weft
