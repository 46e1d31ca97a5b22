// Communicators: creation (its agreements run in coll/agreements.cpp), duplication, splitting,
// comparison, free.
#include <algorithm>

#include "coll/agreements.h"
#include "coll/comm_state.h"
#include "coll/dup_agreement.h"
#include "coll_call.h"
#include "pt2pt/completion.h"
#include "pt2pt/stream_comm.h"
#include "pt2pt/tag.h"
#include "runtime/log.h"
#include "runtime/rank_set.h"
#include "state.h"

namespace weft::mpi {

namespace {

MPI_Comm register_comm(std::unique_ptr<CommEntry> e) {
  uint32_t idx = g_state->comms.add(std::move(e));
  MPI_Comm h = handle::make(handle::direct, handle::comm, idx);
  g_state->comms.get(idx)->comm.handle = h;
  return h;
}

// The new communicator coll made (view: this rank's) in a handle, or MPI_COMM_NULL at a rank
// outside it; it inherits parent's error handler, as the standard says.
int wrap_comm(const char* fn, MPI_Comm parent, Status s, Comm view, bool member,
              std::shared_ptr<const Topology> topo, MPI_Comm* out) {
  if (s != Status::ok) return raise_status(parent, s, fn);
  if (!member) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  const CommEntry& from = *lookup_comm_entry(parent);
  return register_new_comm(fn, std::move(view), from.comm.errhandler, out, std::move(topo), from.session);
}

}  // namespace

int register_new_comm(const char* fn, Comm view, MPI_Errhandler eh, MPI_Comm* out,
                      std::shared_ptr<const Topology> topo, MPI_Session session) {
  auto e = std::make_unique<CommEntry>();
  e->session = session;
  e->comm = std::move(view);
  e->comm.errhandler = eh;
  retain_errhandler(e->comm.errhandler);
  e->topo = std::move(topo);
  log_new_comm(fn, e->comm);
  *out = register_comm(std::move(e));
  return MPI_SUCCESS;
}

void log_new_comm(const char* fn, const Comm& c) {
  if (c.inter)
    WEFT_INFO(Subsys::core, "%s: new intercommunicator of %d and %d ranks, context %u", fn, c.size, c.peer_count(),
              c.context_id);
  else
    WEFT_INFO(Subsys::core, "%s: new communicator of %d ranks, context %u", fn, c.size, c.context_id);
}

InfoEntries comm_hints(const InfoEntries& given) {
  static constexpr const char* kKnown[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                           "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};
  InfoEntries kept;
  for (const auto& entry : given)
    if (std::find_if(std::begin(kKnown), std::end(kKnown), [&](const char* k) { return entry.first == k; }) !=
        std::end(kKnown))
      kept.set(entry.first, entry.second);
  return kept;
}

void init_context_ids(State& st) {
  st.context_ids.reset(coll::kReservedPairs);
}

CommEntry* lookup_comm_entry(MPI_Comm h) {
  if (!g_state) return nullptr;
  if (h == MPI_COMM_WORLD) return g_state->comms.get(0);
  if (h == MPI_COMM_SELF) return g_state->comms.get(1);
  return lookup_direct(&State::comms, h, handle::comm, 2);
}

namespace {
int bad_comm(const char* fn, MPI_Comm comm) {
  return raise(MPI_COMM_NULL, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'comm')",
               unsigned(comm));
}
}  // namespace

int comm_entry_of(const char* fn, MPI_Comm comm, CommEntry** out) {
  if (!g_running) [[unlikely]] return not_initialized(fn);
  *out = lookup_comm_entry(comm);
  return *out ? MPI_SUCCESS : bad_comm(fn, comm);
}

int comm_of(const char* fn, MPI_Comm comm, Comm** out) {
  CommEntry* e;
  if (int rc = comm_entry_of(fn, comm, &e)) return rc;
  *out = &e->comm;
  return MPI_SUCCESS;
}

Comm* lookup_comm(MPI_Comm h) {
  CommEntry* e = lookup_comm_entry(h);
  return e ? &e->comm : nullptr;
}

int check_comm_alive(const char* fn, MPI_Comm comm, const Comm& c, bool point_to_point) {
  if (g_state->transport->revoked(c))
    return raise(comm, MPIX_ERR_REVOKED, fn, "%s has been revoked (MPIX_Comm_revoke)", c.label().c_str());
  if (point_to_point && g_state->transport->process_fault_scope()) return MPI_SUCCESS;
  const int dead = g_state->transport->failed_member(c);
  if (dead < 0) return MPI_SUCCESS;
  return raise(comm, MPIX_ERR_PROC_FAILED, fn, "%s: every operation on %s fails",
               Transport::failure_detail(&c, c.world_rank(dead)).c_str(), c.label().c_str());
}

int create_communicator(const char* fn, MPI_Comm parent, const std::vector<int>& world_ranks,
                        std::shared_ptr<const Topology> topo, MPI_Comm* out) {
  Comm view;
  bool member = false;
  Status s = coll::make_comm(coll_context(*lookup_comm(parent)), &g_state->context_ids, world_ranks, &view, &member);
  return wrap_comm(fn, parent, s, std::move(view), member, std::move(topo), out);
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {


int not_intra(const char* fn, MPI_Comm comm, const Comm& c) {
  return raise(comm, MPI_ERR_COMM, fn, "%s is an intercommunicator (an intracommunicator is required)",
               c.label().c_str());
}

// A duplicate's hints: the parent's, or those of `info` that communicators keep.
InfoEntries dup_hints(const CommEntry& parent, MPI_Info info) {
  InfoEntries* ie = info != MPI_INFO_NULL ? lookup_info(info) : nullptr;
  return ie ? comm_hints(*ie) : parent.info;
}

// The duplicate's attributes, copied from comm's; on failure it is freed again.
int copy_dup_attributes(MPI_Comm comm, MPI_Comm* newcomm) {
  int rc = copy_attributes(comm, *newcomm);
  if (rc != MPI_SUCCESS) {
    (void)PMPI_Comm_free(newcomm);  // deletes what was copied before the failing copy
    *newcomm = MPI_COMM_NULL;
  }
  return rc;
}

int dup_common(const char* fn, MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  CommEntry* e = lookup_comm_entry(comm);
  if (!e) return bad_comm(fn, comm);
  if (!newcomm) return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
  int rc;
  if (e->comm.inter) {
    Comm view;
    Status s = coll::dup_intercomm(coll_context(e->comm), &g_state->context_ids, &view);
    rc = wrap_comm(fn, comm, s, std::move(view), true, nullptr, newcomm);
  } else {
    rc = create_communicator(fn, comm, e->comm.world_ranks, e->topo, newcomm);
  }
  if (rc != MPI_SUCCESS) return rc;
  lookup_comm_entry(*newcomm)->info = dup_hints(*e, info);
  return copy_dup_attributes(comm, newcomm);
}

// MPI_Comm_free and MPI_Comm_disconnect (wait: for the communicator's pending operations).
int free_comm(const char* fn, MPI_Comm* comm, bool wait) {
  if (!comm) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "comm is NULL");
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return raise(*comm, MPI_ERR_COMM, fn, "predefined communicators cannot be freed");
  CommEntry* e = lookup_comm_entry(*comm);
  if (!e) return bad_comm(fn, *comm);
  // MPI_Comm_disconnect: the communicator's pending operations complete first.
  if (wait) wait_owned(*g_state->transport, g_state->requests, *comm, &e->comm);
  int rc = delete_all_attributes(*comm);
  if (rc != MPI_SUCCESS) return rc;
  release_stream_comm(e->comm);  // waits for its stream before the GPU workspace goes
  coll::release(e->comm);         // its plans, choices and what its collectives made
  g_state->transport->forget_revocation(e->comm);
  if (e->comm.context_id >= 2 * coll::kReservedPairs)  // else an idup's, never agreed
    g_state->context_ids.set(e->comm.context_id / 2, true);
  if (e->bsend) detach(*g_state->transport, *e->bsend);  // its buffered messages go out first
  release_errhandler(e->comm.errhandler);
  g_state->comms.remove(handle::index_of(*comm));
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Comm_dup");
  return dup_common("MPI_Comm_dup", comm, MPI_INFO_NULL, newcomm);
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Comm_dup_with_info");
  if (info != MPI_INFO_NULL && !lookup_info(info))
    return raise(comm, MPI_ERR_INFO, "MPI_Comm_dup_with_info", "invalid info 0x%x", unsigned(info));
  return dup_common("MPI_Comm_dup_with_info", comm, info, newcomm);
}

}  // extern "C"

namespace {

// The members of an idup agreed: its handle (h, while it still holds the placeholder `serial`)
// gets its view. A handle freed meanwhile (its attributes failed to copy) gives the pair back.
void complete_idup(const char* fn, MPI_Comm h, uint64_t serial, Comm&& view) {
  CommEntry* e = lookup_comm_entry(h);
  if (!e || e->comm.serial != serial) {
    g_state->context_ids.set(view.context_id / 2, true);
    return;
  }
  view.handle = e->comm.handle;
  view.errhandler = e->comm.errhandler;
  e->comm = std::move(view);
  log_new_comm(fn, e->comm);
}

// MPI_Comm_idup(_with_info): the duplicate's handle at once, with what MPI_Comm_dup would give
// it now (error handler, hints, topology, attributes); its context once the members agree
// without blocking (coll/dup_agreement.h), which completes the request.
int idup(const char* fn, MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  WEFT_REQUIRE_INIT(fn);
  if (!request) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  CommEntry* e = lookup_comm_entry(comm);
  if (!e) return bad_comm(fn, comm);
  if (!newcomm) return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
  auto pending = std::make_unique<CommEntry>();
  pending->comm.context_id = coll::kPendingContext;
  pending->comm.errhandler = e->comm.errhandler;
  retain_errhandler(pending->comm.errhandler);
  pending->info = dup_hints(*e, info);
  pending->topo = e->topo;
  pending->session = e->session;
  const uint64_t serial = pending->comm.serial;
  MPI_Comm h = register_comm(std::move(pending));
  std::shared_ptr<Comm> channel;
  auto schedule = coll::dup_schedule(
      coll_context(e->comm), &g_state->context_ids,
      [fn, h, serial](Comm&& view) { complete_idup(fn, h, serial, std::move(view)); }, &channel);
  Request* r = g_state->requests.alloc(RequestKind::coll);
  r->owner = comm;
  if (Status s = g_state->coll_calls.start(coll_context(*channel), schedule, r); s != Status::ok) {
    g_state->requests.release(r);
    (void)PMPI_Comm_free(&h);
    return raise_status(comm, s, fn);
  }
  *request = request_handle(r);
  *newcomm = h;
  return copy_dup_attributes(comm, newcomm);
}

}  // namespace

extern "C" {

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  WEFT_ENTRY;
  return idup("MPI_Comm_idup", comm, MPI_INFO_NULL, newcomm, request);
}

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  WEFT_ENTRY;
  return idup("MPI_Comm_idup_with_info", comm, info, newcomm, request);
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_split", comm, &c)) return rc;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "MPI_Comm_split", "newcomm is NULL");
  if (color < 0 && color != MPI_UNDEFINED)
    return raise(comm, MPI_ERR_ARG, "MPI_Comm_split", "invalid color %d (argument 'color')", color);
  Comm view;
  bool member = false;
  Status s = c->inter ? coll::split_intercomm(coll_context(*c), &g_state->context_ids, color, key, MPI_UNDEFINED,
                                              &view, &member)
                      : coll::split_comm(coll_context(*c), &g_state->context_ids, color, key, MPI_UNDEFINED,
                                         &view, &member);
  return wrap_comm("MPI_Comm_split", comm, s, std::move(view), member, nullptr, newcomm);
}

}  // extern "C"

namespace {

// MPI_COMM_TYPE_HW_UNGUIDED: the coarsest hardware level, node first, whose instances split c
// into groups every one of which is smaller than c (every rank within one instance); none:
// MPI_COMM_NULL. The level's name goes into info under mpi_hw_resource_type.
int split_unguided(MPI_Comm comm, const Comm& c, uint32_t node, int key, MPI_Info info, MPI_Comm* newcomm) {
  static const char* const kLevels[] = {"mpi_shared_memory", "Package", "NUMANode", "L3Cache",
                                        "L2Cache", "L1Cache", "Core", "PU"};
  std::vector<int> colors(size_t(c.size));
  for (const char* level : kLevels) {
    const int mine = split_type_color(node, level, MPI_UNDEFINED);
    if (int rc = PMPI_Allgather(&mine, 1, MPI_INT, colors.data(), 1, MPI_INT, comm); rc != MPI_SUCCESS) return rc;
    std::sort(colors.begin(), colors.end());
    if (colors.front() == colors.back() || std::count(colors.begin(), colors.end(), MPI_UNDEFINED) > 0) continue;
    if (info != MPI_INFO_NULL) {
      if (int rc = PMPI_Info_set(info, "mpi_hw_resource_type", level); rc != MPI_SUCCESS) return rc;
    }
    return PMPI_Comm_split(comm, mine, key, newcomm);
  }
  *newcomm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_split_type", comm, &c)) return rc;
  if (c->inter) return not_intra("MPI_Comm_split_type", comm, *c);
  uint32_t node = 0;
  Status s = g_state->boot->node_of(c->world_rank(c->rank), &node);
  if (s != Status::ok) return raise_status(comm, s, "MPI_Comm_split_type");
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
    // The resource named by the info key "mpi_hw_resource_type"; none named: MPI_COMM_NULL.
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    if (info != MPI_INFO_NULL) {
      int rc = PMPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, value, &flag);
      if (rc != MPI_SUCCESS) return rc;
    }
    if (flag) color = split_type_color(node, value, MPI_UNDEFINED);
  } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
    return split_unguided(comm, *c, node, key, info, newcomm);
  } else if (split_type == MPI_COMM_TYPE_SHARED || split_type == MPIX_COMM_TYPE_NEIGHBORHOOD) {
    // Shared memory reaches every rank of a node; the neighbourhood kind splits by node too.
    color = split_type_color(node, nullptr, MPI_UNDEFINED);
  } else if (split_type != MPI_UNDEFINED) {
    return raise(comm, MPI_ERR_ARG, "MPI_Comm_split_type", "invalid split_type %d", split_type);
  }
  return PMPI_Comm_split(comm, color, key, newcomm);
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_create", comm, &c)) return rc;
  Group* g = lookup_group(group);
  if (!g) return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create", "invalid group 0x%x", unsigned(group));
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "MPI_Comm_create", "newcomm is NULL");
  for (int w : g->world_ranks)
    if (std::find(c->world_ranks.begin(), c->world_ranks.end(), w) == c->world_ranks.end())
      return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create", "the group holds a process outside the communicator");
  if (c->inter) {
    // Each group names a subgroup of its own: a split into the members (keyed by their order
    // in the group) and the rest.
    const int me = c->world_rank(c->rank);
    const auto at = std::find(g->world_ranks.begin(), g->world_ranks.end(), me);
    const bool in = at != g->world_ranks.end();
    Comm view;
    bool member = false;
    Status s = coll::split_intercomm(coll_context(*c), &g_state->context_ids, in ? 0 : MPI_UNDEFINED,
                                     int(at - g->world_ranks.begin()), MPI_UNDEFINED, &view, &member);
    return wrap_comm("MPI_Comm_create", comm, s, std::move(view), member, nullptr, newcomm);
  }
  return create_communicator("MPI_Comm_create", comm, g->world_ranks, nullptr, newcomm);
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_create_group", comm, &c)) return rc;
  if (c->inter) return not_intra("MPI_Comm_create_group", comm, *c);
  Group* g = lookup_group(group);
  if (!g) return raise(comm, MPI_ERR_GROUP, "MPI_Comm_create_group", "invalid group 0x%x", unsigned(group));
  if (!newcomm) return raise(comm, MPI_ERR_ARG, "MPI_Comm_create_group", "newcomm is NULL");
  if (tag < 0) return raise(comm, MPI_ERR_TAG, "MPI_Comm_create_group", "invalid tag %d", tag);
  int me = c->world_rank(c->rank);
  if (std::find(g->world_ranks.begin(), g->world_ranks.end(), me) == g->world_ranks.end()) {
    *newcomm = MPI_COMM_NULL;  // only members call; a non-member gets nothing
    return MPI_SUCCESS;
  }
  Comm view;
  Status s = coll::make_comm_among(coll_context(*c), &g_state->context_ids, g->world_ranks, &view,
                                   coll::creation_channel(&tag, sizeof tag));
  return wrap_comm("MPI_Comm_create_group", comm, s, std::move(view), true, nullptr, newcomm);
}

int PMPI_Comm_free(MPI_Comm* comm) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Comm_free");
  return free_comm("MPI_Comm_free", comm, false);
}

int PMPI_Comm_disconnect(MPI_Comm* comm) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Comm_disconnect");
  return free_comm("MPI_Comm_disconnect", comm, true);
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  WEFT_ENTRY;
  WEFT_REQUIRE_INIT("MPI_Comm_compare");
  Comm* a = lookup_comm(comm1);
  Comm* b = lookup_comm(comm2);
  if (!a) return bad_comm("MPI_Comm_compare", comm1);
  if (!b) return bad_comm("MPI_Comm_compare", comm2);
  if (!result) return raise(comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
  if (comm1 == comm2) *result = MPI_IDENT;
  else if (a->inter != b->inter) *result = MPI_UNEQUAL;
  else {
    // Intercommunicators: both groups compared, the weaker answer wins.
    SetMatch m = set_compare(a->world_ranks, b->world_ranks);
    if (a->inter && m != SetMatch::unequal) {
      const SetMatch r = set_compare(a->remote_world_ranks, b->remote_world_ranks);
      if (r != SetMatch::identical) m = r;
    }
    *result = m == SetMatch::identical ? MPI_CONGRUENT : m == SetMatch::similar ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_test_inter", comm, &c)) return rc;
  if (!flag) return raise(comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
  *flag = c->inter;
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_remote_size", comm, &c)) return rc;
  if (!c->inter) return raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_size", "%s is not an intercommunicator", c->label().c_str());
  if (!size) return raise(comm, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
  *size = c->peer_count();
  return MPI_SUCCESS;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm* newintercomm) {
  WEFT_ENTRY;
  const char* fn = "MPI_Intercomm_create";
  Comm* c;
  if (int rc = comm_of(fn, local_comm, &c)) return rc;
  if (c->inter) return not_intra(fn, local_comm, *c);
  if (!newintercomm) return raise(local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
  if (local_leader < 0 || local_leader >= c->size)
    return raise(local_comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'local_leader'; %s has %d ranks)",
                 local_leader, c->label().c_str(), c->size);
  if (tag < 0 || tag > tag::kMaxUserTag)
    return raise(local_comm, MPI_ERR_TAG, fn, "invalid tag %d (argument 'tag'; valid 0..%d)", tag, tag::kMaxUserTag);
  Comm* peer = nullptr;
  if (c->rank == local_leader) {  // peer_comm and remote_leader matter at the leader only
    peer = lookup_comm(peer_comm);
    if (!peer) return raise(local_comm, MPI_ERR_COMM, fn, "invalid communicator 0x%x (argument 'peer_comm')",
                            unsigned(peer_comm));
    if (remote_leader < 0 || remote_leader >= peer->peer_count())
      return raise(local_comm, MPI_ERR_RANK, fn, "invalid rank %d (argument 'remote_leader'; %s has %d ranks)",
                   remote_leader, peer->label().c_str(), peer->peer_count());
  }
  Comm view;
  Status s = coll::make_intercomm(coll_context(*c), &g_state->context_ids, local_leader, peer ? *peer : *c,
                                  remote_leader, tag, &view);
  return wrap_comm(fn, local_comm, s, std::move(view), true, nullptr, newintercomm);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  WEFT_ENTRY;
  const char* fn = "MPI_Intercomm_merge";
  Comm* c;
  if (int rc = comm_of(fn, intercomm, &c)) return rc;
  if (!c->inter) return raise(intercomm, MPI_ERR_COMM, fn, "%s is not an intercommunicator", c->label().c_str());
  if (!newintracomm) return raise(intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
  Comm view;
  Status s = coll::merge_intercomm(coll_context(*c), &g_state->context_ids, high != 0, &view);
  return wrap_comm(fn, intercomm, s, std::move(view), true, nullptr, newintracomm);
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_set_info", comm, &e)) return rc;
  InfoEntries* ie = lookup_info(info);
  if (!ie) return raise(comm, MPI_ERR_INFO, "MPI_Comm_set_info", "invalid info 0x%x", unsigned(info));
  e->info = comm_hints(*ie);
  return MPI_SUCCESS;
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_get_info", comm, &e)) return rc;
  if (!info_used) return raise(comm, MPI_ERR_ARG, "MPI_Comm_get_info", "info_used is NULL");
  uint32_t idx = info_table().add(std::make_unique<InfoEntries>(e->info));
  *info_used = handle::make(handle::direct, handle::info, idx);
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Comm_dup, Comm_dup_with_info, Comm_idup, Comm_idup_with_info, Comm_split, Comm_split_type,
                  Comm_create, Comm_create_group, Comm_free, Comm_disconnect, Comm_compare, Comm_test_inter,
                  Comm_remote_size, Intercomm_create, Intercomm_merge, Comm_set_info, Comm_get_info)
