// Stream communicators without a GPU (pt2pt/stream_comm.h, coll/gpu/stream_exec.h): the table by
// context id, the end of an *_enqueue call's route, and the stream-ordered calls as the bindings
// describe them (spans, in-place forms, empty calls).
#include <gtest/gtest.h>

#include <memory>

#include "coll/gpu/stream_exec.h"
#include "pt2pt/stream_comm.h"

using namespace weft;

namespace {

Datatype make_int() {
  Datatype d;
  d.name = "int";
  d.size = 4;
  d.extent = 4;
  d.packed = 4;
  d.true_extent = 4;
  d.predefined = true;
  d.basic = d.elem_basic = BasicType::i32;
  d.align = 4;
  return d;
}

Comm make_comm(uint32_t context, int rank, int size) {
  Comm c;
  c.context_id = context;
  c.rank = rank;
  c.size = size;
  return c;
}

}  // namespace

TEST(StreamComms, TableIsKeyedByContextIdAndReleasedOnFree) {
  const Comm a = make_comm(40, 0, 2), b = make_comm(42, 0, 2);
  EXPECT_EQ(find_stream_comm(a), nullptr);
  auto sc = std::make_unique<StreamComm>();
  const StreamComm* added = sc.get();
  add_stream_comm(a, std::move(sc));
  EXPECT_EQ(find_stream_comm(a), added);
  EXPECT_EQ(find_stream_comm(b), nullptr);  // a duplicate (another context) carries no stream
  release_stream_comm(a);                   // no work enqueued: nothing to wait for
  EXPECT_EQ(find_stream_comm(a), nullptr);  // a reused context id starts without one
  release_stream_comm(a);                   // twice, or never added: nothing
  release_stream_comm(b);
}

TEST(StreamComms, RouteEndRunsTheHostCallOnlyOffTheStream) {
  const StreamComm sc;
  bool host = true;
  EXPECT_EQ(stream_route_end("f", "sends", sc, {StreamPath::native, ""}, false, &host), Status::ok);
  EXPECT_FALSE(host);
  EXPECT_EQ(stream_route_end("f", "sends", sc, {StreamPath::host, ""}, false, &host), Status::ok);
  EXPECT_TRUE(host);
  // A fallback under WEFT_REQUIRE_FAST_PATH (and, without CUDA, any fallback) is refused.
  host = false;
  EXPECT_EQ(stream_route_end("f", "sends", sc, {StreamPath::fallback, "why"}, true, &host), Status::not_supported);
  EXPECT_FALSE(host);
}

TEST(StreamComms, CollectiveCallsDescribeTheirBuffers) {
  const Datatype i32 = make_int();
  int buf[8] = {};
  const StreamSpan s = stream_span(&i32, buf, 3);
  EXPECT_EQ(s.at, reinterpret_cast<char*>(buf));
  EXPECT_EQ(s.bytes, 12u);
  EXPECT_TRUE(s.contiguous);

  const coll::Reduction sum{ReduceOp::sum, BasicType::i32, 4};
  // Reduce_scatter_block of 2 per rank over 4 ranks, in place: the input is recv.
  coll::gpu::StreamCall r = coll::gpu::stream_reduction(buf, buf, &i32, 2, 4, 8, sum);
  EXPECT_EQ(r.coll, coll::Collective::reduce_scatter);
  EXPECT_EQ(r.send, static_cast<const void*>(buf));
  EXPECT_EQ(r.bytes, 8u);
  EXPECT_EQ(r.count, 2u);
  EXPECT_TRUE(r.reduction && r.predefined_type && r.contiguous && !r.empty);
  EXPECT_EQ(coll::gpu::stream_reduction(nullptr, buf, &i32, 0, 1, 0, sum).coll, coll::Collective::allreduce);
  EXPECT_TRUE(coll::gpu::stream_reduction(nullptr, buf, &i32, 0, 1, 0, sum).empty);

  const coll::gpu::StreamCall b = coll::gpu::stream_bcast(&i32, buf, 4, 1);
  EXPECT_EQ(b.send, b.recv);
  EXPECT_EQ(b.bytes, 16u);
  EXPECT_EQ(b.root, 1);

  // Allgather of 2 per rank on rank 2 of 4, in place: this rank's block is send.
  const Comm c = make_comm(44, 2, 4);
  const coll::gpu::StreamCall g = coll::gpu::stream_allgather(&i32, buf, 2, nullptr, nullptr, 0, c);
  EXPECT_EQ(g.recv, static_cast<void*>(buf));
  EXPECT_EQ(g.send, static_cast<const void*>(buf + 4));
  EXPECT_EQ(g.bytes, 8u);
  int mine[2] = {};
  EXPECT_EQ(coll::gpu::stream_allgather(&i32, buf, 2, &i32, mine, 2, c).send, static_cast<const void*>(mine));

  // An empty call is done at once, stream-native, whatever the communicator.
  StreamRoute route;
  const coll::CostModel model;
  const coll::CollContext ctx{nullptr, c, model};
  EXPECT_EQ(coll::gpu::stream_collective("f", StreamComm{}, ctx, coll::gpu::stream_bcast(&i32, buf, 0, 0), &route),
            Status::ok);
  EXPECT_EQ(route.path, StreamPath::native);
}
