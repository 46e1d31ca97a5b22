// Attributes: values users hang on objects (communicators, windows, datatypes) under keys they
// create, each key with a copy and a delete callback. The runtime keeps the keys, each object's
// values and the rules: a value replaced or removed is deleted first (a failing delete keeps
// it), duplication copies through the copy callback, freeing an object deletes its values
// last-set first, and a freed key lives on while values use it. It never calls a user function
// itself: the callbacks are opaque values that the binding's adapter turns back into calls.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/handles.h"

namespace weft {

// The kind of object a key serves; a key created for one kind is no key for the others.
enum class AttrObject : uint8_t { comm, win, datatype };

// A key's callbacks as the binding gave them (function pointers of its own types) and the
// user's extra state. A null copy: values are not copied on duplication; a null delete: nothing
// is called when a value goes.
struct AttrCallbacks {
  using Fn = void (*)();
  Fn copy = nullptr;
  Fn del = nullptr;
  void* extra_state = nullptr;
};

// The binding's side. `object` is the binding's name for the object, as passed to the call that
// runs the callback. Each returns 0 or the binding's error code (already reported), which the
// runtime returns unchanged.
struct AttrAdapter {
  // *keep: whether the duplicate gets *out.
  int (*copy)(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value, void** out, bool* keep);
  int (*del)(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value);
};

// One object's attributes: (key, value) in the order the keys were first set.
class AttributeSet {
 public:
  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }

 private:
  friend class Attributes;
  using Values = std::vector<std::pair<uint32_t, void*>>;
  Values::iterator find(uint32_t key);
  Values::const_iterator find(uint32_t key) const;
  Values values_;
};

// The keys of a process and the operations on attribute sets. Key 0 is never a key.
class Attributes {
 public:
  uint32_t create_key(AttrObject kind, const AttrCallbacks& cb);
  // Whether key names a key of this kind (a freed one still used by values included).
  bool is_key(uint32_t key, AttrObject kind) const;
  // Drops the creator's reference: the key goes once no value uses it. Freeing it again while
  // values keep it changes nothing (a delete callback may free the key it is called for).
  void free_key(uint32_t key);
  size_t keys() const { return keys_.live() - 1; }  // slot 0 is reserved

  // Sets key's value on s; a value it replaces is deleted first (an error keeps it).
  int set(AttributeSet& s, uint32_t key, void* value, const AttrAdapter& a, intptr_t object);
  bool get(const AttributeSet& s, uint32_t key, void** value) const;
  // Deletes key's value (there must be one) and removes it; an error keeps it.
  int remove(AttributeSet& s, uint32_t key, const AttrAdapter& a, intptr_t object);
  // Duplication: every value of `from` whose key copies and whose copy callback keeps it goes
  // to `to`, in the order of `from`. Stops at the first error.
  int copy_all(const AttributeSet& from, intptr_t from_object, AttributeSet& to, const AttrAdapter& a);
  // Freeing the object: deletes and removes every value, the last set first; stops at the
  // first error (that value and the ones not reached stay).
  int clear(AttributeSet& s, const AttrAdapter& a, intptr_t object);

 private:
  struct Key {
    AttrObject kind;
    AttrCallbacks cb;
    int refs = 1;        // the creator's (until freed), plus one per value set with it
    bool freed = false;  // the creator's reference is gone
  };
  int call_delete(uint32_t key, void* value, const AttrAdapter& a, intptr_t object) const;
  void release(uint32_t key);
  HandleTable<Key> keys_{1};
};

}  // namespace weft
