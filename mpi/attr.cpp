// Communicator attributes: keyvals with copy and delete callbacks, predefined attributes.
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

Keyval* lookup_keyval(int keyval) {
  if (handle::kind_of(keyval) != handle::direct || handle::obj_of(keyval) != handle::keyval)
    return nullptr;
  return g_state->keyvals.get(handle::index_of(keyval));
}

void release_keyval(int keyval) {
  Keyval* k = lookup_keyval(keyval);
  if (k && --k->refs == 0) g_state->keyvals.remove(handle::index_of(keyval));
}

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

int call_delete(MPI_Comm comm, int keyval, void* value) {
  Keyval* k = lookup_keyval(keyval);
  if (k && k->del) {
    int rc = k->del(comm, keyval, value, k->extra_state);
    if (rc != MPI_SUCCESS) return raise(comm, rc, "attribute delete callback", "returned error %d", rc);
  }
  return MPI_SUCCESS;
}

}  // namespace

namespace weft::mpi {

int copy_attributes(MPI_Comm from, MPI_Comm to) {
  CommEntry* src = lookup_comm_entry(from);
  CommEntry* dst = lookup_comm_entry(to);
  for (auto& [keyval, value] : src->attrs) {
    Keyval* k = lookup_keyval(keyval);
    if (!k || !k->copy) continue;  // MPI_COMM_NULL_COPY_FN: not copied
    void* out = nullptr;
    int flag = 0;
    int rc = k->copy(from, keyval, k->extra_state, value, &out, &flag);
    if (rc != MPI_SUCCESS) return raise(from, rc, "attribute copy callback", "returned error %d", rc);
    if (flag) {
      dst->attrs[keyval] = out;
      ++k->refs;
    }
  }
  return MPI_SUCCESS;
}

int delete_all_attributes(MPI_Comm comm) {
  CommEntry* e = lookup_comm_entry(comm);
  while (!e->attrs.empty()) {
    auto it = e->attrs.begin();
    int keyval = it->first;
    void* value = it->second;
    e->attrs.erase(it);
    int rc = call_delete(comm, keyval, value);
    release_keyval(keyval);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

extern "C" {

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                            MPI_Comm_delete_attr_function* delete_fn, int* keyval,
                            void* extra_state) {
  WEFT_REQUIRE_INIT("MPI_Comm_create_keyval");
  if (!keyval) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_create_keyval", "keyval is NULL");
  auto k = std::make_unique<Keyval>();
  k->copy = copy_fn;
  k->del = delete_fn;
  k->extra_state = extra_state;
  *keyval = handle::make(handle::direct, handle::keyval, g_state->keyvals.add(std::move(k)));
  return MPI_SUCCESS;
}

int PMPI_Comm_free_keyval(int* keyval) {
  WEFT_REQUIRE_INIT("MPI_Comm_free_keyval");
  if (!keyval) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free_keyval", "keyval is NULL");
  if (is_predefined_key(*keyval))
    return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "predefined keyval 0x%x cannot be freed", unsigned(*keyval));
  if (!lookup_keyval(*keyval))
    return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "invalid keyval 0x%x", unsigned(*keyval));
  release_keyval(*keyval);  // attributes still set with it keep it alive
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void* attribute_val) {
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_set_attr", comm, &e)) return rc;
  if (is_predefined_key(keyval))
    return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "predefined attribute 0x%x is read-only", unsigned(keyval));
  Keyval* k = lookup_keyval(keyval);
  if (!k) return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "invalid keyval 0x%x", unsigned(keyval));
  auto it = e->attrs.find(keyval);
  if (it != e->attrs.end()) {  // replacing a value deletes the old one first
    int rc = call_delete(comm, keyval, it->second);
    if (rc != MPI_SUCCESS) return rc;
    it->second = attribute_val;
  } else {
    e->attrs[keyval] = attribute_val;
    ++k->refs;
  }
  return MPI_SUCCESS;
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
  if (!lookup_keyval(keyval)) return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "invalid keyval 0x%x", unsigned(keyval));
  auto it = e->attrs.find(keyval);
  *flag = it != e->attrs.end();
  if (*flag) *static_cast<void**>(attribute_val) = it->second;
  return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_delete_attr", comm, &e)) return rc;
  if (is_predefined_key(keyval))
    return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "predefined attribute 0x%x cannot be deleted", unsigned(keyval));
  if (!lookup_keyval(keyval)) return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "invalid keyval 0x%x", unsigned(keyval));
  auto it = e->attrs.find(keyval);
  if (it == e->attrs.end()) return raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "no attribute set for keyval 0x%x", unsigned(keyval));
  void* value = it->second;
  e->attrs.erase(it);
  int rc = call_delete(comm, keyval, value);
  release_keyval(keyval);
  return rc;
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
