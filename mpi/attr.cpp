// Attributes of communicators, windows and datatypes: the MPI keyval handles over the runtime's
// keys (runtime/attributes.h), the adapter that calls the user's copy and delete functions, and
// the predefined attributes of communicators and windows.
#include <algorithm>
#include <type_traits>
#include <unordered_map>

#include "state.h"
#include "window_entry.h"

namespace weft::mpi {
int last_used_error_code();
}

using namespace weft;
using namespace weft::mpi;

namespace {

// MPICH's handles are ints, so the copy and delete functions of the three kinds of object have
// one signature (MPI_Comm_copy_attr_function's) and one adapter serves them all.
static_assert(std::is_same_v<MPI_Comm, int> && std::is_same_v<MPI_Win, int> && std::is_same_v<MPI_Datatype, int>);

bool is_predefined_key(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_HOST || keyval == MPI_IO ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_UNIVERSE_SIZE ||
         keyval == MPI_LASTUSEDCODE || keyval == MPI_APPNUM;
}

bool is_predefined_win_key(int keyval) {
  return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
         keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

// The runtime's key behind a keyval handle of this kind; 0 (no key) for anything else.
uint32_t key_of(AttrObject kind, int keyval) {
  if (handle::kind_of(keyval) != handle::direct || handle::obj_of(keyval) != handle::keyval) return 0;
  const uint32_t key = handle::index_of(keyval);
  return g_state->attributes.is_key(key, kind) ? key : 0;
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
  // Every code weft makes is below MPI_ERR_LASTCODE (MPICH's value), which the standard makes
  // the least this attribute may be.
  p.lastusedcode = std::max(int(MPI_ERR_LASTCODE), last_used_error_code());
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

// Where an error of a callback (or of a call) on an object of kind K is raised: the
// communicator, the window's communicator, MPI_COMM_WORLD for datatypes.
template <AttrObject K>
MPI_Comm error_comm(int object) {
  if constexpr (K == AttrObject::comm) return object;
  if constexpr (K == AttrObject::win) return lookup_win(object) ? lookup_win(object)->comm : MPI_COMM_NULL;
  return MPI_COMM_NULL;
}

// The callbacks, called as the user wrote them; an error is raised on the object.
template <AttrObject K>
int copy_attr(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value, void** out, bool* keep) {
  int flag = 0;
  const int rc = reinterpret_cast<MPI_Comm_copy_attr_function*>(cb.copy)(int(object), keyval_handle(key),
                                                                         cb.extra_state, value, out, &flag);
  if (rc != MPI_SUCCESS)
    return raise(error_comm<K>(int(object)), rc, "attribute copy callback", "returned error %d", rc);
  *keep = flag != 0;
  return MPI_SUCCESS;
}

template <AttrObject K>
int delete_attr(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value) {
  const int rc = reinterpret_cast<MPI_Comm_delete_attr_function*>(cb.del)(int(object), keyval_handle(key), value,
                                                                          cb.extra_state);
  if (rc != MPI_SUCCESS)
    return raise(error_comm<K>(int(object)), rc, "attribute delete callback", "returned error %d", rc);
  return MPI_SUCCESS;
}

template <AttrObject K>
constexpr AttrAdapter kAdapter{copy_attr<K>, delete_attr<K>};

// Datatype handles' attributes (derived types: until MPI_Type_free, which ends the handle).
std::unordered_map<MPI_Datatype, AttributeSet>& type_attrs() {
  static auto* m = new std::unordered_map<MPI_Datatype, AttributeSet>;  // handles outlive statics
  return *m;
}

// MPI_X_create_keyval and MPI_X_free_keyval of every kind.
int create_keyval(const char* fn, AttrObject kind, MPI_Comm_copy_attr_function* copy_fn,
                  MPI_Comm_delete_attr_function* delete_fn, int* keyval, void* extra_state) {
  WEFT_REQUIRE_INIT(fn);
  if (!keyval) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "keyval is NULL");
  const AttrCallbacks cb{reinterpret_cast<AttrCallbacks::Fn>(copy_fn), reinterpret_cast<AttrCallbacks::Fn>(delete_fn),
                         extra_state};
  *keyval = keyval_handle(g_state->attributes.create_key(kind, cb));
  return MPI_SUCCESS;
}

int free_keyval(const char* fn, AttrObject kind, int* keyval) {
  WEFT_REQUIRE_INIT(fn);
  if (!keyval) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "keyval is NULL");
  if (is_predefined_key(*keyval) || is_predefined_win_key(*keyval))
    return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, fn, "predefined keyval 0x%x cannot be freed", unsigned(*keyval));
  const uint32_t key = key_of(kind, *keyval);
  if (!key) return raise(MPI_COMM_NULL, MPI_ERR_KEYVAL, fn, "invalid keyval 0x%x", unsigned(*keyval));
  g_state->attributes.free_key(key);  // attributes still set with it keep it alive
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

// The user key of a call on an attribute set of `object` (raising on comm) that may not touch
// a predefined attribute (`refusal`: what it would do to one).
int user_key(const char* fn, AttrObject kind, MPI_Comm comm, int keyval, const char* refusal, uint32_t* key) {
  if (is_predefined_key(keyval) || is_predefined_win_key(keyval))
    return raise(comm, MPI_ERR_KEYVAL, fn, "predefined attribute 0x%x %s", unsigned(keyval), refusal);
  *key = key_of(kind, keyval);
  if (!*key) return raise(comm, MPI_ERR_KEYVAL, fn, "invalid keyval 0x%x", unsigned(keyval));
  return MPI_SUCCESS;
}

// The set, get and delete calls of every kind on the object's set s.
template <AttrObject K>
int set_attr(const char* fn, AttributeSet& s, int object, int keyval, void* value) {
  uint32_t key;
  if (int rc = user_key(fn, K, error_comm<K>(object), keyval, "is read-only", &key)) return rc;
  return g_state->attributes.set(s, key, value, kAdapter<K>, object);
}

template <AttrObject K>
int get_attr(const char* fn, const AttributeSet& s, int object, int keyval, void* value, int* flag) {
  if (!value || !flag) return raise(error_comm<K>(object), MPI_ERR_ARG, fn, "attribute_val or flag is NULL");
  const uint32_t key = key_of(K, keyval);
  if (!key) return raise(error_comm<K>(object), MPI_ERR_KEYVAL, fn, "invalid keyval 0x%x", unsigned(keyval));
  *flag = g_state->attributes.get(s, key, static_cast<void**>(value));
  return MPI_SUCCESS;
}

template <AttrObject K>
int delete_attr_call(const char* fn, AttributeSet& s, int object, int keyval) {
  uint32_t key;
  if (int rc = user_key(fn, K, error_comm<K>(object), keyval, "cannot be deleted", &key)) return rc;
  void* value;
  if (!g_state->attributes.get(s, key, &value))
    return raise(error_comm<K>(object), MPI_ERR_KEYVAL, fn, "no attribute set for keyval 0x%x", unsigned(keyval));
  return g_state->attributes.remove(s, key, kAdapter<K>, object);
}

int type_of(const char* fn, MPI_Datatype type) {
  WEFT_REQUIRE_INIT(fn);
  if (!lookup_datatype(type))
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype 0x%x (argument 'datatype')", unsigned(type));
  return MPI_SUCCESS;
}

}  // namespace

namespace weft::mpi {

int copy_attributes(MPI_Comm from, MPI_Comm to) {
  return g_state->attributes.copy_all(lookup_comm_entry(from)->attrs, from, lookup_comm_entry(to)->attrs,
                                      kAdapter<AttrObject::comm>);
}

int delete_all_attributes(MPI_Comm comm) {
  return g_state->attributes.clear(lookup_comm_entry(comm)->attrs, kAdapter<AttrObject::comm>, comm);
}

int copy_type_attributes(MPI_Datatype from, MPI_Datatype to) {
  auto it = type_attrs().find(from);
  if (it == type_attrs().end()) return MPI_SUCCESS;
  AttributeSet copy;
  const int rc = g_state->attributes.copy_all(it->second, from, copy, kAdapter<AttrObject::datatype>);
  if (!copy.empty()) type_attrs()[to] = std::move(copy);  // what was copied before an error, to be deleted
  return rc;
}

int delete_type_attributes(MPI_Datatype type) {
  auto it = type_attrs().find(type);
  if (it == type_attrs().end()) return MPI_SUCCESS;
  if (int rc = g_state->attributes.clear(it->second, kAdapter<AttrObject::datatype>, type)) return rc;
  type_attrs().erase(type);
  return MPI_SUCCESS;
}

int delete_window_attributes(MPI_Win win, WinEntry& e) {
  return g_state->attributes.clear(e.attrs, kAdapter<AttrObject::win>, win);
}

}  // namespace weft::mpi

extern "C" {

// ---- Communicators ----

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn, MPI_Comm_delete_attr_function* delete_fn,
                            int* keyval, void* extra_state) {
  WEFT_ENTRY;
  return create_keyval("MPI_Comm_create_keyval", AttrObject::comm, copy_fn, delete_fn, keyval, extra_state);
}

int PMPI_Comm_free_keyval(int* keyval) { WEFT_ENTRY; return free_keyval("MPI_Comm_free_keyval", AttrObject::comm, keyval); }

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void* attribute_val) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_set_attr", comm, &e)) return rc;
  return set_attr<AttrObject::comm>("MPI_Comm_set_attr", e->attrs, comm, keyval, attribute_val);
}

int PMPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_get_attr", comm, &e)) return rc;
  if (is_predefined_key(keyval) && attribute_val && flag) {
    *static_cast<void**>(attribute_val) = predefined_value(keyval);
    *flag = 1;
    return MPI_SUCCESS;
  }
  return get_attr<AttrObject::comm>("MPI_Comm_get_attr", e->attrs, comm, keyval, attribute_val, flag);
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Comm_delete_attr", comm, &e)) return rc;
  return delete_attr_call<AttrObject::comm>("MPI_Comm_delete_attr", e->attrs, comm, keyval);
}

// MPI-1 names.
int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                       void* extra_state) {
  WEFT_ENTRY;
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
int PMPI_Keyval_free(int* keyval) { WEFT_ENTRY; return PMPI_Comm_free_keyval(keyval); }
int PMPI_Attr_put(MPI_Comm comm, int keyval, void* value) { WEFT_ENTRY; return PMPI_Comm_set_attr(comm, keyval, value); }
int PMPI_Attr_get(MPI_Comm comm, int keyval, void* value, int* flag) {
  WEFT_ENTRY;
  return PMPI_Comm_get_attr(comm, keyval, value, flag);
}
int PMPI_Attr_delete(MPI_Comm comm, int keyval) { WEFT_ENTRY; return PMPI_Comm_delete_attr(comm, keyval); }

// ---- Windows ----

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* copy_fn, MPI_Win_delete_attr_function* delete_fn,
                           int* keyval, void* extra_state) {
  WEFT_ENTRY;
  return create_keyval("MPI_Win_create_keyval", AttrObject::win, copy_fn, delete_fn, keyval, extra_state);
}

int PMPI_Win_free_keyval(int* keyval) { WEFT_ENTRY; return free_keyval("MPI_Win_free_keyval", AttrObject::win, keyval); }

int PMPI_Win_set_attr(MPI_Win win, int keyval, void* attribute_val) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_set_attr", win, &e)) return rc;
  return set_attr<AttrObject::win>("MPI_Win_set_attr", e->attrs, win, keyval, attribute_val);
}

int PMPI_Win_get_attr(MPI_Win win, int keyval, void* attribute_val, int* flag) {
  WEFT_ENTRY;
  const char* fn = "MPI_Win_get_attr";
  WinEntry* e;
  if (int rc = check_win(fn, win, &e)) return rc;
  if (!is_predefined_win_key(keyval) || !attribute_val || !flag)
    return get_attr<AttrObject::win>(fn, e->attrs, win, keyval, attribute_val, flag);
  void* p = nullptr;
  switch (keyval) {
    case MPI_WIN_BASE: p = e->win->base(); break;
    case MPI_WIN_SIZE: p = &e->size; break;
    case MPI_WIN_DISP_UNIT: p = &e->disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: p = &e->flavor; break;
    case MPI_WIN_MODEL: p = &e->model; break;
  }
  *static_cast<void**>(attribute_val) = p;
  *flag = 1;
  return MPI_SUCCESS;
}

int PMPI_Win_delete_attr(MPI_Win win, int keyval) {
  WEFT_ENTRY;
  WinEntry* e;
  if (int rc = check_win("MPI_Win_delete_attr", win, &e)) return rc;
  return delete_attr_call<AttrObject::win>("MPI_Win_delete_attr", e->attrs, win, keyval);
}

// ---- Datatypes ----

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* copy_fn, MPI_Type_delete_attr_function* delete_fn,
                            int* keyval, void* extra_state) {
  WEFT_ENTRY;
  return create_keyval("MPI_Type_create_keyval", AttrObject::datatype, copy_fn, delete_fn, keyval, extra_state);
}

int PMPI_Type_free_keyval(int* keyval) {
  WEFT_ENTRY;
  return free_keyval("MPI_Type_free_keyval", AttrObject::datatype, keyval);
}

int PMPI_Type_set_attr(MPI_Datatype type, int keyval, void* attribute_val) {
  WEFT_ENTRY;
  if (int rc = type_of("MPI_Type_set_attr", type)) return rc;
  return set_attr<AttrObject::datatype>("MPI_Type_set_attr", type_attrs()[type], type, keyval, attribute_val);
}

int PMPI_Type_get_attr(MPI_Datatype type, int keyval, void* attribute_val, int* flag) {
  WEFT_ENTRY;
  if (int rc = type_of("MPI_Type_get_attr", type)) return rc;
  static const AttributeSet kNone;
  auto it = type_attrs().find(type);
  return get_attr<AttrObject::datatype>("MPI_Type_get_attr", it == type_attrs().end() ? kNone : it->second, type,
                                        keyval, attribute_val, flag);
}

int PMPI_Type_delete_attr(MPI_Datatype type, int keyval) {
  WEFT_ENTRY;
  if (int rc = type_of("MPI_Type_delete_attr", type)) return rc;
  return delete_attr_call<AttrObject::datatype>("MPI_Type_delete_attr", type_attrs()[type], type, keyval);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Comm_create_keyval, Comm_free_keyval, Comm_set_attr, Comm_get_attr, Comm_delete_attr,
                  Keyval_create, Keyval_free, Attr_put, Attr_get, Attr_delete, Win_create_keyval, Win_free_keyval,
                  Win_set_attr, Win_get_attr, Win_delete_attr, Type_create_keyval, Type_free_keyval,
                  Type_set_attr, Type_get_attr, Type_delete_attr)
