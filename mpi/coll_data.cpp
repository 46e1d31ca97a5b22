// Collective bindings, part 2: the collectives that move data without reducing it: Gather(v),
// Scatter(v), Allgather(v), Alltoall(v,w) and the neighbourhood collectives, each blocking,
// non-blocking and persistent from one planning function (see coll_call.h).
#include <climits>
#include <initializer_list>
#include <numeric>

#include "coll_call.h"
#include "datatype_api.h"

namespace weft::mpi {

namespace {

using coll::Block;
using coll::Collective;

// How one side of a call is given: one count for every rank, or counts and displacements in
// elements (v forms), or counts, byte displacements and one type per rank (w forms).
struct SideSpec {
  const void* buf = nullptr;
  int count = 0;
  const int* counts = nullptr;
  const int* displs = nullptr;      // in extents of `type`
  const MPI_Aint* byte_displs = nullptr;
  const int* int_byte_displs = nullptr;  // Alltoallw: int byte displacements
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const MPI_Datatype* types = nullptr;
  const char* what = "send";        // "send" or "recv", for messages
  bool per_rank = false;            // a v or w form (its arrays may be NULL where not significant)
  bool per_rank_types = false;      // a w form: one datatype per rank
};

// The pieces of n blocks described by spec, validated.
int pieces_of(const char* fn, MPI_Comm comm, const SideSpec& s, int n, std::vector<Piece>* out) {
  out->assign(size_t(n), Piece{});
  if (!s.per_rank && s.count < 0)
    return raise(comm, MPI_ERR_COUNT, fn, "negative %scount %d", s.what, s.count);
  if (s.per_rank && n > 0) {
    if (!s.counts) return raise(comm, MPI_ERR_ARG, fn, "%scounts is NULL", s.what);
    if (!s.displs && !s.byte_displs && !s.int_byte_displs)
      return raise(comm, MPI_ERR_ARG, fn, "%s displacements are NULL", s.what);
    if (s.per_rank_types && !s.types) return raise(comm, MPI_ERR_TYPE, fn, "%stypes is NULL", s.what);
  }
  const Datatype* common = nullptr;
  if (!s.types) {
    int rc = check_datatype(comm, fn, s.type, &common, s.what[0] == 's' ? "sendtype" : "recvtype");
    if (rc != MPI_SUCCESS) return rc;
  }
  for (int r = 0; r < n; ++r) {
    Piece& p = (*out)[size_t(r)];
    const int count = s.per_rank ? s.counts[r] : s.count;
    if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative %scount %d for rank %d", s.what, count, r);
    const Datatype* d = common;
    if (s.types) {
      int rc = check_datatype(comm, fn, s.types[r], &d, s.what[0] == 's' ? "sendtypes" : "recvtypes");
      if (rc != MPI_SUCCESS) return rc;
    }
    ptrdiff_t at;
    if (s.byte_displs) at = ptrdiff_t(s.byte_displs[r]);
    else if (s.int_byte_displs) at = ptrdiff_t(s.int_byte_displs[r]);
    else if (s.displs) at = ptrdiff_t(s.displs[r]) * d->extent;
    else at = ptrdiff_t(r) * ptrdiff_t(count) * d->extent;
    p = Piece{static_cast<const char*>(s.buf) + at, size_t(count), d};
    if (count && !s.buf && d->predefined && packed_size(d, size_t(count)))
      return raise(comm, MPI_ERR_BUFFER, fn, "NULL %sbuf with a non-zero count", s.what);
  }
  return MPI_SUCCESS;
}

size_t total_bytes(const std::vector<Block>& blocks) {
  size_t n = 0;
  for (const Block& b : blocks) n += b.bytes;
  return n;
}

// The cache key of a call whose both sides are uniform (v and w forms are not cached).
bool plan_key(Collective kind, const SideSpec& send, const SideSpec& recv, int root, CollPlanKey* key) {
  if (send.per_rank || recv.per_rank) return false;
  *key = CollPlanKey{int(kind), send.buf, recv.buf, send.count, recv.count, lookup_datatype(send.type),
                     lookup_datatype(recv.type), MPI_OP_NULL, root};
  return true;
}

int start_call(const char* fn, CollMode mode, MPI_Comm comm, MPI_Request* request, Comm** c) {
  int rc = check_coll_comm(fn, comm, c);
  if (rc == MPI_SUCCESS) rc = check_coll_request(fn, comm, mode, request);
  return rc;
}

// Gather(v) (kind gather) and Scatter(v) (kind scatter): the root's side has a block per rank
// (the receive side of a gather, the send side of a scatter; v forms: counts set), the other
// side one block at every rank (MPI_IN_PLACE at the root: its block of the root's side).
int rooted_call(const char* fn, CollMode mode, Collective kind, const SideSpec& send, const SideSpec& recv,
                int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = start_call(fn, mode, comm, request, &c);
  if (rc == MPI_SUCCESS) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  const bool gather = kind == Collective::gather;
  const SideSpec& all = gather ? recv : send;
  const SideSpec& own = gather ? send : recv;
  const int p = c->size;
  const bool is_root = c->rank == root, in_place = own.buf == MPI_IN_PLACE;
  if (in_place && !is_root) return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
  CollCall call(fn, comm, c, mode);
  CollPlanKey key;
  const bool cacheable = plan_key(kind, send, recv, root, &key);
  if (cacheable && call.reused(key, request, &rc)) return rc;
  coll::CollArgs a{kind};
  a.root = root;
  a.uniform = !all.per_rank;
  std::vector<Block>& blocks = gather ? a.recv_blocks : a.send_blocks;
  char* base = nullptr;
  if (is_root) {
    std::vector<Piece> pieces;
    if ((rc = pieces_of(fn, comm, all, p, &pieces)) != MPI_SUCCESS) return rc;
    base = gather ? call.output(pieces, &blocks, in_place ? root : -1) : call.input(pieces, &blocks);
  }
  char* mine;
  if (in_place) {
    mine = base + blocks[size_t(root)].offset;
    a.own_bytes = blocks[size_t(root)].bytes;
  } else {
    std::vector<Piece> piece;
    std::vector<Block> block;
    if ((rc = pieces_of(fn, comm, own, 1, &piece)) != MPI_SUCCESS) return rc;
    mine = (gather ? call.input(piece, &block) : call.output(piece, &block)) + block[0].offset;
    a.own_bytes = block[0].bytes;
  }
  a.send = gather ? mine : base;
  a.recv = gather ? base : mine;
  a.bytes = a.uniform ? a.own_bytes * size_t(p) : (is_root ? total_bytes(blocks) : a.own_bytes);
  return call.run(a, request, cacheable ? &key : nullptr);
}

// Allgather and Allgatherv (recv.counts set).
int allgather_call(const char* fn, CollMode mode, const SideSpec& send, const SideSpec& recv,
                   MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = start_call(fn, mode, comm, request, &c);
  if (rc != MPI_SUCCESS) return rc;
  const int p = c->size, me = c->rank;
  const bool in_place = send.buf == MPI_IN_PLACE;
  CollCall call(fn, comm, c, mode);
  CollPlanKey key;
  const bool cacheable = plan_key(Collective::allgather, send, recv, 0, &key);
  if (cacheable && call.reused(key, request, &rc)) return rc;
  coll::CollArgs a{Collective::allgather};
  a.uniform = !recv.per_rank;
  std::vector<Piece> pieces;
  if ((rc = pieces_of(fn, comm, recv, p, &pieces)) != MPI_SUCCESS) return rc;
  // GPU-native (MPI_Allgather, MPI_Iallgather, MPI_Allgather_init): the p blocks one run of
  // bytes, back to back.
  ptrdiff_t offset = 0, send_offset = 0;
  const Datatype* rtype = pieces[0].type;
  const size_t block = packed_size(rtype, size_t(recv.count));
  if (a.uniform && !send.per_rank && p > 1 && block &&
      contiguous_span(rtype, size_t(recv.count) * size_t(p), &offset)) {
    char* at = static_cast<char*>(const_cast<void*>(recv.buf)) + offset;
    const char* mine = at + size_t(me) * block;
    bool ok = true;
    if (!in_place) {
      std::vector<Piece> own;
      if ((rc = pieces_of(fn, comm, send, 1, &own)) != MPI_SUCCESS) return rc;
      ok = packed_size(own[0].type, own[0].count) == block && contiguous_span(own[0].type, own[0].count, &send_offset);
      mine = static_cast<const char*>(send.buf) + send_offset;
    }
    if (ok && call.device({mine, at}, nullptr, block * size_t(p))) {
      a.send = mine;
      a.recv = at;
      a.own_bytes = block;
      a.bytes = block * size_t(p);
      a.blocking = mode == CollMode::blocking;
      for (int q = 0; q < p; ++q) a.recv_blocks.push_back(Block{size_t(q) * block, block});
      return call.run(a, request, cacheable ? &key : nullptr);
    }
  }
  a.recv = call.output(pieces, &a.recv_blocks, in_place ? me : -1);
  if (in_place) {
    a.send = static_cast<char*>(a.recv) + a.recv_blocks[size_t(me)].offset;
  } else {
    std::vector<Piece> mine;
    std::vector<Block> blocks;
    if ((rc = pieces_of(fn, comm, send, 1, &mine)) != MPI_SUCCESS) return rc;
    if (packed_size(mine[0].type, mine[0].count) != a.recv_blocks[size_t(me)].bytes)
      return raise(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends %zu bytes but its receive block holds %zu", me,
                   packed_size(mine[0].type, mine[0].count), a.recv_blocks[size_t(me)].bytes);
    a.send = call.input(mine, &blocks) + blocks[0].offset;
  }
  a.own_bytes = a.recv_blocks[size_t(me)].bytes;
  a.bytes = total_bytes(a.recv_blocks);
  return call.run(a, request, cacheable ? &key : nullptr);
}

// Alltoall, Alltoallv, Alltoallw.
int alltoall_call(const char* fn, CollMode mode, const SideSpec& send, const SideSpec& recv,
                  MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = start_call(fn, mode, comm, request, &c);
  if (rc != MPI_SUCCESS) return rc;
  const int p = c->size;
  const bool in_place = send.buf == MPI_IN_PLACE;
  CollCall call(fn, comm, c, mode);
  CollPlanKey key;
  const bool cacheable = plan_key(Collective::alltoall, send, recv, 0, &key);
  if (cacheable && call.reused(key, request, &rc)) return rc;
  coll::CollArgs a{Collective::alltoall};
  a.uniform = !recv.per_rank;
  std::vector<Piece> out, in;
  if ((rc = pieces_of(fn, comm, recv, p, &out)) != MPI_SUCCESS) return rc;
  if (in_place) {
    in = out;  // the input is read from a copy of the receive buffer
  } else if ((rc = pieces_of(fn, comm, send, p, &in)) != MPI_SUCCESS) {
    return rc;
  }
  a.send = call.input(in, &a.send_blocks, in_place);
  a.recv = call.output(out, &a.recv_blocks);
  a.bytes = total_bytes(a.send_blocks);
  return call.run(a, request, cacheable ? &key : nullptr);
}

// The neighbours of this rank in comm's topology; -1 for MPI_PROC_NULL.
int neighbours(const char* fn, MPI_Comm comm, const Comm& c, std::vector<int>* sources,
               std::vector<int>* dests, bool* cartesian) {
  CommEntry* e = lookup_comm_entry(comm);
  if (!e->topo) return raise(comm, MPI_ERR_TOPOLOGY, fn, "the communicator has no process topology");
  const Topology& t = *e->topo;
  *cartesian = t.kind == MPI_CART;
  sources->clear();
  dests->clear();
  if (t.kind == MPI_CART) {
    for (int d = 0; d < int(t.dims.size()); ++d) {
      int minus, plus;
      int rc = PMPI_Cart_shift(comm, d, 1, &minus, &plus);
      if (rc != MPI_SUCCESS) return rc;
      for (int r : {minus, plus}) {
        sources->push_back(r == MPI_PROC_NULL ? -1 : r);
        dests->push_back(r == MPI_PROC_NULL ? -1 : r);
      }
    }
  } else if (t.kind == MPI_GRAPH) {
    const int begin = c.rank ? t.index[size_t(c.rank) - 1] : 0, end = t.index[size_t(c.rank)];
    sources->assign(t.edges.begin() + begin, t.edges.begin() + end);
    *dests = *sources;
  } else {
    *sources = t.sources;
    *dests = t.dests;
  }
  return MPI_SUCCESS;
}

// Neighbor_allgather(v) (kind neighbor_allgather) and Neighbor_alltoall(v,w).
int neighbor_call(const char* fn, CollMode mode, Collective kind, const SideSpec& send,
                  const SideSpec& recv, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  int rc = start_call(fn, mode, comm, request, &c);
  if (rc != MPI_SUCCESS) return rc;
  if (send.buf == MPI_IN_PLACE || recv.buf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid in neighbourhood collectives");
  CollCall call(fn, comm, c, mode);
  coll::CollArgs a{kind};
  a.uniform = !recv.per_rank;
  if ((rc = neighbours(fn, comm, *c, &a.sources, &a.destinations, &a.cartesian)) != MPI_SUCCESS) return rc;
  std::vector<Piece> out, in;
  if ((rc = pieces_of(fn, comm, recv, int(a.sources.size()), &out)) != MPI_SUCCESS) return rc;
  a.recv = call.output(out, &a.recv_blocks);
  if (kind == Collective::neighbor_allgather) {
    std::vector<Block> one;
    if ((rc = pieces_of(fn, comm, send, 1, &in)) != MPI_SUCCESS) return rc;
    a.send = call.input(in, &one);
    a.send_blocks.assign(a.destinations.size(), one[0]);
  } else {
    if ((rc = pieces_of(fn, comm, send, int(a.destinations.size()), &in)) != MPI_SUCCESS) return rc;
    a.send = call.input(in, &a.send_blocks);
  }
  a.bytes = total_bytes(a.send_blocks) + total_bytes(a.recv_blocks);
  return call.run(a, request);
}

SideSpec uniform_side(const void* buf, int count, MPI_Datatype type, const char* what) {
  return SideSpec{.buf = buf, .count = count, .type = type, .what = what};
}

SideSpec v_side(const void* buf, const int* counts, const int* displs, MPI_Datatype type, const char* what) {
  return SideSpec{.buf = buf, .counts = counts, .displs = displs, .type = type, .what = what, .per_rank = true};
}

SideSpec w_side(const void* buf, const int* counts, const int* int_displs, const MPI_Aint* aint_displs,
                const MPI_Datatype* types, const char* what) {
  return SideSpec{.buf = buf, .counts = counts, .byte_displs = aint_displs, .int_byte_displs = int_displs,
                  .types = types, .what = what, .per_rank = true, .per_rank_types = true};
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;
using weft::coll::Collective;

// The two sides of the uniform, v and w forms, as the bindings give them.
#define WEFT_SEND_U uniform_side(sendbuf, sendcount, sendtype, "send")
#define WEFT_RECV_U uniform_side(recvbuf, recvcount, recvtype, "recv")
#define WEFT_SEND_V v_side(sendbuf, sendcounts, sdispls, sendtype, "send")
#define WEFT_RECV_V v_side(recvbuf, recvcounts, rdispls, recvtype, "recv")
#define WEFT_PARAMS_U \
  (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, \
   MPI_Comm comm)
#define WEFT_PARAMS_UV                                                                                      \
  (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],     \
   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define WEFT_PARAMS_V                                                                                       \
  (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,  \
   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define WEFT_PARAMS_W(displ)                                                                                    \
  (const void* sendbuf, const int sendcounts[], const displ sdispls[], const MPI_Datatype sendtypes[],          \
   void* recvbuf, const int recvcounts[], const displ rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)

// Gather(v), Scatter(v)
WEFT_COLL_FORMS(Gather, Igather,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm),
                rooted_call, (Collective::gather, WEFT_SEND_U, WEFT_RECV_U, root, comm))
WEFT_COLL_FORMS(Gatherv, Igatherv,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int rdispls[], MPI_Datatype recvtype, int root, MPI_Comm comm),
                rooted_call, (Collective::gather, WEFT_SEND_U, WEFT_RECV_V, root, comm))
WEFT_COLL_FORMS(Scatter, Iscatter,
                (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm),
                rooted_call, (Collective::scatter, WEFT_SEND_U, WEFT_RECV_U, root, comm))
WEFT_COLL_FORMS(Scatterv, Iscatterv,
                (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
                rooted_call, (Collective::scatter, WEFT_SEND_V, WEFT_RECV_U, root, comm))

// Allgather(v), Alltoall(v,w)
WEFT_COLL_FORMS(Allgather, Iallgather, WEFT_PARAMS_U, allgather_call, (WEFT_SEND_U, WEFT_RECV_U, comm))
WEFT_COLL_FORMS(Allgatherv, Iallgatherv, WEFT_PARAMS_UV, allgather_call, (WEFT_SEND_U, WEFT_RECV_V, comm))
WEFT_COLL_FORMS(Alltoall, Ialltoall, WEFT_PARAMS_U, alltoall_call, (WEFT_SEND_U, WEFT_RECV_U, comm))
WEFT_COLL_FORMS(Alltoallv, Ialltoallv, WEFT_PARAMS_V, alltoall_call, (WEFT_SEND_V, WEFT_RECV_V, comm))
WEFT_COLL_FORMS(Alltoallw, Ialltoallw, WEFT_PARAMS_W(int), alltoall_call,
                (w_side(sendbuf, sendcounts, sdispls, nullptr, sendtypes, "send"),
                 w_side(recvbuf, recvcounts, rdispls, nullptr, recvtypes, "recv"), comm))

// Neighbourhood collectives
WEFT_COLL_FORMS(Neighbor_allgather, Ineighbor_allgather, WEFT_PARAMS_U, neighbor_call,
                (Collective::neighbor_allgather, WEFT_SEND_U, WEFT_RECV_U, comm))
WEFT_COLL_FORMS(Neighbor_allgatherv, Ineighbor_allgatherv, WEFT_PARAMS_UV, neighbor_call,
                (Collective::neighbor_allgather, WEFT_SEND_U, WEFT_RECV_V, comm))
WEFT_COLL_FORMS(Neighbor_alltoall, Ineighbor_alltoall, WEFT_PARAMS_U, neighbor_call,
                (Collective::neighbor_alltoall, WEFT_SEND_U, WEFT_RECV_U, comm))
WEFT_COLL_FORMS(Neighbor_alltoallv, Ineighbor_alltoallv, WEFT_PARAMS_V, neighbor_call,
                (Collective::neighbor_alltoall, WEFT_SEND_V, WEFT_RECV_V, comm))
WEFT_COLL_FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, WEFT_PARAMS_W(MPI_Aint), neighbor_call,
                (Collective::neighbor_alltoall, w_side(sendbuf, sendcounts, nullptr, sdispls, sendtypes, "send"),
                 w_side(recvbuf, recvcounts, nullptr, rdispls, recvtypes, "recv"), comm))

#undef WEFT_SEND_U
#undef WEFT_RECV_U
#undef WEFT_SEND_V
#undef WEFT_RECV_V
#undef WEFT_PARAMS_U
#undef WEFT_PARAMS_UV
#undef WEFT_PARAMS_V
#undef WEFT_PARAMS_W
