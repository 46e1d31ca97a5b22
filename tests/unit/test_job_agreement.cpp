// The facts every rank publishes at MPI_Init (pmix/job_agreement): encoding, and the message that
// names each disagreement with its values and the ranks holding them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pmix/job_agreement.h"

namespace weft {
namespace {

TEST(JobAgreement, FactsRoundTrip) {
  const JobFacts facts{{"weft", "0.1.0, build ab"}, {"WEFT_SHM_CELLS", "16"}, {"WEFT_COLL_TUNE", ""}};
  EXPECT_EQ(decode_facts(encode_facts(facts)), facts);
}

TEST(JobAgreement, SameFactsEverywhereSayNothing) {
  const std::string f = encode_facts({{"weft", "1"}, {"WEFT_PT2PT", "auto"}});
  EXPECT_EQ(describe_disagreement({f, f, f}), "");
  EXPECT_EQ(describe_disagreement({}), "");
}

TEST(JobAgreement, NamesEachDifferenceWithRankRuns) {
  std::vector<std::string> ranks;
  for (int r = 0; r < 6; ++r)
    ranks.push_back(encode_facts({{"weft", r == 4 ? "b" : "a"}, {"WEFT_PT2PT", "auto"},
                                  {"WEFT_SHM_CELLS", r == 1 || r == 2 ? "8" : "16"}}));
  EXPECT_EQ(describe_disagreement(ranks),
            "weft: a on ranks 0-3, 5; b on rank 4; WEFT_SHM_CELLS: 16 on ranks 0, 3-5; 8 on ranks 1-2");
}

TEST(JobAgreement, AFactMissingOnARankIsADifference) {
  const std::string full = encode_facts({{"weft", "a"}, {"WEFT_OFFLOAD", "off"}});
  const std::string older = encode_facts({{"weft", "a"}});
  EXPECT_EQ(describe_disagreement({full, older}), "WEFT_OFFLOAD: off on rank 0; (none) on rank 1");
}

TEST(JobAgreement, LongRankListsAreCut) {
  std::vector<std::string> ranks;
  for (int r = 0; r < 40; ++r) ranks.push_back(encode_facts({{"x", r % 2 ? "odd" : "even"}}));
  const std::string msg = describe_disagreement(ranks);
  EXPECT_NE(msg.find("even on ranks 0, 2, 4, 6, 8, 10, 12, 14 and 12 more"), std::string::npos) << msg;
}

TEST(JobAgreement, TextsThatDifferOnlyInFormStillDiffer) {
  const std::string msg = describe_disagreement({"weft=a\n", "weft=a", "weft=a\n"});
  EXPECT_EQ(msg, "the published facts of rank 1 differ in form from rank 0's");
}

TEST(JobAgreement, ANameGivenTwiceIsADifference) {
  const std::string msg = describe_disagreement({"weft=a\n", "weft=a\nweft=b\n"});
  EXPECT_EQ(msg, "(facts): (none) on rank 0; names weft twice on rank 1");
}

TEST(JobAgreement, OversizedFactsAreNotRead) {
  const std::string huge = "weft=a\nx=" + std::string(20000, 'y') + "\n";
  const std::string msg = describe_disagreement({"weft=a\n", huge});
  EXPECT_EQ(msg, "weft: a on rank 0; (none) on rank 1; (facts): (none) on rank 0; 20010 bytes, over the 16384 allowed on rank 1");
}

TEST(JobAgreement, MessagesStayShortWhateverPeersSend) {
  std::vector<std::string> ranks;
  for (int r = 0; r < 64; ++r) {
    std::string text = "weft=" + std::string(500, char('a' + r % 26)) + "\x01\n";
    for (int k = 0; k < 100; ++k) text += "only" + std::to_string(r) + "_" + std::to_string(k) + "=1\n";
    ranks.push_back(text);
  }
  const std::string msg = describe_disagreement(ranks);
  EXPECT_LT(msg.size(), 8000u) << msg.size();
  EXPECT_NE(msg.find("; 18 more values"), std::string::npos) << msg;  // 26 values, 8 shown
  EXPECT_NE(msg.find("..."), std::string::npos);  // long values are cut
  EXPECT_EQ(msg.find('\x01'), std::string::npos);  // control bytes are not printed
  EXPECT_NE(msg.find("; and more"), std::string::npos);
}

TEST(JobAgreement, BuildIdIsHex) {
  const std::string id = library_build_id();
  for (char ch : id) EXPECT_TRUE((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')) << id;
}

}  // namespace
}  // namespace weft
