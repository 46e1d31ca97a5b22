// Collective bindings, part 2: the collectives that move data without reducing it: Gather(v),
// Scatter(v), Allgather(v), Alltoall(v,w) and the neighbourhood collectives, each blocking,
// non-blocking and persistent from one planning function (see coll_call.h).
#include "coll_call.h"
#include "runtime/typemap.h"

namespace weft::mpi {

namespace {

using coll::Collective;

// How one side of a call is given: one count for every rank, or counts and displacements in
// elements (v forms), or counts, byte displacements and one type per rank (w forms).
struct SideSpec {
  const void* buf = nullptr;
  MPI_Count count = 0;
  Counts counts{};
  Displs displs{};                  // in extents of `type`
  const MPI_Aint* byte_displs = nullptr;
  const int* int_byte_displs = nullptr;  // Alltoallw: int byte displacements
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const MPI_Datatype* types = nullptr;
  const char* what = "send";        // "send" or "recv", for messages
  bool per_rank = false;            // a v or w form (its arrays may be NULL where not significant)
  bool per_rank_types = false;      // a w form: one datatype per rank
  // The counts of a large-count form as coll takes them (int), while the call is planned.
  mutable std::vector<int> narrowed{};
};

// Side s of a call as coll takes it, checked for n blocks (n < 0: not used at this rank, not
// checked; its buffer, count and datatype still key the plan).
int side_of(const char* fn, MPI_Comm comm, const SideSpec& s, int n, coll::Side* out) {
  *out = coll::Side{.buf = s.buf, .in_place = s.buf == MPI_IN_PLACE, .count = s.count,
                    .type = lookup_datatype(s.type), .per_rank = s.per_rank, .counts = s.counts.narrow,
                    .displs = s.displs.narrow};
  if (n < 0) return MPI_SUCCESS;
  if (!s.per_rank && s.count < 0)
    return raise(comm, MPI_ERR_COUNT, fn, "negative %scount %ld", s.what, long(s.count));
  if (!s.per_rank && s.count > INT32_MAX) return check_count(fn, comm, s.count, s.what[0] == 's' ? "sendcount" : "recvcount");
  if (s.per_rank && n > 0) {
    if (!s.counts) return raise(comm, MPI_ERR_ARG, fn, "%scounts is NULL", s.what);
    if (!s.displs && !s.byte_displs && !s.int_byte_displs)
      return raise(comm, MPI_ERR_ARG, fn, "%s displacements are NULL", s.what);
    if (s.per_rank_types && !s.types) return raise(comm, MPI_ERR_TYPE, fn, "%stypes is NULL", s.what);
  }
  if (!s.types) {
    int rc = check_datatype(comm, fn, s.type, &out->type, s.what[0] == 's' ? "sendtype" : "recvtype");
    if (rc != MPI_SUCCESS) return rc;
  }
  for (int r = 0; r < n; ++r) {
    const MPI_Count count = s.per_rank ? s.counts[size_t(r)] : s.count;
    if (count < 0) return raise(comm, MPI_ERR_COUNT, fn, "negative %scount %ld for rank %d", s.what, long(count), r);
    if (count > INT32_MAX) return check_count(fn, comm, count, s.what[0] == 's' ? "sendcounts" : "recvcounts");
    if (s.counts.wide) s.narrowed.push_back(int(count));
    const Datatype* d = out->type;
    if (s.types) {
      int rc = check_datatype(comm, fn, s.types[r], &d, s.what[0] == 's' ? "sendtypes" : "recvtypes");
      if (rc != MPI_SUCCESS) return rc;
      out->types.push_back(d);
    }
    if (s.byte_displs) out->byte_displs.push_back(ptrdiff_t(s.byte_displs[r]));
    if (s.int_byte_displs) out->byte_displs.push_back(ptrdiff_t(s.int_byte_displs[r]));
    if (s.displs.wide) out->byte_displs.push_back(ptrdiff_t(s.displs.wide[r]) * d->extent);
    // MPI_BOTTOM (NULL) with a byte displacement is an absolute address (w forms).
    const bool absolute = (s.byte_displs || s.int_byte_displs) && out->byte_displs.back() != 0;
    if (count && !s.buf && !absolute && d->predefined && type_packed_size(d, size_t(count)))
      return raise(comm, MPI_ERR_BUFFER, fn, "NULL %sbuf with a non-zero count", s.what);
  }
  if (s.counts.wide) out->counts = s.narrowed.data();
  return MPI_SUCCESS;
}

// Whether side s carries data at this rank (n blocks; n < 0: not used here).
bool carries_data(const SideSpec& s, int n) {
  if (n <= 0 || !s.buf || s.buf == MPI_IN_PLACE) return false;
  if (!s.per_rank) return s.count > 0;
  if (!s.counts) return false;
  for (int r = 0; r < n; ++r)
    if (s.counts[size_t(r)] > 0) return true;
  return false;
}

// Where rank `me`'s block of side s starts (a side with a block per rank, not a w form), or null.
const void* own_block(const SideSpec& s, const Datatype* type, int me) {
  if (!s.buf || s.buf == MPI_IN_PLACE || s.types || s.byte_displs || s.int_byte_displs || !type) return nullptr;
  const MPI_Count first = s.per_rank ? (s.displs ? s.displs[size_t(me)] : 0) : MPI_Count(me) * s.count;
  return static_cast<const char*>(s.buf) + first * type->extent;
}

// Gather(v), Scatter(v) (at root), Allgather(v) and Alltoall(v,w). The root's side of a rooted
// call has a block per rank (the receive side of a gather, the send side of a scatter; v forms:
// counts set), the other side one block at every rank (MPI_IN_PLACE at the root: its block of
// the root's side); allgather receives a block per rank, alltoall sends and receives one.
int data_call(const char* fn, CollMode mode, Collective kind, const SideSpec& send, const SideSpec& recv,
              int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  const bool rooted = kind == Collective::gather || kind == Collective::scatter;
  int rc = check_coll_call(fn, comm, mode, request, &c);
  if (rc == MPI_SUCCESS && rooted) rc = check_root(fn, comm, *c, root);
  if (rc != MPI_SUCCESS) return rc;
  // On an intercommunicator, blocks are per remote rank, and a rooted call's root is MPI_ROOT
  // at the root, MPI_PROC_NULL in the rest of its group (which takes no part).
  const int p = c->peer_count(), me = c->rank;
  const bool is_root = c->inter ? root == MPI_ROOT : me == root, scatter = kind == Collective::scatter;
  const bool idle = c->inter && rooted && root == MPI_PROC_NULL;
  if (c->inter && (send.buf == MPI_IN_PLACE || recv.buf == MPI_IN_PLACE))
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid on an intercommunicator");
  if (rooted && (scatter ? recv : send).buf == MPI_IN_PLACE && !is_root)
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is only valid at the root");
  // The blocks each side has at this rank; the root's side of a rooted call is checked first.
  const int all = rooted && !is_root ? -1 : p;
  const int own = idle || (c->inter && is_root) ? -1 : 1;
  int send_blocks = kind == Collective::alltoall || scatter ? all : own;
  int recv_blocks = kind == Collective::gather || kind == Collective::allgather ? all : scatter ? own : p;
  if (scatter && recv.buf == MPI_IN_PLACE) recv_blocks = -1;
  if (!scatter && send.buf == MPI_IN_PLACE) send_blocks = -1;
  // The same buffer on both sides without MPI_IN_PLACE: refused here, before any peer waits.
  if (send.buf == recv.buf && carries_data(send, send_blocks) && carries_data(recv, recv_blocks))
    return raise(comm, MPI_ERR_BUFFER, fn, "sendbuf and recvbuf are the same buffer (MPI_IN_PLACE is the way to say so)");
  coll::Description d{kind};
  d.root = rooted ? coll_root(*c, root) : 0;
  if (scatter) rc = side_of(fn, comm, send, send_blocks, &d.send);
  if (rc == MPI_SUCCESS) rc = side_of(fn, comm, recv, recv_blocks, &d.recv);
  if (rc == MPI_SUCCESS && !scatter) rc = side_of(fn, comm, send, send_blocks, &d.send);
  if (rc != MPI_SUCCESS) return rc;
  // This rank's own block of the side with a block per rank given as the other side's buffer,
  // without MPI_IN_PLACE (every rank of an allgather finds it, so none of them waits).
  if (!c->inter && (kind == Collective::allgather || (rooted && is_root))) {
    const SideSpec& whole = scatter ? send : recv;
    const SideSpec& one = scatter ? recv : send;
    const coll::Side& whole_side = scatter ? d.send : d.recv;
    const int one_blocks = scatter ? recv_blocks : send_blocks, whole_blocks = scatter ? send_blocks : recv_blocks;
    if (carries_data(one, one_blocks) && carries_data(whole, whole_blocks) &&
        one.buf == own_block(whole, whole_side.type, me))
      return raise(comm, MPI_ERR_BUFFER, fn,
                   "%sbuf is this rank's own block of %sbuf (MPI_IN_PLACE is the way to say so)", one.what,
                   whole.what);
  }
  // (With WEFT_COLL_CHECK the call's check finds it, at every member: CollCall::check_same.)
  if (kind == Collective::allgather && !d.send.in_place && !c->inter && !checks_calls(*c)) {
    const size_t sent = type_packed_size(d.send.type, size_t(send.count));
    const size_t held = type_packed_size(d.recv.type, size_t(recv.per_rank ? recv.counts[size_t(me)] : recv.count));
    if (sent != held)
      return raise(comm, MPI_ERR_TRUNCATE, fn, "rank %d sends %zu bytes but its receive block holds %zu", me,
                   sent, held);
  }
  return CollCall(fn, comm, c, mode).run(d, request);
}

// The neighbours of this rank in comm's topology; -1 for MPI_PROC_NULL.
int neighbours(const char* fn, MPI_Comm comm, const Comm& c, std::vector<int>* sources,
               std::vector<int>* dests, bool* cartesian) {
  CommEntry* e = lookup_comm_entry(comm);
  if (!e->topo) return raise(comm, MPI_ERR_TOPOLOGY, fn, "the communicator has no process topology");
  const Topology& t = *e->topo;
  *cartesian = t.kind == MPI_CART;
  if (t.kind == MPI_CART) {
    cart_neighbors(t, c.rank, sources, dests);
  } else if (t.kind == MPI_GRAPH) {
    graph_neighbors(t.index, t.edges, c.rank, sources, dests);
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
  int rc = check_coll_call(fn, comm, mode, request, &c);
  if (rc == MPI_SUCCESS) rc = check_inter(fn, comm, *c);
  if (rc != MPI_SUCCESS) return rc;
  if (send.buf == MPI_IN_PLACE || recv.buf == MPI_IN_PLACE)
    return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not valid in neighbourhood collectives");
  coll::Description d{kind};
  if ((rc = neighbours(fn, comm, *c, &d.sources, &d.destinations, &d.cartesian)) != MPI_SUCCESS) return rc;
  const int sends = kind == Collective::neighbor_allgather ? 1 : int(d.destinations.size());
  if ((rc = side_of(fn, comm, recv, int(d.sources.size()), &d.recv)) != MPI_SUCCESS) return rc;
  if ((rc = side_of(fn, comm, send, sends, &d.send)) != MPI_SUCCESS) return rc;
  return CollCall(fn, comm, c, mode).run(d, request);
}

SideSpec uniform_side(const void* buf, MPI_Count count, MPI_Datatype type, const char* what) {
  return SideSpec{.buf = buf, .count = count, .type = type, .what = what};
}

SideSpec v_side(const void* buf, Counts counts, Displs displs, MPI_Datatype type, const char* what) {
  return SideSpec{.buf = buf, .counts = counts, .displs = displs, .type = type, .what = what, .per_rank = true};
}

SideSpec w_side(const void* buf, Counts counts, const int* int_displs, const MPI_Aint* aint_displs,
                const MPI_Datatype* types, const char* what) {
  return SideSpec{.buf = buf, .counts = counts, .byte_displs = aint_displs, .int_byte_displs = int_displs,
                  .types = types, .what = what, .per_rank = true, .per_rank_types = true};
}
// Alltoallw's sides: int byte displacements, or MPI_Aint ones (the large-count form).
SideSpec w_side(const void* buf, Counts counts, const int* displs, const MPI_Datatype* types, const char* what) {
  return w_side(buf, counts, displs, nullptr, types, what);
}
SideSpec w_side(const void* buf, Counts counts, const MPI_Aint* displs, const MPI_Datatype* types, const char* what) {
  return w_side(buf, counts, nullptr, displs, types, what);
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
#define WEFT_PARAMS_U(Count) \
  (const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf, Count recvcount, MPI_Datatype recvtype, \
   MPI_Comm comm)
#define WEFT_PARAMS_UV(Count, Displ)                                                                      \
  (const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[], \
   const Displ rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define WEFT_PARAMS_V(Count, Displ)                                                                             \
  (const void* sendbuf, const Count sendcounts[], const Displ sdispls[], MPI_Datatype sendtype, void* recvbuf, \
   const Count recvcounts[], const Displ rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
#define WEFT_PARAMS_W(Count, displ)                                                                             \
  (const void* sendbuf, const Count sendcounts[], const displ sdispls[], const MPI_Datatype sendtypes[],        \
   void* recvbuf, const Count recvcounts[], const displ rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)

// Every collective that moves data without reducing it, with counts of type Count and
// displacements (v forms) of type Displ, in the forms FORMS makes (WEFT_COLL_FORMS, or
// WEFT_COLL_FORMS_C for the large-count forms); WDispl: Alltoallw's byte displacements.
#define WEFT_DATA_COLLECTIVES(FORMS, Count, Displ, WDispl)                                                        \
  FORMS(Gather, Igather,                                                                                          \
        (const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf, Count recvcount,             \
         MPI_Datatype recvtype, int root, MPI_Comm comm),                                                         \
        data_call, (Collective::gather, WEFT_SEND_U, WEFT_RECV_U, root, comm))                                    \
  FORMS(Gatherv, Igatherv,                                                                                        \
        (const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf, const Count recvcounts[],    \
         const Displ rdispls[], MPI_Datatype recvtype, int root, MPI_Comm comm),                                  \
        data_call, (Collective::gather, WEFT_SEND_U, WEFT_RECV_V, root, comm))                                    \
  FORMS(Scatter, Iscatter,                                                                                        \
        (const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf, Count recvcount,             \
         MPI_Datatype recvtype, int root, MPI_Comm comm),                                                         \
        data_call, (Collective::scatter, WEFT_SEND_U, WEFT_RECV_U, root, comm))                                   \
  FORMS(Scatterv, Iscatterv,                                                                                      \
        (const void* sendbuf, const Count sendcounts[], const Displ sdispls[], MPI_Datatype sendtype,             \
         void* recvbuf, Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),                         \
        data_call, (Collective::scatter, WEFT_SEND_V, WEFT_RECV_U, root, comm))                                   \
  FORMS(Allgather, Iallgather, WEFT_PARAMS_U(Count), data_call,                                                   \
        (Collective::allgather, WEFT_SEND_U, WEFT_RECV_U, 0, comm))                                               \
  FORMS(Allgatherv, Iallgatherv, WEFT_PARAMS_UV(Count, Displ), data_call,                                         \
        (Collective::allgather, WEFT_SEND_U, WEFT_RECV_V, 0, comm))                                               \
  FORMS(Alltoall, Ialltoall, WEFT_PARAMS_U(Count), data_call, (Collective::alltoall, WEFT_SEND_U, WEFT_RECV_U, 0, comm)) \
  FORMS(Alltoallv, Ialltoallv, WEFT_PARAMS_V(Count, Displ), data_call,                                            \
        (Collective::alltoall, WEFT_SEND_V, WEFT_RECV_V, 0, comm))                                                \
  FORMS(Alltoallw, Ialltoallw, WEFT_PARAMS_W(Count, WDispl), data_call,                                           \
        (Collective::alltoall, WEFT_SEND_W, WEFT_RECV_W, 0, comm))                                                \
  FORMS(Neighbor_allgather, Ineighbor_allgather, WEFT_PARAMS_U(Count), neighbor_call,                             \
        (Collective::neighbor_allgather, WEFT_SEND_U, WEFT_RECV_U, comm))                                         \
  FORMS(Neighbor_allgatherv, Ineighbor_allgatherv, WEFT_PARAMS_UV(Count, Displ), neighbor_call,                   \
        (Collective::neighbor_allgather, WEFT_SEND_U, WEFT_RECV_V, comm))                                         \
  FORMS(Neighbor_alltoall, Ineighbor_alltoall, WEFT_PARAMS_U(Count), neighbor_call,                               \
        (Collective::neighbor_alltoall, WEFT_SEND_U, WEFT_RECV_U, comm))                                          \
  FORMS(Neighbor_alltoallv, Ineighbor_alltoallv, WEFT_PARAMS_V(Count, Displ), neighbor_call,                      \
        (Collective::neighbor_alltoall, WEFT_SEND_V, WEFT_RECV_V, comm))                                          \
  FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, WEFT_PARAMS_W(Count, MPI_Aint), neighbor_call,                   \
        (Collective::neighbor_alltoall, w_side(sendbuf, sendcounts, nullptr, sdispls, sendtypes, "send"),         \
         w_side(recvbuf, recvcounts, nullptr, rdispls, recvtypes, "recv"), comm))

// Alltoallw's sides: int byte displacements, or MPI_Aint ones in the large-count form.
#define WEFT_SEND_W w_side(sendbuf, sendcounts, sdispls, sendtypes, "send")
#define WEFT_RECV_W w_side(recvbuf, recvcounts, rdispls, recvtypes, "recv")

WEFT_DATA_COLLECTIVES(WEFT_COLL_FORMS, int, int, int)
WEFT_DATA_COLLECTIVES(WEFT_COLL_FORMS_C, MPI_Count, MPI_Aint, MPI_Aint)

#undef WEFT_DATA_COLLECTIVES
#undef WEFT_SEND_W
#undef WEFT_RECV_W
#undef WEFT_SEND_U
#undef WEFT_RECV_U
#undef WEFT_SEND_V
#undef WEFT_RECV_V
#undef WEFT_PARAMS_U
#undef WEFT_PARAMS_UV
#undef WEFT_PARAMS_V
#undef WEFT_PARAMS_W
