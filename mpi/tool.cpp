// The MPI tool information interface (MPI_T): control and performance variables, categories and
// enumerations (tool_vars.h). Callable before MPI_Init and after MPI_Finalize, from any thread.
// Errors are returned as MPI_T classes and never reach an error handler, as the standard asks.
// Handles and sessions are checked against the ones this process gave out before any use: a
// stale or made-up pointer is MPI_T_ERR_INVALID_HANDLE (or _SESSION), never dereferenced.
// weft defines no MPI_T events or event sources: their counts are 0 and every index or
// registration given is invalid.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/log.h"
#include "state.h"
#include "tool_vars.h"

using namespace weft;
using namespace weft::mpi;
namespace tool = weft::mpi::tool;

struct MPIR_T_cvar_handle_s {
  int index;
};

struct MPIR_T_pvar_session_s;

struct MPIR_T_pvar_handle_s {
  MPIR_T_pvar_session_s* session;
  int index;
  uint64_t origin;  // what reads subtract (moved by reset and write of a counter)
};

struct MPIR_T_pvar_session_s {
  std::vector<std::unique_ptr<MPIR_T_pvar_handle_s>> handles;
};

namespace {

struct ToolState {
  std::mutex mutex;
  int initialized = 0;  // MPI_T_init_thread calls not yet matched by MPI_T_finalize
  std::set<MPIR_T_cvar_handle_s*> cvar_handles;
  std::set<MPIR_T_pvar_session_s*> sessions;
};

ToolState& tool_state() {
  static ToolState s;
  return s;
}

// Never freed: MPI_T_PVAR_ALL_HANDLES points at it and no allocation returns it.
MPIR_T_pvar_handle_s g_all_handles_sentinel{nullptr, -1, 0};

int refuse(int error_class, const char* fn, const char* why) {
  WEFT_INFO(Subsys::core, "%s: %s", fn, why);
  return error_class;
}

// A string out parameter pair: *len in is the buffer's size; out, the characters written plus
// the NUL, or the length the whole string needs when no buffer was given (len 0 or buf NULL).
void copy_string(const std::string_view s, char* buf, int* len) {
  if (!len) return;
  if (buf && *len > 0) {
    const size_t n = std::min(s.size(), size_t(*len - 1));
    memcpy(buf, s.data(), n);
    buf[n] = '\0';
    *len = int(n) + 1;
  } else {
    *len = int(s.size()) + 1;
  }
}

// Every call but init starts here: the interface initialized, with the lock held.
#define WEFT_TOOL_ENTRY(fn)                                                     \
  ToolState& ts = tool_state();                                                 \
  std::lock_guard tool_lock(ts.mutex);                                          \
  if (ts.initialized == 0) return refuse(MPI_T_ERR_NOT_INITIALIZED, fn, "MPI_T_init_thread has not been called")

template <class T>
bool in_range(int index, std::span<const T> table) {
  return index >= 0 && size_t(index) < table.size();
}

bool valid_session(const ToolState& ts, MPI_T_pvar_session s) { return s && ts.sessions.count(s); }

bool valid_pvar_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  for (const auto& owned : s->handles)
    if (owned.get() == h) return true;
  return false;
}

// Checks the session and the handle (MPI_T_PVAR_ALL_HANDLES only where all_ok).
int check_pvar_call(const ToolState& ts, const char* fn, MPI_T_pvar_session s, MPI_T_pvar_handle h,
                    bool all_ok) {
  if (!valid_session(ts, s)) return refuse(MPI_T_ERR_INVALID_SESSION, fn, "unknown session");
  if (h == MPI_T_PVAR_ALL_HANDLES) {
    return all_ok ? MPI_SUCCESS : refuse(MPI_T_ERR_INVALID_HANDLE, fn, "MPI_T_PVAR_ALL_HANDLES is not allowed here");
  }
  if (!valid_pvar_handle(s, h)) return refuse(MPI_T_ERR_INVALID_HANDLE, fn, "unknown handle for this session");
  return MPI_SUCCESS;
}

uint64_t read_pvar(const tool::PerfVar& v) { return v.read(v.arg); }

int category_list(const char* fn, int cat_index, int len, int indices[], std::vector<int> tool::Category::*list) {
  WEFT_TOOL_ENTRY(fn);
  const auto cats = tool::categories();
  if (!in_range(cat_index, cats)) return refuse(MPI_T_ERR_INVALID_INDEX, fn, "no such category");
  if (len < 0 || (len > 0 && !indices)) return refuse(MPI_T_ERR_INVALID, fn, "len is negative or indices is NULL");
  const std::vector<int>& members = cats[size_t(cat_index)].*list;
  const size_t n = std::min(members.size(), size_t(len));
  std::copy_n(members.begin(), n, indices);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

MPIR_T_pvar_handle_s* const MPI_T_PVAR_ALL_HANDLES = &g_all_handles_sentinel;

int PMPI_T_init_thread(int required, int* provided) {
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return refuse(MPI_T_ERR_INVALID, "MPI_T_init_thread", "required is not a thread level");
  ToolState& ts = tool_state();
  std::lock_guard lock(ts.mutex);
  ++ts.initialized;
  (void)tool::control_vars();  // build the tables now, not inside a later call
  if (provided) *provided = required;  // every call takes the interface's own lock
  return MPI_SUCCESS;
}

int PMPI_T_finalize(void) {
  WEFT_TOOL_ENTRY("MPI_T_finalize");
  if (--ts.initialized == 0) {
    // The last finalize frees what tools left allocated.
    for (auto* h : ts.cvar_handles) delete h;
    ts.cvar_handles.clear();
    for (auto* s : ts.sessions) delete s;
    ts.sessions.clear();
  }
  return MPI_SUCCESS;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  WEFT_TOOL_ENTRY("MPI_T_enum_get_info");
  if (!tool::is_enumeration(enumtype)) return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_enum_get_info", "unknown enumeration");
  const auto* e = reinterpret_cast<const tool::Enumeration*>(enumtype);
  if (num) *num = int(e->items.size());
  copy_string(e->name, name, name_len);
  return MPI_SUCCESS;
}

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int* value, char* name, int* name_len) {
  WEFT_TOOL_ENTRY("MPI_T_enum_get_item");
  if (!tool::is_enumeration(enumtype)) return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_enum_get_item", "unknown enumeration");
  const auto* e = reinterpret_cast<const tool::Enumeration*>(enumtype);
  if (indx < 0 || size_t(indx) >= e->items.size())
    return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_enum_get_item", "item index out of range");
  if (value) *value = indx;
  copy_string(e->items[size_t(indx)], name, name_len);
  return MPI_SUCCESS;
}

// --- control variables ---

int PMPI_T_cvar_get_num(int* num_cvar) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_get_num");
  if (!num_cvar) return refuse(MPI_T_ERR_INVALID, "MPI_T_cvar_get_num", "num_cvar is NULL");
  *num_cvar = int(tool::control_vars().size());
  return MPI_SUCCESS;
}

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity, MPI_Datatype* datatype,
                         MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind, int* scope) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_get_info");
  const auto vars = tool::control_vars();
  if (!in_range(cvar_index, vars)) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_get_info", "no such control variable");
  const tool::ControlVar& v = vars[size_t(cvar_index)];
  copy_string(v.setting->name, name, name_len);
  copy_string(v.setting->doc, desc, desc_len);
  if (verbosity) *verbosity = v.verbosity;
  if (datatype) *datatype = v.datatype;
  if (enumtype)
    *enumtype = v.enumeration ? reinterpret_cast<MPI_T_enum>(const_cast<tool::Enumeration*>(v.enumeration))
                              : MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope) *scope = v.scope;
  return MPI_SUCCESS;
}

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_get_index");
  if (!name || !cvar_index) return refuse(MPI_T_ERR_INVALID, "MPI_T_cvar_get_index", "name or cvar_index is NULL");
  const auto vars = tool::control_vars();
  for (size_t k = 0; k < vars.size(); ++k)
    if (strcmp(vars[k].setting->name, name) == 0) return *cvar_index = int(k), MPI_SUCCESS;
  return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void*, MPI_T_cvar_handle* handle, int* count) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_handle_alloc");
  const auto vars = tool::control_vars();
  if (!in_range(cvar_index, vars)) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_handle_alloc", "no such control variable");
  if (!handle || !count) return refuse(MPI_T_ERR_INVALID, "MPI_T_cvar_handle_alloc", "handle or count is NULL");
  auto* h = new MPIR_T_cvar_handle_s{cvar_index};
  ts.cvar_handles.insert(h);
  *handle = h;
  *count = vars[size_t(cvar_index)].count;
  return MPI_SUCCESS;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_handle_free");
  if (!handle || !ts.cvar_handles.count(*handle)) return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_cvar_handle_free", "unknown handle");
  ts.cvar_handles.erase(*handle);
  delete *handle;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_read");
  if (!ts.cvar_handles.count(handle)) return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_cvar_read", "unknown handle");
  if (!buf) return refuse(MPI_T_ERR_INVALID, "MPI_T_cvar_read", "buf is NULL");
  tool::read_control(tool::control_vars()[size_t(handle->index)], buf);
  return MPI_SUCCESS;
}

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  WEFT_TOOL_ENTRY("MPI_T_cvar_write");
  if (!ts.cvar_handles.count(handle)) return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_cvar_write", "unknown handle");
  if (!buf) return refuse(MPI_T_ERR_INVALID, "MPI_T_cvar_write", "buf is NULL");
  return tool::write_control(tool::control_vars()[size_t(handle->index)], buf);
}

// --- performance variables ---

int PMPI_T_pvar_get_num(int* num_pvar) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_get_num");
  if (!num_pvar) return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_get_num", "num_pvar is NULL");
  *num_pvar = int(tool::perf_vars().size());
  return MPI_SUCCESS;
}

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len, int* bind,
                         int* readonly, int* continuous, int* atomic) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_get_info");
  const auto vars = tool::perf_vars();
  if (!in_range(pvar_index, vars)) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_pvar_get_info", "no such performance variable");
  const tool::PerfVar& v = vars[size_t(pvar_index)];
  copy_string(v.name, name, name_len);
  copy_string(v.desc, desc, desc_len);
  if (verbosity) *verbosity = v.verbosity;
  if (var_class) *var_class = v.var_class;
  if (datatype) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly) *readonly = v.readonly;
  if (continuous) *continuous = 1;
  if (atomic) *atomic = 0;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_get_index");
  if (!name || !pvar_index) return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_get_index", "name or pvar_index is NULL");
  if (var_class < MPI_T_PVAR_CLASS_STATE || var_class > MPI_T_PVAR_CLASS_GENERIC)
    return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_get_index", "var_class is not a performance variable class");
  const auto vars = tool::perf_vars();
  for (size_t k = 0; k < vars.size(); ++k)
    if (vars[k].var_class == var_class && vars[k].name == name) return *pvar_index = int(k), MPI_SUCCESS;
  return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_session_create");
  if (!session) return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_session_create", "session is NULL");
  auto* s = new MPIR_T_pvar_session_s;
  ts.sessions.insert(s);
  *session = s;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_session_free");
  if (!session || !valid_session(ts, *session)) return refuse(MPI_T_ERR_INVALID_SESSION, "MPI_T_pvar_session_free", "unknown session");
  ts.sessions.erase(*session);
  delete *session;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void*, MPI_T_pvar_handle* handle,
                             int* count) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_handle_alloc");
  if (!valid_session(ts, session)) return refuse(MPI_T_ERR_INVALID_SESSION, "MPI_T_pvar_handle_alloc", "unknown session");
  const auto vars = tool::perf_vars();
  if (!in_range(pvar_index, vars)) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_pvar_handle_alloc", "no such performance variable");
  if (!handle || !count) return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_handle_alloc", "handle or count is NULL");
  session->handles.push_back(std::make_unique<MPIR_T_pvar_handle_s>(MPIR_T_pvar_handle_s{session, pvar_index, 0}));
  *handle = session->handles.back().get();
  *count = 1;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_handle_free");
  if (!handle) return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_pvar_handle_free", "handle is NULL");
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_handle_free", session, *handle, false)) return rc;
  std::erase_if(session->handles, [&](const auto& h) { return h.get() == *handle; });
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

// Every variable is continuous: there is nothing to start or stop, except through
// MPI_T_PVAR_ALL_HANDLES, which asks for the handles that can be (none).
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_start");
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_start", session, handle, true)) return rc;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_stop");
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_stop", session, handle, true)) return rc;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_read");
  WEFT_ENTRY;  // the counters belong to the layers below
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_read", session, handle, false)) return rc;
  if (!buf) return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_read", "buf is NULL");
  const tool::PerfVar& v = tool::perf_vars()[size_t(handle->index)];
  *static_cast<unsigned long long*>(buf) = read_pvar(v) - handle->origin;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_write");
  WEFT_ENTRY;  // the counters belong to the layers below
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_write", session, handle, false)) return rc;
  if (!buf) return refuse(MPI_T_ERR_INVALID, "MPI_T_pvar_write", "buf is NULL");
  const tool::PerfVar& v = tool::perf_vars()[size_t(handle->index)];
  if (v.readonly) return refuse(MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_pvar_write", "the variable is read-only");
  handle->origin = read_pvar(v) - *static_cast<const unsigned long long*>(buf);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_reset");
  WEFT_ENTRY;  // the counters belong to the layers below
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_reset", session, handle, true)) return rc;
  const auto vars = tool::perf_vars();
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    for (auto& h : session->handles)
      if (!vars[size_t(h->index)].readonly) h->origin = read_pvar(vars[size_t(h->index)]);
    return MPI_SUCCESS;
  }
  const tool::PerfVar& v = vars[size_t(handle->index)];
  if (v.readonly) return refuse(MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_pvar_reset", "the variable is read-only");
  handle->origin = read_pvar(v);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void*) {
  WEFT_TOOL_ENTRY("MPI_T_pvar_readreset");
  if (int rc = check_pvar_call(ts, "MPI_T_pvar_readreset", session, handle, false)) return rc;
  return refuse(MPI_T_ERR_PVAR_NO_ATOMIC, "MPI_T_pvar_readreset",
                "the variables are not atomic (read, then reset)");
}

// --- categories ---

int PMPI_T_category_get_num(int* num_cat) {
  WEFT_TOOL_ENTRY("MPI_T_category_get_num");
  if (!num_cat) return refuse(MPI_T_ERR_INVALID, "MPI_T_category_get_num", "num_cat is NULL");
  *num_cat = int(tool::categories().size());
  return MPI_SUCCESS;
}

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len, int* num_cvars,
                             int* num_pvars, int* num_categories) {
  WEFT_TOOL_ENTRY("MPI_T_category_get_info");
  const auto cats = tool::categories();
  if (!in_range(cat_index, cats)) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_info", "no such category");
  const tool::Category& c = cats[size_t(cat_index)];
  copy_string(c.name, name, name_len);
  copy_string(c.desc, desc, desc_len);
  if (num_cvars) *num_cvars = int(c.cvars.size());
  if (num_pvars) *num_pvars = int(c.pvars.size());
  if (num_categories) *num_categories = 0;  // the layers are not nested
  return MPI_SUCCESS;
}

int PMPI_T_category_get_index(const char* name, int* cat_index) {
  WEFT_TOOL_ENTRY("MPI_T_category_get_index");
  if (!name || !cat_index) return refuse(MPI_T_ERR_INVALID, "MPI_T_category_get_index", "name or cat_index is NULL");
  const auto cats = tool::categories();
  for (size_t k = 0; k < cats.size(); ++k)
    if (strcmp(cats[k].name, name) == 0) return *cat_index = int(k), MPI_SUCCESS;
  return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return category_list("MPI_T_category_get_cvars", cat_index, len, indices, &tool::Category::cvars);
}

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return category_list("MPI_T_category_get_pvars", cat_index, len, indices, &tool::Category::pvars);
}

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  WEFT_TOOL_ENTRY("MPI_T_category_get_categories");
  if (!in_range(cat_index, tool::categories())) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_categories", "no such category");
  (void)len, (void)indices;  // the layers are not nested: nothing to list
  return MPI_SUCCESS;
}

int PMPI_T_category_changed(int* update_number) {
  WEFT_TOOL_ENTRY("MPI_T_category_changed");
  if (!update_number) return refuse(MPI_T_ERR_INVALID, "MPI_T_category_changed", "update_number is NULL");
  *update_number = 0;  // the tables never change
  return MPI_SUCCESS;
}

// --- events (none) ---

int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
  WEFT_TOOL_ENTRY("MPI_T_category_get_num_events");
  if (!in_range(cat_index, tool::categories())) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_num_events", "no such category");
  if (num_events) *num_events = 0;
  return MPI_SUCCESS;
}

int PMPI_T_category_get_events(int cat_index, int, int*) {
  WEFT_TOOL_ENTRY("MPI_T_category_get_events");
  if (!in_range(cat_index, tool::categories())) return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_events", "no such category");
  return MPI_SUCCESS;
}

int PMPI_T_source_get_num(int* num_sources) {
  WEFT_TOOL_ENTRY("MPI_T_source_get_num");
  if (num_sources) *num_sources = 0;
  return MPI_SUCCESS;
}

int PMPI_T_source_get_info(int, char*, int*, char*, int*, MPI_T_source_order*, MPI_Count*, MPI_Count*, MPI_Info*) {
  WEFT_TOOL_ENTRY("MPI_T_source_get_info");
  return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_info", "weft has no event sources");
}

int PMPI_T_source_get_timestamp(int, MPI_Count*) {
  WEFT_TOOL_ENTRY("MPI_T_source_get_timestamp");
  return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_timestamp", "weft has no event sources");
}

int PMPI_T_event_get_num(int* num_events) {
  WEFT_TOOL_ENTRY("MPI_T_event_get_num");
  if (num_events) *num_events = 0;
  return MPI_SUCCESS;
}

int PMPI_T_event_get_info(int, char*, int*, int*, MPI_Datatype[], MPI_Aint[], int*, MPI_T_enum*, MPI_Info*, char*,
                          int*, int*) {
  WEFT_TOOL_ENTRY("MPI_T_event_get_info");
  return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_event_get_info", "weft has no events");
}

int PMPI_T_event_get_index(const char*, int*) {
  WEFT_TOOL_ENTRY("MPI_T_event_get_index");
  return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_event_handle_alloc(int, void*, MPI_Info, MPI_T_event_registration*) {
  WEFT_TOOL_ENTRY("MPI_T_event_handle_alloc");
  return refuse(MPI_T_ERR_INVALID_INDEX, "MPI_T_event_handle_alloc", "weft has no events");
}

int PMPI_T_event_handle_free(MPI_T_event_registration, void*, MPI_T_event_free_cb_function*) {
  WEFT_TOOL_ENTRY("MPI_T_event_handle_free");
  return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_event_handle_free", "weft has no event registrations");
}

int PMPI_T_event_register_callback(MPI_T_event_registration, MPI_T_cb_safety, MPI_Info, void*,
                                   MPI_T_event_cb_function*) {
  WEFT_TOOL_ENTRY("MPI_T_event_register_callback");
  return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_event_register_callback", "weft has no event registrations");
}

int PMPI_T_event_read(MPI_T_event_instance, int, void*) {
  WEFT_TOOL_ENTRY("MPI_T_event_read");
  return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_event_read", "weft has no event instances");
}

int PMPI_T_event_copy(MPI_T_event_instance, void*) {
  WEFT_TOOL_ENTRY("MPI_T_event_copy");
  return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_event_copy", "weft has no event instances");
}

int PMPI_T_event_get_timestamp(MPI_T_event_instance, MPI_Count*) {
  WEFT_TOOL_ENTRY("MPI_T_event_get_timestamp");
  return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_event_get_timestamp", "weft has no event instances");
}

int PMPI_T_event_get_source(MPI_T_event_instance, int*) {
  WEFT_TOOL_ENTRY("MPI_T_event_get_source");
  return refuse(MPI_T_ERR_INVALID_HANDLE, "MPI_T_event_get_source", "weft has no event instances");
}

}  // extern "C"

WEFT_PMPI_ALIASES(T_init_thread, T_finalize, T_enum_get_info, T_enum_get_item, T_cvar_get_num, T_cvar_get_info,
                  T_cvar_get_index, T_cvar_handle_alloc, T_cvar_handle_free, T_cvar_read, T_cvar_write,
                  T_pvar_get_num, T_pvar_get_info, T_pvar_get_index, T_pvar_session_create, T_pvar_session_free,
                  T_pvar_handle_alloc, T_pvar_handle_free, T_pvar_start, T_pvar_stop, T_pvar_read, T_pvar_write,
                  T_pvar_reset, T_pvar_readreset, T_category_get_num, T_category_get_info, T_category_get_index,
                  T_category_get_cvars, T_category_get_pvars, T_category_get_categories, T_category_changed,
                  T_category_get_num_events, T_category_get_events, T_source_get_num, T_source_get_info,
                  T_source_get_timestamp, T_event_get_num, T_event_get_info, T_event_get_index,
                  T_event_handle_alloc, T_event_handle_free, T_event_register_callback, T_event_read,
                  T_event_copy, T_event_get_timestamp, T_event_get_source)
