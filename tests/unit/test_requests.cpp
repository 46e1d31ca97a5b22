#include <gtest/gtest.h>

#include <set>

#include "runtime/request.h"

using namespace weft;

TEST(RequestPool, IndicesAreStableAndReused) {
  RequestPool pool;
  std::set<uint32_t> seen;
  std::vector<Request*> reqs;
  for (int i = 0; i < 3000; ++i) {  // more than one chunk
    Request* r = pool.alloc(RequestKind::send);
    EXPECT_TRUE(seen.insert(r->index).second);
    EXPECT_EQ(pool.at(r->index), r);
    EXPECT_TRUE(pool.is_live(r->index));
    reqs.push_back(r);
  }
  EXPECT_EQ(pool.in_use(), 3000u);
  uint32_t idx = reqs[17]->index;
  reqs[17]->status.bytes = 99;
  pool.release(reqs[17]);
  EXPECT_FALSE(pool.is_live(idx));
  Request* again = pool.alloc(RequestKind::recv);
  EXPECT_EQ(again->index, idx);
  EXPECT_EQ(again->status.bytes, 0u);  // reset on release
  EXPECT_EQ(again->kind, RequestKind::recv);
  EXPECT_FALSE(pool.is_live(1u << 30));
}
