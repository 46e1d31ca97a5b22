// Sessions (MPI-4.0): MPI_Session_init and MPI_Session_finalize share the runtime with the world
// model (init.cpp: the first start brings it up, the last finish tears it down); the process
// sets (pt2pt/psets.h), their groups and info; the sessions' error handlers; and
// MPI_Comm_create_from_group and MPI_Intercomm_create_from_groups, whose members agree a context
// pair among themselves.
#include <algorithm>
#include <cstring>
#include <string>

#include "coll/agreements.h"
#include "pt2pt/psets.h"
#include "pt2pt/tag.h"
#include "pt2pt_call.h"
#include "state.h"

namespace weft::mpi {

SessionEntry* lookup_session(MPI_Session h) { return lookup_direct(&State::sessions, h, handle::session, 1); }

namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

// The level named by the info value "thread_level" (MPI_THREAD_SINGLE when absent or unknown).
int level_of(const InfoEntries* info) {
  const std::string* v = info ? info->find("thread_level") : nullptr;
  if (!v) return MPI_THREAD_SINGLE;
  for (int l : {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE})
    if (*v == level_name(l)) return l;
  return MPI_THREAD_SINGLE;
}

// A binding's start: the runtime up and the session valid; else the error code (MPI_ERR_SESSION
// raised on MPI_COMM_WORLD's handler, as there is no valid session to take it).
int session_of(const char* fn, MPI_Session session, SessionEntry** out) {
  if (!g_running) [[unlikely]] return not_initialized(fn);
  *out = lookup_session(session);
  if (*out) return MPI_SUCCESS;
  return raise(MPI_COMM_NULL, MPI_ERR_SESSION, fn, "invalid session 0x%x (argument 'session')", unsigned(session));
}

int session_error(MPI_Session session, const SessionEntry& s, int error_class, const char* fn, const std::string& d) {
  return raise_on(s.errhandler, session, "a session", error_class, fn, d);
}

// session_of for a query, whose output argument `name` (out) must not be NULL.
int query_of(const char* fn, MPI_Session session, const void* out, const char* name, SessionEntry** s) {
  if (int rc = session_of(fn, session, s)) return rc;
  if (out) return MPI_SUCCESS;
  return session_error(session, **s, MPI_ERR_ARG, fn, std::string(name) + " is NULL");
}

MPI_Info new_info(InfoEntries entries) {
  return handle::make(handle::direct, handle::info, info_table().add(std::make_unique<InfoEntries>(std::move(entries))));
}

// The members of the process set named `name`, or the error raised on the session.
int pset_of(const char* fn, MPI_Session session, const SessionEntry& s, const char* name, std::vector<int>* members) {
  if (!name) return session_error(session, s, MPI_ERR_ARG, fn, "pset_name is NULL");
  if (pset_members(name, g_state->boot->rank(), g_state->boot->size(), members)) return MPI_SUCCESS;
  return session_error(session, s, MPI_ERR_ARG, fn, std::string("no process set named \"") + name + "\"");
}

// The session's attached space for buffered sends (made on first use), and its errors.
int session_buffer(const char* fn, MPI_Session session, BufferedSends** b, BufferFail* fail) {
  SessionEntry* s;
  if (int rc = session_of(fn, session, &s)) return rc;
  if (!s->bsend) s->bsend = std::make_shared<BufferedSends>();
  *b = s->bsend.get();
  *fail = [session, s, fn](int error_class, const std::string& detail) {
    return session_error(session, *s, error_class, fn, detail);
  };
  return MPI_SUCCESS;
}

int session_attach(const char* fn, MPI_Session session, void* buffer, MPI_Count size) {
  BufferedSends* b;
  BufferFail fail;
  if (int rc = session_buffer(fn, session, &b, &fail)) return rc;
  return attach_buffer(fn, *b, buffer, size, fail);
}

int session_detach(const char* fn, MPI_Session session, void* buffer_addr, MPI_Count* size, MPI_Count max) {
  BufferedSends* b;
  BufferFail fail;
  if (int rc = session_buffer(fn, session, &b, &fail)) return rc;
  return detach_buffer(fn, *b, buffer_addr, size, max, fail);
}

}  // namespace

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

extern "C" {

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_init";
  // The arguments are checked once the runtime is up (their handles live there); a failure
  // gives the runtime back.
  open_runtime_for(fn, MPI_THREAD_SINGLE, false);
  auto fail = [&](int cls, const std::string& d) {
    const int code = raise_on(valid_errhandler(errhandler) ? errhandler : MPI_ERRORS_ARE_FATAL, MPI_SESSION_NULL,
                              "MPI_SESSION_NULL", cls, fn, d);
    close_runtime_for(fn, false);
    return code;
  };
  if (!valid_errhandler(errhandler)) return fail(MPI_ERR_ARG, "invalid errhandler");
  const InfoEntries* ie = info == MPI_INFO_NULL ? nullptr : lookup_info(info);
  if (info != MPI_INFO_NULL && !ie) return fail(MPI_ERR_INFO, "invalid info");
  if (!session) return fail(MPI_ERR_ARG, "session is NULL");
  if (const std::string* asked = ie ? ie->find("thread_level") : nullptr;
      asked && level_of(ie) == MPI_THREAD_SINGLE && *asked != level_name(MPI_THREAD_SINGLE))
    return fail(MPI_ERR_ARG, "info \"thread_level\" is \"" + *asked + "\", not a thread level");
  auto e = std::make_unique<SessionEntry>();
  retain_errhandler(errhandler);
  e->errhandler = errhandler;
  if (ie) e->info = *ie;
  // The level provided: what was asked for; without a request, the process's (MPI_Init_thread's,
  // or MULTIPLE once any model asked for it).
  const bool asked = ie && ie->find("thread_level");
  const int process_level = g_entry_locking ? MPI_THREAD_MULTIPLE
                            : g_state->world_open ? g_state->thread_level
                                                  : MPI_THREAD_SINGLE;
  e->info.set("thread_level", level_name(asked ? provided_level(level_of(ie)) : process_level));
  const std::string* async = ie ? ie->find("weft_async_progress") : nullptr;
  *session = handle::make(handle::direct, handle::session, g_state->sessions.add(std::move(e)));
  // Last: from here on another thread drives progress.
  if (async && (*async == "true" || *async == "1")) start_async_progress("info key weft_async_progress");
  return MPI_SUCCESS;
}

int PMPI_Session_finalize(MPI_Session* session) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_finalize";
  if (!session) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "session is NULL");
  SessionEntry* s;
  if (int rc = session_of(fn, *session, &s)) return rc;
  if (s->bsend) detach(*g_state->transport, *s->bsend);  // its buffered messages go out first
  release_errhandler(s->errhandler);
  g_state->sessions.remove(handle::index_of(*session));
  *session = MPI_SESSION_NULL;
  return close_runtime_for(fn, false);
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info, int* npset_names) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_get_num_psets";
  SessionEntry* s;
  if (int rc = query_of(fn, session, npset_names, "npset_names", &s)) return rc;
  *npset_names = kProcessSets;
  return MPI_SUCCESS;
}

// *pset_len 0: only the length the name needs (with its NUL) comes back; else the name, cut to
// *pset_len - 1 characters, and that length.
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info, int n, int* pset_len, char* pset_name) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_get_nth_pset";
  SessionEntry* s;
  if (int rc = session_of(fn, session, &s)) return rc;
  if (n < 0 || n >= kProcessSets)
    return session_error(session, *s, MPI_ERR_ARG, fn,
                         "invalid n " + std::to_string(n) + " (valid 0.." + std::to_string(kProcessSets - 1) + ")");
  if (!pset_len) return session_error(session, *s, MPI_ERR_ARG, fn, "pset_len is NULL");
  const std::string_view name = weft::pset_name(n);
  if (*pset_len > 0) {
    if (!pset_name) return session_error(session, *s, MPI_ERR_ARG, fn, "pset_name is NULL");
    int len = 0;
    copy_string(name, *pset_len, pset_name, &len);
  }
  *pset_len = int(name.size()) + 1;
  return MPI_SUCCESS;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_get_info";
  SessionEntry* s;
  if (int rc = query_of(fn, session, info_used, "info_used", &s)) return rc;
  *info_used = new_info(s->info);
  return MPI_SUCCESS;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char* name, MPI_Info* info) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_get_pset_info";
  SessionEntry* s;
  if (int rc = query_of(fn, session, info, "info", &s)) return rc;
  std::vector<int> members;
  if (int rc = pset_of(fn, session, *s, name, &members)) return rc;
  InfoEntries entries;
  entries.set("mpi_size", std::to_string(members.size()));
  *info = new_info(std::move(entries));
  return MPI_SUCCESS;
}

int PMPI_Group_from_session_pset(MPI_Session session, const char* name, MPI_Group* newgroup) {
  WEFT_ENTRY;
  const char* fn = "MPI_Group_from_session_pset";
  SessionEntry* s;
  if (int rc = query_of(fn, session, newgroup, "newgroup", &s)) return rc;
  auto g = std::make_unique<Group>();
  if (int rc = pset_of(fn, session, *s, name, &g->world_ranks)) return rc;
  g->session = session;
  *newgroup = handle::make(handle::direct, handle::group, g_state->groups.add(std::move(g)));
  return MPI_SUCCESS;
}

// Every member calls it with the same stringtag; they agree a context pair among themselves, as
// MPI_Comm_create_group's members do, over a view of MPI_COMM_WORLD.
int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm* newcomm) {
  WEFT_ENTRY;
  const char* fn = "MPI_Comm_create_from_group";
  WEFT_REQUIRE_INIT(fn);
  const MPI_Errhandler eh = valid_errhandler(errhandler) ? errhandler : MPI_ERRORS_ARE_FATAL;
  auto fail = [&](int cls, const std::string& d) { return raise_on(eh, MPI_COMM_NULL, "MPI_COMM_NULL", cls, fn, d); };
  if (!valid_errhandler(errhandler)) return fail(MPI_ERR_ARG, "invalid errhandler");
  if (group == MPI_GROUP_EMPTY) {  // a process outside the group: no communicator, no agreement
    if (!newcomm) return fail(MPI_ERR_ARG, "newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  const Group* g = lookup_group(group);
  if (!g) return fail(MPI_ERR_GROUP, "invalid group (argument 'group')");
  if (!stringtag) return fail(MPI_ERR_ARG, "stringtag is NULL");
  if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) >= MPI_MAX_STRINGTAG_LEN)
    return fail(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1");
  if (info != MPI_INFO_NULL && !lookup_info(info)) return fail(MPI_ERR_INFO, "invalid info");
  if (!newcomm) return fail(MPI_ERR_ARG, "newcomm is NULL");
  const Comm& world = *lookup_comm(MPI_COMM_WORLD);
  if (std::find(g->world_ranks.begin(), g->world_ranks.end(), world.rank) == g->world_ranks.end())
    return fail(MPI_ERR_GROUP, "this process is not in the group");
  Comm view;
  const Status st = coll::make_comm_among(coll_context(world), &g_state->context_ids, g->world_ranks, &view,
                                          coll::creation_channel(stringtag, strlen(stringtag)));
  if (st != Status::ok) return fail(error_class_of(st), error_detail().empty() ? status_name(st) : error_detail());
  if (int rc = register_new_comm(fn, std::move(view), errhandler, newcomm, nullptr, g->session)) return rc;
  if (info != MPI_INFO_NULL) lookup_comm_entry(*newcomm)->info = comm_hints(*lookup_info(info));
  return MPI_SUCCESS;
}

// The leaders' tag: the same stringtag gives the same tag on both sides.
static int tag_of_stringtag(const char* stringtag) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (const char* p = stringtag; *p; ++p) h = (h ^ uint8_t(*p)) * 16777619u;
  return int(h % uint32_t(tag::kMaxUserTag + 1));
}

// Both groups' members call it, each with its own group first; the groups are disjoint. The
// local group agrees among itself on the group-creation channel and its leader meets the remote
// leader there, as MPI_Intercomm_create's leaders meet on the peer communicator.
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                      int remote_leader, const char* stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm* newintercomm) {
  WEFT_ENTRY;
  const char* fn = "MPI_Intercomm_create_from_groups";
  WEFT_REQUIRE_INIT(fn);
  const MPI_Errhandler eh = valid_errhandler(errhandler) ? errhandler : MPI_ERRORS_ARE_FATAL;
  auto fail = [&](int cls, const std::string& d) { return raise_on(eh, MPI_COMM_NULL, "MPI_COMM_NULL", cls, fn, d); };
  if (!valid_errhandler(errhandler)) return fail(MPI_ERR_ARG, "invalid errhandler");
  const Group* local = lookup_group(local_group);
  const Group* remote = lookup_group(remote_group);
  if (!local || local_group == MPI_GROUP_EMPTY) return fail(MPI_ERR_GROUP, "invalid group (argument 'local_group')");
  if (!remote || remote_group == MPI_GROUP_EMPTY) return fail(MPI_ERR_GROUP, "invalid group (argument 'remote_group')");
  if (local_leader < 0 || size_t(local_leader) >= local->world_ranks.size())
    return fail(MPI_ERR_RANK, "invalid rank " + std::to_string(local_leader) + " (argument 'local_leader')");
  if (remote_leader < 0 || size_t(remote_leader) >= remote->world_ranks.size())
    return fail(MPI_ERR_RANK, "invalid rank " + std::to_string(remote_leader) + " (argument 'remote_leader')");
  if (!stringtag) return fail(MPI_ERR_ARG, "stringtag is NULL");
  if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) >= MPI_MAX_STRINGTAG_LEN)
    return fail(MPI_ERR_ARG, "stringtag longer than MPI_MAX_STRINGTAG_LEN - 1");
  if (info != MPI_INFO_NULL && !lookup_info(info)) return fail(MPI_ERR_INFO, "invalid info");
  if (!newintercomm) return fail(MPI_ERR_ARG, "newintercomm is NULL");
  const Comm& world = *lookup_comm(MPI_COMM_WORLD);
  const std::vector<int>& mine = local->world_ranks;
  if (std::find(mine.begin(), mine.end(), world.rank) == mine.end())
    return fail(MPI_ERR_GROUP, "this process is not in local_group");
  for (int r : remote->world_ranks)
    if (std::find(mine.begin(), mine.end(), r) != mine.end())
      return fail(MPI_ERR_GROUP, "local_group and remote_group share job rank " + std::to_string(r));
  Comm view;
  const Status st = coll::make_intercomm_from_groups(coll_context(world), &g_state->context_ids, mine, local_leader,
                                                     remote->world_ranks[size_t(remote_leader)],
                                                     tag_of_stringtag(stringtag), &view);
  if (st != Status::ok) return fail(error_class_of(st), error_detail().empty() ? status_name(st) : error_detail());
  if (int rc = register_new_comm(fn, std::move(view), errhandler, newintercomm, nullptr, local->session)) return rc;
  if (info != MPI_INFO_NULL) lookup_comm_entry(*newintercomm)->info = *lookup_info(info);
  return MPI_SUCCESS;
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function* fn, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  // The handler is called as a communicator's is: its first argument points to the handle.
  // MPI-4.0 allows it before MPI_Session_init, which takes the handler.
  return create_errhandler("MPI_Session_create_errhandler", reinterpret_cast<MPI_Comm_errhandler_function*>(fn),
                           false, errhandler, true);
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_set_errhandler";
  SessionEntry* s;
  if (int rc = session_of(fn, session, &s)) return rc;
  if (!valid_errhandler(errhandler))
    return session_error(session, *s, MPI_ERR_ARG, fn, "invalid errhandler");
  retain_errhandler(errhandler);
  release_errhandler(s->errhandler);
  s->errhandler = errhandler;
  return MPI_SUCCESS;
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_get_errhandler";
  SessionEntry* s;
  if (int rc = query_of(fn, session, errhandler, "errhandler", &s)) return rc;
  retain_errhandler(s->errhandler);
  *errhandler = s->errhandler;
  return MPI_SUCCESS;
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  WEFT_ENTRY;
  const char* fn = "MPI_Session_call_errhandler";
  SessionEntry* s;
  if (int rc = session_of(fn, session, &s)) return rc;
  call_errhandler(s->errhandler, session, "a session", errorcode);
  return MPI_SUCCESS;
}

int PMPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
  WEFT_ENTRY;
  return session_attach("MPI_Session_attach_buffer", session, buffer, size);
}

int PMPI_Session_attach_buffer_c(MPI_Session session, void* buffer, MPI_Count size) {
  WEFT_ENTRY;
  return session_attach("MPI_Session_attach_buffer_c", session, buffer, size);
}

int PMPI_Session_detach_buffer(MPI_Session session, void* buffer_addr, int* size) {
  WEFT_ENTRY;
  MPI_Count n = 0;
  int rc = session_detach("MPI_Session_detach_buffer", session, buffer_addr, size ? &n : nullptr, INT32_MAX);
  if (rc == MPI_SUCCESS) *size = int(n);
  return rc;
}

int PMPI_Session_detach_buffer_c(MPI_Session session, void* buffer_addr, MPI_Count* size) {
  WEFT_ENTRY;
  return session_detach("MPI_Session_detach_buffer_c", session, buffer_addr, size, INT64_MAX);
}

int PMPI_Session_flush_buffer(MPI_Session session) {
  WEFT_ENTRY;
  BufferedSends* b;
  BufferFail fail;
  if (int rc = session_buffer("MPI_Session_flush_buffer", session, &b, &fail)) return rc;
  flush(*g_state->transport, *b);
  return MPI_SUCCESS;
}

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request* request) {
  WEFT_ENTRY;
  BufferedSends* b;
  BufferFail fail;
  if (int rc = session_buffer("MPI_Session_iflush_buffer", session, &b, &fail)) return rc;
  return iflush_buffer("MPI_Session_iflush_buffer", *b, request, fail);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Session_attach_buffer, Session_attach_buffer_c, Session_detach_buffer, Session_detach_buffer_c,
                  Session_flush_buffer, Session_iflush_buffer)
WEFT_PMPI_ALIASES(Session_init, Session_finalize, Session_get_num_psets, Session_get_nth_pset, Session_get_info,
                  Session_get_pset_info, Group_from_session_pset, Comm_create_from_group, Intercomm_create_from_groups,
                  Session_create_errhandler, Session_set_errhandler, Session_get_errhandler,
                  Session_call_errhandler)
