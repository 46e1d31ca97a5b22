// The UCX service (runtime/ucx_service.h) between two instances of one process, as two ranks or
// two KV agents use it: each connects to the other's worker address, one registers memory and
// hands its packed remote key over, the other unpacks it on its endpoint and puts and gets
// bytes, checked byte by byte. On UCX's default transports (shared memory, cma; network lanes on
// lo) and on tcp over the loopback device.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ucx_service.h"

namespace weft {
namespace {

constexpr size_t kBytes = 64 * 1024 + 3;  // rendezvous-sized, not a multiple of any word

class UcxServicePair : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    UcxOptions o;
    o.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
    // Network lanes stay on loopback, as a job on one node keeps them.
    o.settings = {{"NET_DEVICES", "lo"}};
    if (std::string(GetParam()) == "tcp") o.settings = {{"TLS", "tcp"}, {"NET_DEVICES", "lo"}};
    for (auto* s : {&a_, &b_}) {
      const char* failed = nullptr;
      const ucs_status_t st = UcxService::create(o, s, &failed);
      ASSERT_EQ(st, UCS_OK) << failed << ": " << ucs_status_string(st);
    }
    std::vector<unsigned char> addr_a, addr_b;
    ASSERT_EQ(a_->address(&addr_a), UCS_OK);
    ASSERT_EQ(b_->address(&addr_b), UCS_OK);
    ASSERT_FALSE(addr_a.empty());
    ASSERT_EQ(a_->connect(addr_b.data(), false, nullptr, nullptr, &a_to_b_), UCS_OK);
    ASSERT_EQ(b_->connect(addr_a.data(), false, nullptr, nullptr, &b_to_a_), UCS_OK);
  }

  void TearDown() override {
    std::vector<ucs_status_ptr_t> closing;
    if (a_to_b_) closing.push_back(UcxService::close(a_to_b_, false));
    if (b_to_a_) closing.push_back(UcxService::close(b_to_a_, false));
    // A flushed close may need the other side's progress.
    for (ucs_status_ptr_t req : closing) {
      if (!UCS_PTR_IS_PTR(req)) continue;
      while (ucp_request_check_status(req) == UCS_INPROGRESS) progress_both();
      ucp_request_free(req);
    }
    a_.reset();
    b_.reset();
  }

  void progress_both() {
    (void)a_->progress();
    (void)b_->progress();
  }

  // Waits for a request of a's, progressing both (tcp emulates RMA through the target's progress).
  ucs_status_t finish(ucs_status_ptr_t req) {
    if (req == nullptr) return UCS_OK;
    if (UCS_PTR_IS_ERR(req)) return UCS_PTR_STATUS(req);
    ucs_status_t st;
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) progress_both();
    ucp_request_free(req);
    return st;
  }

  std::unique_ptr<UcxService> a_, b_;
  ucp_ep_h a_to_b_ = nullptr, b_to_a_ = nullptr;
};

TEST_P(UcxServicePair, PutAndGetThroughAnUnpackedKey) {
  std::vector<unsigned char> target(kBytes, 0), source(kBytes), back(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) source[i] = static_cast<unsigned char>(i * 7 + 3);

  ucp_mem_h memh = nullptr;
  std::vector<unsigned char> packed;
  const char* failed = nullptr;
  ASSERT_EQ(b_->map(target.data(), target.size(), &memh, &packed, &failed), UCS_OK) << failed;
  ASSERT_NE(memh, nullptr);
  ASSERT_FALSE(packed.empty());

  ucp_rkey_h rkey = nullptr;
  ASSERT_EQ(UcxService::unpack_rkey(a_to_b_, packed.data(), &rkey), UCS_OK);
  ASSERT_NE(rkey, nullptr);
  const auto remote = reinterpret_cast<uint64_t>(target.data());

  ucp_request_param_t p{};
  ASSERT_EQ(finish(ucp_put_nbx(a_to_b_, source.data(), kBytes, remote, rkey, &p)), UCS_OK);
  ASSERT_EQ(finish(ucp_ep_flush_nbx(a_to_b_, &p)), UCS_OK);
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(target[i], source[i]) << "put: byte " << i;

  // The target changes its memory; a get reads it back.
  for (size_t i = 0; i < kBytes; ++i) target[i] = static_cast<unsigned char>(255 - i % 251);
  ASSERT_EQ(finish(ucp_get_nbx(a_to_b_, back.data(), kBytes, remote, rkey, &p)), UCS_OK);
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(back[i], target[i]) << "get: byte " << i;

  // A get of a part at an offset, into the middle of a buffer that keeps its edges.
  std::vector<unsigned char> part(100, 0xee);
  ASSERT_EQ(finish(ucp_get_nbx(a_to_b_, part.data() + 10, 80, remote + 1000, rkey, &p)), UCS_OK);
  for (size_t i = 0; i < part.size(); ++i)
    ASSERT_EQ(part[i], i < 10 || i >= 90 ? 0xee : target[1000 + i - 10]) << "partial get: byte " << i;

  UcxService::destroy_rkey(rkey);
  b_->unmap(memh);
}

TEST_P(UcxServicePair, NamesTransports) {
  // Some traffic first: lanes are chosen when the endpoint is wired up.
  std::vector<unsigned char> target(64, 0), packed;
  ucp_mem_h memh = nullptr;
  const char* failed = nullptr;
  ASSERT_EQ(b_->map(target.data(), target.size(), &memh, &packed, &failed), UCS_OK) << failed;
  ucp_rkey_h rkey = nullptr;
  ASSERT_EQ(UcxService::unpack_rkey(a_to_b_, packed.data(), &rkey), UCS_OK);
  const uint64_t word = 0x0123456789abcdefull;
  ucp_request_param_t p{};
  ASSERT_EQ(finish(ucp_put_nbx(a_to_b_, &word, sizeof word, reinterpret_cast<uint64_t>(target.data()), rkey, &p)),
            UCS_OK);
  ASSERT_EQ(finish(ucp_ep_flush_nbx(a_to_b_, &p)), UCS_OK);
  EXPECT_EQ(memcmp(target.data(), &word, sizeof word), 0);

  const std::string lanes = UcxService::endpoint_transports(a_to_b_);
  EXPECT_NE(lanes, "(none reported)");
  if (std::string(GetParam()) == "tcp") {
    EXPECT_NE(lanes.find("tcp/lo"), std::string::npos) << lanes;
  }
  EXPECT_NE(a_->context_transports(), "(none)");
  UcxService::destroy_rkey(rkey);
  b_->unmap(memh);
}

// An empty region maps one byte, as a window of no bytes needs.
TEST_P(UcxServicePair, MapsAnEmptyRegion) {
  unsigned char byte = 0;
  ucp_mem_h memh = nullptr;
  std::vector<unsigned char> packed;
  const char* failed = nullptr;
  ASSERT_EQ(a_->map(&byte, 0, &memh, &packed, &failed), UCS_OK) << failed;
  EXPECT_FALSE(packed.empty());
  a_->unmap(memh);
}

INSTANTIATE_TEST_SUITE_P(Transports, UcxServicePair, ::testing::Values("default", "tcp"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace weft
