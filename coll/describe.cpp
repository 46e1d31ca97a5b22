// A described call (call.h: Description) laid out for its collective: the pieces of each side
// per rank, the plan key of a call that may be reused, and the GPU gate for the calls that can
// run on device buffers (Allreduce, Bcast, Reduce, Allgather, Reduce_scatter(_block)).
#include <numeric>

#include "call.h"
#include "inter/inter.h"
#include "runtime/typemap.h"

namespace weft::coll {

namespace {

size_t total_bytes(const std::vector<Block>& blocks) {
  size_t n = 0;
  for (const Block& b : blocks) n += b.bytes;
  return n;
}

// The pieces of n blocks of side s.
std::vector<Piece> pieces(const Side& s, int n) {
  std::vector<Piece> out(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    const int count = s.per_rank ? s.counts[r] : int(s.count);
    const Datatype* d = s.types.empty() ? s.type : s.types[size_t(r)];
    ptrdiff_t at;
    if (!s.byte_displs.empty()) at = s.byte_displs[size_t(r)];
    else if (s.displs) at = ptrdiff_t(s.displs[r]) * d->extent;
    else at = ptrdiff_t(r) * ptrdiff_t(count) * d->extent;
    out[size_t(r)] = Piece{static_cast<const char*>(s.buf) + at, size_t(count), d};
  }
  return out;
}

bool reduces(Collective c) {
  return c == Collective::reduce || c == Collective::allreduce || c == Collective::scan ||
         c == Collective::exscan || c == Collective::reduce_scatter;
}

// A call whose plan is kept for an identical later call: both sides uniform, no user
// function (v and w forms, neighbour collectives and reduce_scatter are not kept).
bool cacheable(const Description& d) {
  if (d.kind == Collective::reduce_scatter || d.kind == Collective::neighbor_allgather ||
      d.kind == Collective::neighbor_alltoall)
    return false;
  return !d.send.per_rank && !d.recv.per_rank && !d.red.user;
}

// The arguments of reducing d's elements from `in` into `out` (both contiguous).
CollArgs reduction_args(const Description& d, const void* in, void* out) {
  CollArgs a{d.kind};
  a.send = in;
  a.recv = out;
  a.count = d.reduce_count;
  a.bytes = a.count * d.red.elem_size;
  a.red = d.red;
  return a;
}

PlanKey key_of(const Description& d, Mode mode) {
  return PlanKey{int(d.kind), mode == Mode::blocking, d.send.buf, d.recv.buf, d.send.count, d.recv.count,
                 d.send.type, d.recv.type, d.op, d.root};
}

}  // namespace

bool Call::reused(const Description& d) { return cacheable(d) && reuse(key_of(d, mode_)); }

Status Call::plan(const Description& d) {
  const PlanKey key = key_of(d, mode_);
  const PlanKey* kept = cacheable(d) ? &key : nullptr;
  if (reduces(d.kind)) {
    // Nothing to reduce: completes at once in every mode.
    const size_t count = d.kind == Collective::reduce_scatter
                             ? std::accumulate(d.counts.begin(), d.counts.end(), size_t(0))
                             : size_t(d.recv.count);
    if (count == 0) {
      plan_nothing();
      return error();
    }
  }
  if (ctx_.comm.inter) return plan_inter(d);
  if (kept && reuse(key)) return Status::ok;
  switch (d.kind) {
    case Collective::barrier: return plan(CollArgs{Collective::barrier}, kept);
    case Collective::bcast: return plan_bcast(d, kept);
    case Collective::reduce: return plan_reduce(d, kept);
    case Collective::allreduce:
    case Collective::scan:
    case Collective::exscan: return plan_vector_reduction(d, kept);
    case Collective::reduce_scatter: return plan_reduce_scatter(d);
    case Collective::gather:
    case Collective::scatter: return plan_rooted(d, kept);
    case Collective::allgather: return plan_allgather(d, kept);
    case Collective::alltoall: return plan_alltoall(d, kept);
    case Collective::neighbor_allgather:
    case Collective::neighbor_alltoall: return plan_neighbor(d);
    case Collective::count_: break;
  }
  return Status::invalid_arg;
}

// Gather(v) and Scatter(v): the root's side has a block per rank (the receive side of a
// gather, the send side of a scatter), the other side one block at every rank (in place at the
// root: its block of the root's side).
Status Call::plan_rooted(const Description& d, const PlanKey* key) {
  const bool gather = d.kind == Collective::gather;
  const Side& all = gather ? d.recv : d.send;
  const Side& own = gather ? d.send : d.recv;
  const int p = ctx_.comm.size, root = d.root;
  const bool is_root = ctx_.comm.rank == root, in_place = own.in_place;
  CollArgs a{d.kind};
  a.root = root;
  a.uniform = !all.per_rank;
  std::vector<Block>& blocks = gather ? a.recv_blocks : a.send_blocks;
  char* base = nullptr;
  if (is_root)
    base = gather ? output(pieces(all, p), &blocks, in_place ? root : -1) : input(pieces(all, p), &blocks);
  char* mine;
  if (in_place) {
    mine = base + blocks[size_t(root)].offset;
    a.own_bytes = blocks[size_t(root)].bytes;
  } else {
    std::vector<Block> block;
    mine = (gather ? input(pieces(own, 1), &block) : output(pieces(own, 1), &block)) + block[0].offset;
    a.own_bytes = block[0].bytes;
  }
  a.send = gather ? mine : base;
  a.recv = gather ? base : mine;
  a.bytes = a.uniform ? a.own_bytes * size_t(p) : (is_root ? total_bytes(blocks) : a.own_bytes);
  return plan(a, key);
}

// Allgather and Allgatherv. The sizes of the two sides of a rank agree (the caller's check).
Status Call::plan_allgather(const Description& d, const PlanKey* key) {
  const int p = ctx_.comm.size, me = ctx_.comm.rank;
  const bool in_place = d.send.in_place;
  CollArgs a{Collective::allgather};
  a.uniform = !d.recv.per_rank;
  const std::vector<Piece> out = pieces(d.recv, p);
  // GPU-native (MPI_Allgather, MPI_Iallgather, MPI_Allgather_init): the p blocks one run of
  // bytes, back to back.
  ptrdiff_t offset = 0, send_offset = 0;
  const Datatype* rtype = out[0].type;
  const size_t block = type_packed_size(rtype, size_t(d.recv.count));
  if (a.uniform && !d.send.per_rank && p > 1 && block &&
      type_is_contiguous(rtype, size_t(d.recv.count) * size_t(p), &offset)) {
    char* at = static_cast<char*>(const_cast<void*>(d.recv.buf)) + offset;
    const char* mine = at + size_t(me) * block;
    bool ok = true;
    if (!in_place) {
      const Piece own = pieces(d.send, 1)[0];
      ok = type_packed_size(own.type, own.count) == block && type_is_contiguous(own.type, own.count, &send_offset);
      mine = static_cast<const char*>(d.send.buf) + send_offset;
    }
    if (ok && device({mine, at}, nullptr, block * size_t(p))) {
      a.send = mine;
      a.recv = at;
      a.own_bytes = block;
      a.bytes = block * size_t(p);
      a.blocking = mode_ == Mode::blocking;
      for (int q = 0; q < p; ++q) a.recv_blocks.push_back(Block{size_t(q) * block, block});
      return plan(a, key);
    }
  }
  a.recv = output(out, &a.recv_blocks, in_place ? me : -1);
  if (in_place) {
    a.send = static_cast<char*>(a.recv) + a.recv_blocks[size_t(me)].offset;
  } else {
    std::vector<Block> blocks;
    a.send = input(pieces(d.send, 1), &blocks) + blocks[0].offset;
  }
  a.own_bytes = a.recv_blocks[size_t(me)].bytes;
  a.bytes = total_bytes(a.recv_blocks);
  return plan(a, key);
}

// Alltoall, Alltoallv, Alltoallw; in place, the input is read from a copy of the receive buffer.
Status Call::plan_alltoall(const Description& d, const PlanKey* key) {
  const int p = ctx_.comm.size;
  CollArgs a{Collective::alltoall};
  a.uniform = !d.recv.per_rank;
  const std::vector<Piece> out = pieces(d.recv, p);
  a.send = input(d.send.in_place ? out : pieces(d.send, p), &a.send_blocks, d.send.in_place);
  a.recv = output(out, &a.recv_blocks);
  a.bytes = total_bytes(a.send_blocks);
  return plan(a, key);
}

// Neighbor_allgather(v) and Neighbor_alltoall(v,w).
Status Call::plan_neighbor(const Description& d) {
  CollArgs a{d.kind};
  a.uniform = !d.recv.per_rank;
  a.sources = d.sources;
  a.destinations = d.destinations;
  a.cartesian = d.cartesian;
  a.recv = output(pieces(d.recv, int(a.sources.size())), &a.recv_blocks);
  if (d.kind == Collective::neighbor_allgather) {
    std::vector<Block> one;
    a.send = input(pieces(d.send, 1), &one);
    a.send_blocks.assign(a.destinations.size(), one[0]);
  } else {
    a.send = input(pieces(d.send, int(a.destinations.size())), &a.send_blocks);
  }
  a.bytes = total_bytes(a.send_blocks) + total_bytes(a.recv_blocks);
  return plan(a);
}

Status Call::plan_bcast(const Description& d, const PlanKey* key) {
  const Side& s = d.recv;
  const size_t count = size_t(s.count);
  CollArgs a{Collective::bcast};
  a.root = d.root;
  ptrdiff_t offset = 0;
  if (ctx_.comm.size > 1 && count > 0 && type_packed_size(s.type, count) &&
      type_is_contiguous(s.type, count, &offset)) {
    char* at = static_cast<char*>(const_cast<void*>(s.buf)) + offset;
    const size_t bytes = type_packed_size(s.type, count);
    if (device({at}, nullptr, bytes)) {
      a.recv = at;
      a.bytes = bytes;
      a.blocking = mode_ == Mode::blocking;
      return plan(a, key);
    }
  }
  std::vector<Block> blocks;
  const std::vector<Piece> piece{{s.buf, count, s.type}};
  char* base = ctx_.comm.rank == d.root ? input(piece, &blocks) : output(piece, &blocks);
  a.recv = base + blocks[0].offset;
  a.bytes = blocks[0].bytes;
  if (ctx_.comm.size > 1 && a.bytes) return plan(a, key);
  plan_nothing(key);
  return error();
}

Status Call::plan_reduce(const Description& d, const PlanKey* key) {
  const bool is_root = ctx_.comm.rank == d.root, in_place = d.send.in_place;
  const size_t count = size_t(d.recv.count);
  const Datatype* type = d.recv.type;
  const void* sendbuf = in_place ? d.recv.buf : d.send.buf;
  void* recvbuf = const_cast<void*>(d.recv.buf);
  ptrdiff_t offset = 0;
  if (ctx_.comm.size > 1 && !d.red.user && type->predefined && type_is_contiguous(type, count, &offset)) {
    const char* gin = static_cast<const char*>(sendbuf) + offset;
    char* gout = is_root ? static_cast<char*>(recvbuf) + offset : nullptr;
    const size_t bytes = d.reduce_count * d.red.elem_size;
    if (is_root ? device({gin, gout}, &d.red, bytes) : device({gin}, &d.red, bytes)) {
      CollArgs a = reduction_args(d, gin, is_root ? gout : const_cast<char*>(gin));
      a.root = d.root;
      a.blocking = mode_ == Mode::blocking;
      return plan(a, key);
    }
  }
  std::vector<Block> in_blocks, out_blocks;
  const Piece result{recvbuf, count, type};
  const char* in;
  char* out = nullptr;
  if (in_place) {
    out = output({result}, &out_blocks, 0) + out_blocks[0].offset;
    in = out;
  } else {
    in = input({Piece{sendbuf, count, type}}, &in_blocks) + in_blocks[0].offset;
    if (is_root) out = output({result}, &out_blocks) + out_blocks[0].offset;
  }
  CollArgs a = reduction_args(d, in, is_root ? out : const_cast<char*>(in));
  a.root = d.root;
  return plan(a, key);
}

// Allreduce, Scan, Exscan: `count` elements in, `count` elements out at every rank.
Status Call::plan_vector_reduction(const Description& d, const PlanKey* key) {
  const bool in_place = d.send.in_place;
  const size_t count = size_t(d.recv.count);
  const Datatype* type = d.recv.type;
  const void* sendbuf = in_place ? d.recv.buf : d.send.buf;
  void* recvbuf = const_cast<void*>(d.recv.buf);
  ptrdiff_t offset = 0;
  if (d.kind == Collective::allreduce && ctx_.comm.size > 1 && !d.red.user && type->predefined &&
      type_is_contiguous(type, count, &offset)) {
    const char* gin = static_cast<const char*>(sendbuf) + offset;
    char* gout = static_cast<char*>(recvbuf) + offset;
    if (device({gin, gout}, &d.red, d.reduce_count * d.red.elem_size)) {
      CollArgs a = reduction_args(d, gin, gout);
      a.blocking = mode_ == Mode::blocking;
      return plan(a, key);
    }
  }
  std::vector<Block> in_blocks, out_blocks;
  char* out = output({Piece{recvbuf, count, type}}, &out_blocks, in_place ? 0 : -1) + out_blocks[0].offset;
  const char* in = in_place ? out : input({Piece{sendbuf, count, type}}, &in_blocks) + in_blocks[0].offset;
  return plan(reduction_args(d, in, out), key);
}

// Reduce_scatter (recv.per_rank) and Reduce_scatter_block: d.counts elements land at each rank.
Status Call::plan_reduce_scatter(const Description& d) {
  const int p = ctx_.comm.size;
  const bool in_place = d.send.in_place;
  const Datatype* type = d.recv.type;
  const size_t total = std::accumulate(d.counts.begin(), d.counts.end(), size_t(0));
  const size_t mine = d.counts[size_t(ctx_.comm.rank)];
  const size_t per_element = total ? d.reduce_count / total : 0;
  const void* sendbuf = in_place ? d.recv.buf : d.send.buf;
  void* recvbuf = const_cast<void*>(d.recv.buf);
  std::vector<size_t> counts = d.counts;
  for (size_t& n : counts) n *= per_element;
  ptrdiff_t in_offset = 0, out_offset = 0;
  if (p > 1 && !d.red.user && type->predefined && type_is_contiguous(type, total, &in_offset) &&
      type_is_contiguous(type, mine, &out_offset)) {
    const char* gin = static_cast<const char*>(sendbuf) + in_offset;
    // A rank with no share may pass any receive buffer (NULL too): it decides on its input alone,
    // so that every rank decides alike.
    char* gout = mine ? static_cast<char*>(recvbuf) + out_offset : const_cast<char*>(gin);
    const size_t unit = per_element * d.red.elem_size;  // bytes of one datatype element
    if (mine ? device({gin, gout}, &d.red, total * unit) : device({gin}, &d.red, total * unit)) {
      CollArgs a = reduction_args(d, gin, gout);
      a.uniform = !d.recv.per_rank;
      a.blocking = mode_ == Mode::blocking;
      a.counts = std::move(counts);
      return plan(a);
    }
  }
  std::vector<Block> in_blocks, out_blocks;
  const char* in = input({Piece{sendbuf, total, type}}, &in_blocks) + in_blocks[0].offset;
  char* out = output({Piece{recvbuf, mine, type}}, &out_blocks) + out_blocks[0].offset;
  CollArgs a = reduction_args(d, in, out);
  a.uniform = !d.recv.per_rank;
  a.counts = std::move(counts);
  return plan(a);
}

// A call on an intercommunicator: blocks per remote rank; in a rooted call, the root's side at
// the root (kRootHere), the other side in the other group (root >= 0), nothing elsewhere in the
// root's group. In place is not defined on intercommunicators (the bindings refuse it).
Status Call::plan_inter(const Description& d) {
  const int p = ctx_.comm.peer_count();
  const bool here = d.root == kRootHere, other = d.root >= 0;
  CollArgs a{d.kind};
  a.root = d.root;
  a.uniform = !d.send.per_rank && !d.recv.per_rank;
  std::vector<Block> one;
  auto own_input = [&](const Side& s) {
    a.send = input(pieces(s, 1), &one) + one[0].offset;
    a.own_bytes = one[0].bytes;
  };
  switch (d.kind) {
    case Collective::barrier: break;
    case Collective::bcast:
      if (here || other) {
        const std::vector<Piece> piece{{d.recv.buf, size_t(d.recv.count), d.recv.type}};
        a.recv = (here ? input(piece, &one) : output(piece, &one)) + one[0].offset;
        a.bytes = one[0].bytes;
      }
      break;
    case Collective::gather:
      if (here) a.recv = output(pieces(d.recv, p), &a.recv_blocks);
      else if (other) own_input(d.send);
      break;
    case Collective::scatter:
      if (here) {
        a.send = input(pieces(d.send, p), &a.send_blocks);
      } else if (other) {
        a.recv = output(pieces(d.recv, 1), &one) + one[0].offset;
        a.own_bytes = one[0].bytes;
      }
      break;
    case Collective::allgather:
      own_input(d.send);
      a.recv = output(pieces(d.recv, p), &a.recv_blocks);
      break;
    case Collective::alltoall:
      a.send = input(pieces(d.send, p), &a.send_blocks);
      a.recv = output(pieces(d.recv, p), &a.recv_blocks);
      break;
    case Collective::reduce:
    case Collective::allreduce: {
      const size_t count = size_t(d.recv.count);
      const bool gives = d.kind == Collective::allreduce || other, takes = d.kind == Collective::allreduce || here;
      const char* in = gives ? input({Piece{d.send.buf, count, d.recv.type}}, &one) + one[0].offset : nullptr;
      std::vector<Block> out_blocks;
      char* out = takes ? output({Piece{d.recv.buf, count, d.recv.type}}, &out_blocks) + out_blocks[0].offset : nullptr;
      a = reduction_args(d, in, out);
      a.root = d.root;
      break;
    }
    case Collective::reduce_scatter: {
      const size_t total = std::accumulate(d.counts.begin(), d.counts.end(), size_t(0));
      const size_t per_element = total ? d.reduce_count / total : 0;
      const char* in = input({Piece{d.send.buf, total, d.recv.type}}, &one) + one[0].offset;
      std::vector<Block> out_blocks;
      char* out = output({Piece{d.recv.buf, d.counts[size_t(ctx_.comm.rank)], d.recv.type}}, &out_blocks) +
                  out_blocks[0].offset;
      a = reduction_args(d, in, out);
      for (size_t n : d.counts) a.counts.push_back(n * per_element);
      break;
    }
    default:
      break;  // plan_inter (inter.h) says which are not defined
  }
  return plan(a);
}

}  // namespace weft::coll
