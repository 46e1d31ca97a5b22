// Communicator attributes: the MPI keyval handles over the runtime's keys (runtime/attributes.h),
// the adapter that calls the user's copy and delete functions, and the predefined attributes.
#include "state.h"

namespace weft::mpi {
int last_used_error_code();
}

using namespace weft;
using namespace weft::mpi;

namespace {

bool is_predefined_key(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE ||
         keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM;
}

// The runtime's key behind a comm keyval handle; 0 (no key) for anything else.
uint32_t comm_key(int keyval) {
  if (handle::kind_of(keyval) != handle::direct || handle::obj_of(keyval) != handle::keyval) return 0;
  const uint32_t key = handle::index_of(keyval);
  return g_state->attributes.is_key(key, AttrObject::comm) ? key : 0;
}

int keyval_handle(uint32_t key) { return handle::make(handle::direct, handle::keyval, key); }

// The values the predefined attributes point to (their storage must outlive every call).
struct Predefined {
  int tag_ub, host, io, wtime_is_global, universe_size, lastusedcode, appnum;
};
Predefined g_predefined;

void* predefined_value(int keyval) {
  Predefined& p = g_predefined;
  p.tag_ub = 8388607;  // pt2pt/tag.h kMaxUserTag
  p.host = MPI_PROC_NULL;
  p.io = MPI_ANY_SOURCE;
  p.wtime_is_global = 0;
  p.universe_size = g_state->boot->size();
  p.lastusedcode = last_used_error_code();
  p.appnum = 0;
  switch (keyval) {
    case MPI_TAG_UB: return &p.tag_ub;
    case MPI_HOST: return &p.host;
    case MPI_IO: return &p.io;
    case MPI_WTIME_IS_GLOBAL: return &p.wtime_is_global;
    case MPI_UNIVERSE_SIZE: return &p.universe_size;
    case MPI_LASTUSEDCODE: return &p.lastusedcode;
    case MPI_APPNUM: return &p.appnum;
  }
  return nullptr;
}

// The comm keys' callbacks, called as the user wrote them; an error is raised on the object.
int copy_comm_attr(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value, void** out,
                   bool* keep) {
  const MPI_Comm from = MPI_Comm(object);
  int flag = 0;
  int rc = reinterpret_cast<MPI_Comm_copy_attr_function*>(cb.copy)(from, keyval_handle(key), cb.extra_state,
                                                                   value, out, &flag);
  if (rc != MPI_SUCCESS) return raise(from, rc, "attribute copy callback", "returned error %d", rc);
  *keep = flag != 0;
  return MPI_SUCCESS;
}

int delete_comm_attr(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value) {
  const MPI_Comm comm = MPI_Comm(object);
  int rc = reinterpret_cast<MPI_Comm_delete_attr_function*>(cb.del)(comm, keyval_handle(key), value,
                                                                    cb.extra_state);
  if (rc != MPI_SUCCESS) return raise(comm, rc, "attribute delete callback", "returned error %d", rc);
  return MPI_SUCCESS;
}

constexpr AttrAdapter kCommAdapter{copy_comm_attr, delete_comm_attr};

}  // namespace

namespace weft::mpi {

int copy_attributes(MPI_Comm from, MPI_Comm to) {
  return g_state->attributes.copy_all(lookup_comm_entry(from)->attrs, from, lookup_comm_entry(to)->attrs,
                                      kCommAdapter);
}

int delete_all_attributes(MPI_Comm comm) {
  return g_state->attributes.clear(lookup_comm_entry(comm)->attrs, kCommAdapter, comm);
}

}  // namespace weft::mpi

extern "C" {

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                            MPI_Comm_delete_attr_function* delete_fn, int* keyval,
                            void* extra_state) {
  WEFT_REQUIRE_INIT("MPI_Comm_create_keyval");
  if (!keyval) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval", "keyval is NULL");
  const AttrCallbacks cb{reinterpret_cast<AttrCallbacks::Fn>(copy_fn), reinterpret_cast<AttrCallbacks::Fn>(delete_fn),
                         extra_state};
  *keyval = keyval_handle(g_state->attributes.create_key(AttrObject::comm, cb));
  return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int* keyval) {
  WEFT_REQUIRE_INIT("MPI_Comm_free_keyval");
  if (!keyval) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free_keyval", "keyval is NULL");
  if (is_predefined_key(*keyval))
    return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "predefined keyval 0x%x cannot be freed", unsigned(*keyval));
  const uint32_t key = comm_key(*keyval);
  if (!key) return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "invalid keyval 0x%x", unsigned(*keyval));
  g_state->attributes.free_key(key);  // attributes still set with it keep it alive
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

namespace {
// The communicator and user key of a call that may not touch a predefined attribute (`refusal`:
// what it would do to one).
int user_key(const char* fn, MPI_Comm comm, int keyval, const char* refusal, CommEntry** e, uint32_t* key) {
  if (int rc = comm_entry_of(fn, comm, e)) return rc;
  if (is_predefined_key(keyval))
    return raise(comm, MPI_ERR_KEYVAL, fn, "predefined attribute 0x%x %s", unsigned(keyval), refusal);
  *key = comm_key(keyval);
  if (!*key) return raise(comm, MPI_ERR_KEYVAL, fn, "invalid keyval 0x%x", unsigned(keyval));
  return MPI_SUCCESS;
}
}  // namespace

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void* attribute_val) {
  CommEntry* e;
  uint32_t key;
  if (int rc = user_key("MPI_Comm_set_attr", comm, keyval, "is read-only", &e, &key)) return rc;
  return g_state->attributes.set(e->attrs, key, attribute_val, kCommAdapter, comm);
}

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_get_attr", comm, &e)) return rc;
  if (!attribute_val || !flag) return raise(comm, MPI_ERR_ARG, "MPI_Comm_get_attr", "attribute_val or flag is NULL");
  if (is_predefined_key(keyval)) {
    *static_cast<void**>(attribute_val) = predefined_value(keyval);
    *flag = 1;
    return MPI_SUCCESS;
  }
  const uint32_t key = comm_key(keyval);
  if (!key) return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval 0x%x", unsigned(keyval));
  *flag = g_state->attributes.get(e->attrs, key, static_cast<void**>(attribute_val));
  return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  CommEntry* e;
  uint32_t key;
  if (int rc = user_key("MPI_Comm_delete_attr", comm, keyval, "cannot be deleted", &e, &key)) return rc;
  void* value;
  if (!g_state->attributes.get(e->attrs, key, &value))
    return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "no attribute set for keyval 0x%x", unsigned(keyval));
  return g_state->attributes.remove(e->attrs, key, kCommAdapter, comm);
}

// MPI-1 names.
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
int PMPI_Keyval_free(int* keyval) { return PMPI_Comm_free_keyval(keyval); }
int PMPI_Attr_put(MPI_Comm comm, int keyval, void* value) { return PMPI_Comm_set_attr(comm, keyval, value); }
int PMPI_Attr_get(MPI_Comm comm, int keyval, void* value, int* flag) {
  return PMPI_Comm_get_attr(comm, keyval, value, flag);
}
int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return PMPI_Comm_delete_attr(comm, keyval); }

}  // extern "C"

WEFT_PMPI_ALIASES(Comm_create_keyval, Comm_free_keyval, Comm_set_attr, Comm_get_attr,
                  Comm_delete_attr, Keyval_create, Keyval_free, Attr_put, Attr_get, Attr_delete)
