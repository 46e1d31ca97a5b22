// Fault tolerance at the MPI boundary: ULFM's revoke, shrink, agree and failure acknowledgement
// (MPIX_, as MPICH and Open MPI 5 name them), and the monitored barrier. The agreements run in
// coll/fault/ below the communicator's failure and revocation state.
#include <algorithm>
#include <string>

#include "coll/agreements.h"
#include "coll/fault/agree.h"
#include "coll/fault/monitored_barrier.h"
#include "coll/gpu/gpu_coll.h"
#include "runtime/rank_set.h"
#include "state.h"

namespace weft::mpi {

namespace {

Transport& transport() { return *g_state->transport; }

int intracomm_entry(const char* fn, MPI_Comm comm, CommEntry** e) {
  if (int rc = comm_entry_of(fn, comm, e)) return rc;
  if ((*e)->comm.inter)
    return raise(comm, MPI_ERR_COMM, fn, "not supported on intercommunicators yet");
  return MPI_SUCCESS;
}

// The members of c known here to have failed, as job ranks in communicator order.
std::vector<int> failed_members(const Comm& c) {
  Bootstrap& boot = transport().boot();
  boot.check_liveness_now();
  std::vector<int> failed;
  for (int k = 0; k < c.size; ++k)
    if (boot.peer_failed(c.world_rank(k))) failed.push_back(c.world_rank(k));
  return failed;
}

bool alive_in(const std::vector<uint64_t>& mask, int k) { return (mask[size_t(k) / 64] >> (k % 64)) & 1; }

// Members the agreement found dead are dead here too (every survivor then names the same ones).
std::vector<int> take_in_failures(const Comm& c, const std::vector<uint64_t>& alive) {
  std::vector<int> dead;
  for (int k = 0; k < c.size; ++k)
    if (!alive_in(alive, k)) {
      dead.push_back(k);
      transport().boot().mark_failed(c.world_rank(k));
    }
  return dead;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPIX_Comm_revoke(MPI_Comm comm) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPIX_Comm_revoke", comm, &e)) return rc;
  transport().revoke(e->comm);
  coll::gpu::stop_kernels(e->comm, Status::revoked, e->comm.label() + " was revoked by this rank");
  return MPI_SUCCESS;
}

int PMPIX_Comm_is_revoked(MPI_Comm comm, int* flag) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPIX_Comm_is_revoked", comm, &e)) return rc;
  if (!flag) return raise(comm, MPI_ERR_ARG, "MPIX_Comm_is_revoked", "flag is NULL");
  transport().poll_notices();
  *flag = transport().revoked(e->comm) ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPIX_Comm_failure_ack(MPI_Comm comm) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPIX_Comm_failure_ack", comm, &e)) return rc;
  e->acked_failures = failed_members(e->comm);
  e->comm.acked_failures = uint32_t(e->acked_failures.size());
  return MPI_SUCCESS;
}

int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group* failedgrp) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPIX_Comm_failure_get_acked", comm, &e)) return rc;
  if (!failedgrp) return raise(comm, MPI_ERR_ARG, "MPIX_Comm_failure_get_acked", "failedgrp is NULL");
  return make_group(e->acked_failures, failedgrp);
}

int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group* failedgrp) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPIX_Comm_get_failed", comm, &e)) return rc;
  if (!failedgrp) return raise(comm, MPI_ERR_ARG, "MPIX_Comm_get_failed", "failedgrp is NULL");
  return make_group(failed_members(e->comm), failedgrp);
}

int PMPIX_Comm_agree(MPI_Comm comm, int* flag) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Comm_agree";
  CommEntry* e;
  if (int rc = intracomm_entry(fn, comm, &e)) return rc;
  if (!flag) return raise(comm, MPI_ERR_ARG, fn, "flag is NULL");
  const Comm& c = e->comm;
  // Words: the alive mask, the failures this rank acknowledged, the flag (its upper half set,
  // so that the and leaves the flags' and).
  const size_t w = coll::fault::alive_words(c);
  std::vector<uint64_t> words = coll::fault::alive_mask(transport(), c);
  words.resize(2 * w + 1, 0);
  for (int k = 0; k < c.size; ++k)
    if (std::find(e->acked_failures.begin(), e->acked_failures.end(), c.world_rank(k)) != e->acked_failures.end())
      words[w + size_t(k) / 64] |= 1ull << (k % 64);
  words[2 * w] = 0xffffffff00000000ull | uint32_t(*flag);
  if (Status s = coll::fault::agree(transport(), c, e->agreements++, &words); s != Status::ok)
    return raise_status(comm, s, fn);
  *flag = int(uint32_t(words[2 * w]));
  const std::vector<uint64_t> alive(words.begin(), words.begin() + long(w));
  const std::vector<int> dead = take_in_failures(c, alive);
  // The failures not every survivor acknowledged fail the call, on every survivor alike.
  std::vector<int> unacked;
  for (int k : dead)
    if (!((words[w + size_t(k) / 64] >> (k % 64)) & 1)) unacked.push_back(k);
  if (!unacked.empty())
    return raise(comm, MPIX_ERR_PROC_FAILED, fn,
                 "rank%s %s of %s failed and not every survivor acknowledged it (MPIX_Comm_failure_ack); "
                 "the flag is the survivors' and",
                 unacked.size() > 1 ? "s" : "", rank_list_text(unacked).c_str(), c.label().c_str());
  return MPI_SUCCESS;
}

int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm* newcomm) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Comm_shrink";
  CommEntry* e;
  if (int rc = intracomm_entry(fn, comm, &e)) return rc;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, fn, "newcomm is NULL");
  const Comm& c = e->comm;
  // Words: the alive mask, then the context pairs free here (the survivors take the lowest
  // pair free on all of them).
  const size_t w = coll::fault::alive_words(c);
  std::vector<uint64_t> words = coll::fault::alive_mask(transport(), c);
  const ContextIds offer = g_state->context_ids.blocking();
  words.insert(words.end(), std::begin(offer.free_mask), std::end(offer.free_mask));
  if (Status s = coll::fault::agree(transport(), c, e->agreements++, &words); s != Status::ok)
    return raise_status(comm, s, fn);
  const std::vector<uint64_t> alive(words.begin(), words.begin() + long(w));
  const std::vector<int> dead = take_in_failures(c, alive);
  ContextIds agreed{};
  std::copy(words.begin() + long(w), words.end(), std::begin(agreed.free_mask));
  uint32_t context = 0;
  if (!g_state->context_ids.take_lowest(agreed, &context))
    return raise(comm, MPI_ERR_INTERN, fn, "no context id is free on every survivor");
  std::vector<int> survivors;
  for (int k = 0; k < c.size; ++k)
    if (alive_in(alive, k)) survivors.push_back(c.world_rank(k));
  Comm view = coll::view_with_nodes(coll_context(c), context, survivors);
  WEFT_INFO(Subsys::core, "%s: %s shrinks to %zu ranks without rank%s %s", fn, c.label().c_str(), survivors.size(),
            dead.size() == 1 ? "" : "s", rank_list_text(dead).c_str());
  return register_new_comm(fn, std::move(view), c.errhandler, newcomm, nullptr, e->session);
}

int PMPIX_Comm_monitored_barrier(MPI_Comm comm, int timeout_ms, MPI_Group* late_group) {
  WEFT_ENTRY;
  constexpr const char* fn = "MPIX_Comm_monitored_barrier";
  CommEntry* e;
  if (int rc = intracomm_entry(fn, comm, &e)) return rc;
  if (!late_group) return raise(comm, MPI_ERR_ARG, fn, "late_group is NULL");
  if (timeout_ms <= 0) return raise(comm, MPI_ERR_ARG, fn, "timeout_ms %d is not positive", timeout_ms);
  const Comm& c = e->comm;
  if (int rc = check_comm_alive(fn, comm, c)) return rc;
  std::vector<int> late;
  StatusBoard& board = *g_state->board;
  board.enter(c, fn);
  const Status s = coll::fault::monitored_barrier(transport(), c, timeout_ms, &late);
  board.leave(c, s != Status::ok);
  std::vector<int> late_world;
  for (int k : late) late_world.push_back(c.world_rank(k));
  if (int rc = make_group(late_world, late_group)) return rc;
  return s == Status::ok ? MPI_SUCCESS : raise_status(comm, s, fn);
}

}  // extern "C"

WEFT_PMPIX_ALIASES(Comm_revoke, Comm_is_revoked, Comm_failure_ack, Comm_failure_get_acked, Comm_get_failed,
                   Comm_agree, Comm_shrink, Comm_monitored_barrier)
