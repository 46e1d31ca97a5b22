// gpu_hier: blocking allreduce, bcast, reduce, allgather and reduce_scatter on device buffers
// over a communicator that spans nodes. Device stages run inside each node on the node's own
// workspace (coll/gpu's algorithms on the hierarchy's node communicator, as a call of the node
// would choose them), host stages between the nodes (coll/hier's groups, flat host algorithms
// on host copies). Every stage is appended to one schedule, so all messages use the call's tag.
//   allreduce  1. reduce to the node's leader (device); a node of one rank copies its input;
//              2. the leaders copy the vector to host memory, allreduce it (recursive
//                 doubling) and copy it back;
//              3. bcast from the node's leader (device).
//   bcast      1. the heads (the leaders, the root standing in for its node's) bcast a host copy
//                 from the root (binomial);
//              2. bcast from the node's head (device).
//   reduce     1. reduce to the node's head (device): the root's buffer on its node, a device
//                 buffer of the head's elsewhere;
//              2. the heads reduce host copies to the root (binomial), which copies the total
//                 to its buffer.
//   allgather  1. allgather of the node's blocks into a device buffer (device);
//              2. the leaders exchange host copies of their nodes' blocks (ring), lay them out
//                 in rank order and copy the whole result to the device;
//              3. bcast of the whole result from the node's leader (device).
//   reduce_scatter   the allreduce into a device buffer of the rank's, then its share.
// A node of one rank skips its device stages. Chosen by the rule of choice.cpp when gate()
// made the node levels ready (every rank passes device memory; every node's workspace usable).
#include <cstring>
#include <limits>

#include "coll/algorithm.h"
#include "coll/hier/packing.h"
#include "coll/hier/rooted.h"
#include "coll/tune.h"
#include "hier.h"
#include "steps.h"

namespace weft::coll {

namespace {

using gpu::HierGpu;

bool supports_common(const CollArgs& a, const CollContext& ctx, bool reduction) {
  const Comm& c = ctx.comm;
  if (!a.blocking || !spans_nodes(c) || !gpu::hier_ready(c) || !gpu::device_call(a)) return false;
  return !reduction || (!a.red.user && gpu::supports(a.red.op, a.red.type));
}
bool supports_reduction(const CollArgs& a, const CollContext& ctx) {
  return a.count > 0 && supports_common(a, ctx, true);
}
bool supports_data(const CollArgs& a, const CollContext& ctx) { return a.bytes > 0 && supports_common(a, ctx, false); }
bool supports_allgather(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  if (!supports_data(a, ctx) || !a.uniform || a.own_bytes == 0 || a.recv_blocks.size() != size_t(c.size)) return false;
  for (size_t q = 0; q < a.recv_blocks.size(); ++q)
    if (a.recv_blocks[q].offset != q * a.own_bytes || a.recv_blocks[q].bytes != a.own_bytes) return false;
  return true;
}

// A rough model, to which the estimate adds the rule's penalty (gpu_coll.h): two device stages (launch floors
// and a copy of the vector each), the copies to and from host memory, and the leaders'
// exchange at the network's level.
double estimate(const CollArgs& a, const CollContext& ctx, const CostModel& m) {
  const Comm& c = ctx.comm;
  if (!spans_nodes(c)) return std::numeric_limits<double>::infinity();
  const double n = double(a.bytes);
  return 2 * (gpu::kLaunchUs + n / gpu::kCopyBytesPerUs) + 2 * n / gpu::kCopyBytesPerUs +
         recursive_doubling_rounds(hierarchy(c).node_count()) * net_level(m).step_us(n);
}

// A schedule whose one step fails with s (what a builder returns when it cannot build).
std::shared_ptr<Schedule> failing(Status st) {
  auto s = std::make_shared<Schedule>("gpu_hier");
  s->call([st] { return st; });
  return s;
}

// This rank's device scratch of at least `bytes`, kept alive by s.
Status device_scratch(Schedule& s, HierGpu& g, size_t bytes, char** out) {
  if (!g.scratch || g.scratch->bytes < bytes) {
    auto d = std::make_shared<gpu::DeviceScratch>();
    WEFT_TRY(memkind_device_alloc(bytes, &d->ptr));
    d->bytes = bytes;
    g.scratch = std::move(d);
  }
  s.keep(g.scratch);
  *out = static_cast<char*>(g.scratch->ptr);
  return Status::ok;
}

// A device stage on this rank's node: `na` as a call of the node communicator would run it
// (forced by WEFT_COLL_TUNE where that GPU algorithm can run it, else the lowest estimate, which
// carries the rule), appended to s.
Status append_node_stage(Schedule& s, const CollContext& ctx, const Hierarchy& h, const HierGpu& g,
                         const CollArgs& na) {
  const Comm& node = *h.node_comm;
  const CollContext nctx = context_on(ctx, node);
  const Algorithm* alg = g.tuning ? g.tuning->forced(na.coll, na.bytes) : nullptr;
  if (alg && !(gpu::is_gpu_algorithm(*alg) && alg->supports(na, nctx))) alg = nullptr;
  if (!alg) alg = lowest_estimate(na, nctx, CostModel{}, true);
  if (!alg) {
    set_error_detail(std::string("no GPU algorithm runs the ") + collective_name(na.coll) + " stage on " +
                     node.label());
    return Status::internal;
  }
  std::shared_ptr<Schedule> stage = alg->build(na, nctx);
  s.append_mapped(*stage, h.node);
  return Status::ok;
}

// A copy between device and host memory, as a local step of s.
void copy_step(Schedule& s, void* to, const void* from, size_t bytes) {
  s.call([to, from, bytes] { return memkind_copy(to, from, bytes); });
}

// The allreduce of count elements from send (device; == recv: in place) into recv (device).
Status append_allreduce(Schedule& s, const CollContext& ctx, const void* send, void* recv, size_t count,
                        const Reduction& red) {
  const Comm& c = ctx.comm;
  const Hierarchy& h = hierarchy(c);
  HierGpu& g = gpu::hier_gpu(h);
  const size_t bytes = count * red.elem_size;
  if (h.node.size() > 1) {
    CollArgs up{Collective::reduce};
    up.send = send;
    up.recv = h.is_leader() ? recv : const_cast<void*>(send);  // significant at the leader only
    up.count = count;
    up.bytes = bytes;
    up.red = red;
    WEFT_TRY(append_node_stage(s, ctx, h, g, up));
  } else if (send != recv) {
    copy_step(s, recv, send, bytes);
  }
  if (h.is_leader() && h.node_count() > 1) {
    char* host = s.scratch(bytes);
    copy_step(s, host, recv, bytes);
    auto across = build_allreduce_recursive_doubling(group_view(h.leaders, c.rank), host, count, red);
    s.append_mapped(*across, h.leaders);
    copy_step(s, recv, host, bytes);
  }
  if (h.node.size() > 1) {
    CollArgs down{Collective::bcast};
    down.recv = recv;
    down.bytes = bytes;
    down.root = 0;
    WEFT_TRY(append_node_stage(s, ctx, h, g, down));
  }
  return Status::ok;
}

std::shared_ptr<Schedule> build_hier_allreduce(const CollArgs& a, const CollContext& ctx) {
  auto s = std::make_shared<Schedule>("gpu_hier");
  s->set_reduction(a.red);
  const Status st = append_allreduce(*s, ctx, a.send, a.recv, a.count, a.red);
  return st == Status::ok ? s : failing(st);
}

std::shared_ptr<Schedule> build_hier_bcast(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("gpu_hier");
  const Hierarchy& h = hierarchy(c);
  const RootedGroups r = rooted_groups(h, c, a.root);
  if (r.is_head && h.node_count() > 1) {
    char* host = s->scratch(a.bytes);
    if (c.rank == a.root) copy_step(*s, host, a.recv, a.bytes);
    auto across = build_bcast_binomial(group_view(r.heads, c.rank), host, a.bytes, r.root_node);
    s->append_mapped(*across, r.heads);
    if (c.rank != a.root) copy_step(*s, a.recv, host, a.bytes);
  }
  if (h.node.size() > 1) {
    CollArgs down{Collective::bcast};
    down.recv = a.recv;
    down.bytes = a.bytes;
    down.root = r.node_root;
    if (Status st = append_node_stage(*s, ctx, h, gpu::hier_gpu(h), down); st != Status::ok) return failing(st);
  }
  return s;
}

std::shared_ptr<Schedule> build_hier_reduce(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("gpu_hier");
  s->set_reduction(a.red);
  const Hierarchy& h = hierarchy(c);
  HierGpu& g = gpu::hier_gpu(h);
  const RootedGroups r = rooted_groups(h, c, a.root);
  const bool is_root = c.rank == a.root;
  // The node's partial: the root's buffer on its node, a device buffer at the other heads.
  void* partial = is_root ? a.recv : const_cast<void*>(a.send);
  if (r.is_head && !is_root) {
    char* scratch = nullptr;
    if (Status st = device_scratch(*s, g, a.bytes, &scratch); st != Status::ok) return failing(st);
    partial = scratch;
  }
  if (h.node.size() > 1) {
    CollArgs up{Collective::reduce};
    up.send = a.send;
    up.recv = partial;
    up.count = a.count;
    up.bytes = a.bytes;
    up.red = a.red;
    up.root = r.node_root;
    if (Status st = append_node_stage(*s, ctx, h, g, up); st != Status::ok) return failing(st);
  } else if (partial != a.send) {
    copy_step(*s, partial, a.send, a.bytes);
  }
  if (r.is_head && h.node_count() > 1) {
    char* host = s->scratch(a.bytes);
    copy_step(*s, host, partial, a.bytes);
    auto across = build_reduce_binomial(group_view(r.heads, c.rank), host, host, a.count, a.red, r.root_node);
    s->append_mapped(*across, r.heads);
    if (is_root) copy_step(*s, a.recv, host, a.bytes);
  }
  return s;
}

std::shared_ptr<Schedule> build_hier_allgather(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("gpu_hier");
  const Hierarchy& h = hierarchy(c);
  HierGpu& g = gpu::hier_gpu(h);
  const size_t block = a.own_bytes, total = a.bytes, here = h.node.size() * block;
  // 1. The node's blocks in node rank order.
  const char* node_blocks = static_cast<const char*>(a.send);
  if (h.node.size() > 1) {
    char* scratch = nullptr;
    if (Status st = device_scratch(*s, g, here, &scratch); st != Status::ok) return failing(st);
    CollArgs na{Collective::allgather};
    na.send = a.send;
    na.recv = scratch;
    na.own_bytes = block;
    na.bytes = here;
    for (size_t q = 0; q < h.node.size(); ++q) na.recv_blocks.push_back(Block{q * block, block});
    if (Status st = append_node_stage(*s, ctx, h, g, na); st != Status::ok) return failing(st);
    node_blocks = scratch;
  }
  // 2. The leaders exchange their nodes' blocks (packed in node order) and lay them out in
  // rank order (a node's ranks need not be consecutive).
  if (h.is_leader()) {
    const Packing k = packing(h, c, a.recv_blocks);
    char* packed = s->scratch(total);
    char* ordered = s->scratch(total);
    const Block& mine = k.bundles[size_t(k.my_node)];
    copy_step(*s, packed + mine.offset, node_blocks, here);
    if (h.node_count() > 1) {
      auto across = build_allgather_ring(group_view(h.leaders, c.rank), packed + mine.offset, packed, k.bundles);
      s->append_mapped(*across, h.leaders);
    }
    s->call([k, packed, ordered, block, p = size_t(c.size)] {
      for (size_t q = 0; q < p; ++q) memcpy(ordered + q * block, packed + k.packed[q].offset, block);
      return Status::ok;
    });
    copy_step(*s, a.recv, ordered, total);
  }
  // 3. The whole result from the leader to the rest of the node.
  if (h.node.size() > 1) {
    CollArgs down{Collective::bcast};
    down.recv = a.recv;
    down.bytes = total;
    down.root = 0;
    if (Status st = append_node_stage(*s, ctx, h, g, down); st != Status::ok) return failing(st);
  }
  return s;
}

std::shared_ptr<Schedule> build_hier_reduce_scatter(const CollArgs& a, const CollContext& ctx) {
  const Comm& c = ctx.comm;
  auto s = std::make_shared<Schedule>("gpu_hier");
  s->set_reduction(a.red);
  HierGpu& g = gpu::hier_gpu(hierarchy(c));
  char* whole = nullptr;
  if (Status st = device_scratch(*s, g, a.bytes, &whole); st != Status::ok) return failing(st);
  if (Status st = append_allreduce(*s, ctx, a.send, whole, a.count, a.red); st != Status::ok) return failing(st);
  size_t first = 0;
  for (int q = 0; q < c.rank; ++q) first += a.counts[size_t(q)];
  const size_t mine = a.counts[size_t(c.rank)] * a.red.elem_size;
  if (mine) copy_step(*s, a.recv, whole + first * a.red.elem_size, mine);
  return s;
}

}  // namespace

namespace gpu {

extern const Algorithm allreduce_gpu_hier{"gpu_hier", Collective::allreduce, supports_reduction,
                                          ruled_estimate<estimate, allreduce_gpu_hier>, build_hier_allreduce};
extern const Algorithm bcast_gpu_hier{"gpu_hier", Collective::bcast, supports_data,
                                      ruled_estimate<estimate, bcast_gpu_hier>, build_hier_bcast};
extern const Algorithm reduce_gpu_hier{"gpu_hier", Collective::reduce, supports_reduction,
                                       ruled_estimate<estimate, reduce_gpu_hier>, build_hier_reduce};
extern const Algorithm allgather_gpu_hier{"gpu_hier", Collective::allgather, supports_allgather,
                                          ruled_estimate<estimate, allgather_gpu_hier>, build_hier_allgather};
extern const Algorithm reduce_scatter_gpu_hier{"gpu_hier", Collective::reduce_scatter, supports_reduction,
                                               ruled_estimate<estimate, reduce_scatter_gpu_hier>,
                                               build_hier_reduce_scatter};

}  // namespace gpu
}  // namespace weft::coll
