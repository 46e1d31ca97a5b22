// Info objects: ordered (key, value) string pairs; MPI_INFO_ENV describes this process.
#include <cstring>

#include "runtime/launch_env.h"
#include "state.h"

namespace weft::mpi {

HandleTable<InfoEntries>& info_table() {
  static HandleTable<InfoEntries> table{2};
  return table;
}

namespace {
InfoEntries& env_info() {
  static InfoEntries env;
  if (env.empty() && g_state) {
    const char* levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                            "MPI_THREAD_MULTIPLE"};
    env = process_info(*g_state->boot, levels[g_state->thread_level]);
  }
  return env;
}
}  // namespace

InfoEntries* lookup_info(MPI_Info h) {
  if (h == MPI_INFO_ENV) return &env_info();
  if (handle::kind_of(h) != handle::direct || handle::obj_of(h) != handle::info) return nullptr;
  const uint32_t idx = handle::index_of(h);
  return idx >= 2 ? info_table().get(idx) : nullptr;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {

int bad_info(const char* fn, MPI_Info info) {
  return raise(MPI_COMM_NULL, MPI_ERR_INFO, fn, "invalid info 0x%x (argument 'info')", unsigned(info));
}

int check_key(const char* fn, const char* key) {
  if (!key) return raise(MPI_COMM_NULL, MPI_ERR_INFO_KEY, fn, "key is NULL");
  size_t n = strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY)
    return raise(MPI_COMM_NULL, MPI_ERR_INFO_KEY, fn, "key of %zu characters (1 to %d allowed)", n, MPI_MAX_INFO_KEY);
  return MPI_SUCCESS;
}

// Copies value into a caller's buffer of valuelen characters plus the terminating NUL.
void copy_out(const std::string& v, int valuelen, char* out) {
  size_t n = std::min(v.size(), size_t(valuelen < 0 ? 0 : valuelen));
  memcpy(out, v.data(), n);
  out[n] = '\0';
}

// A binding's start: info valid (and not MPI_INFO_ENV if it is to change). MPI need not be
// initialised (MPI 4.0).
int info_of(const char* fn, MPI_Info info, InfoEntries** e, bool change = false) {
  *e = lookup_info(info);
  if (!*e || (change && info == MPI_INFO_ENV)) return bad_info(fn, info);
  return MPI_SUCCESS;
}

// ... and a valid key.
int info_and_key(const char* fn, MPI_Info info, const char* key, InfoEntries** e, bool change = false) {
  if (int rc = info_of(fn, info, e, change)) return rc;
  return check_key(fn, key);
}

// A query's start: info (and *key, if given) valid, and the outputs `names` given.
int info_query(const char* fn, MPI_Info info, InfoEntries** e, bool outputs, const char* names,
               const char* const* key = nullptr) {
  if (int rc = key ? info_and_key(fn, info, *key, e) : info_of(fn, info, e)) return rc;
  return outputs ? MPI_SUCCESS : raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "%s is NULL", names);
}

}  // namespace

extern "C" {

int PMPI_Info_create(MPI_Info* info) {
  WEFT_ENTRY;
  if (!info) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
  *info = handle::make(handle::direct, handle::info, info_table().add(std::make_unique<InfoEntries>()));
  return MPI_SUCCESS;
}

// MPI 4.0: callable before MPI_Init and after MPI_Finalize; the keys that do not depend on
// initialisation, so the object is the same at every point of the process's life.
int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  WEFT_ENTRY;
  if (!info) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_create_env", "info is NULL");
  auto entries = std::make_unique<InfoEntries>(launch_environment(argc, argv));
  *info = handle::make(handle::direct, handle::info, info_table().add(std::move(entries)));
  return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_and_key("MPI_Info_set", info, key, &e, true)) return rc;
  if (!value || strlen(value) > MPI_MAX_INFO_VAL)
    return raise(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set", "value is NULL or longer than MPI_MAX_INFO_VAL");
  e->set(key, value);
  return MPI_SUCCESS;
}

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_query("MPI_Info_get", info, &e, flag && (value || valuelen <= 0), "value or flag", &key)) return rc;
  const std::string* v = e->find(key);
  *flag = v != nullptr;
  if (v) copy_out(*v, valuelen, value);
  return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_query("MPI_Info_get_valuelen", info, &e, valuelen && flag, "valuelen or flag", &key)) return rc;
  const std::string* v = e->find(key);
  *flag = v != nullptr;
  if (v) *valuelen = int(v->size());
  return MPI_SUCCESS;
}

// MPI 4.0: buflen in, length of the value + 1 out; the value truncated to fit.
int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_query("MPI_Info_get_string", info, &e, buflen && flag, "buflen or flag", &key)) return rc;
  const std::string* v = e->find(key);
  *flag = v != nullptr;
  if (!v) return MPI_SUCCESS;
  if (*buflen > 0 && value) copy_out(*v, *buflen - 1, value);
  *buflen = int(v->size()) + 1;
  return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_query("MPI_Info_get_nkeys", info, &e, nkeys, "nkeys")) return rc;
  *nkeys = int(e->size());
  return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_query("MPI_Info_get_nthkey", info, &e, key, "key")) return rc;
  if (n < 0 || n >= int(e->size()))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey", "n %d out of range (%zu keys)", n, e->size());
  copy_out((*e)[size_t(n)].first, MPI_MAX_INFO_KEY, key);
  return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_and_key("MPI_Info_delete", info, key, &e, true)) return rc;
  if (!e->erase(key)) return raise(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "key '%s' is not set", key);
  return MPI_SUCCESS;
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  WEFT_ENTRY;
  InfoEntries* e;
  if (int rc = info_query("MPI_Info_dup", info, &e, newinfo, "newinfo")) return rc;
  *newinfo = handle::make(handle::direct, handle::info, info_table().add(std::make_unique<InfoEntries>(*e)));
  return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* info) {
  WEFT_ENTRY;
  if (!info || !lookup_info(*info) || *info == MPI_INFO_ENV)
    return bad_info("MPI_Info_free", info ? *info : MPI_INFO_NULL);
  info_table().remove(handle::index_of(*info));
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Info_create, Info_create_env, Info_set, Info_get, Info_get_valuelen, Info_get_string,
                  Info_get_nkeys, Info_get_nthkey, Info_delete, Info_dup, Info_free)
