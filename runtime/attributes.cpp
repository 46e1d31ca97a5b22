#include "runtime/attributes.h"

#include <memory>

namespace weft {

uint32_t Attributes::create_key(AttrObject kind, const AttrCallbacks& cb) {
  return keys_.add(std::make_unique<Key>(Key{kind, cb}));
}

bool Attributes::is_key(uint32_t key, AttrObject kind) const {
  const Key* k = key ? keys_.get(key) : nullptr;
  return k && k->kind == kind;
}

void Attributes::release(uint32_t key) {
  Key* k = keys_.get(key);
  if (k && --k->refs == 0) keys_.remove(key);
}

int Attributes::call_delete(uint32_t key, void* value, const AttrAdapter& a, intptr_t object) const {
  const Key* k = keys_.get(key);
  return k && k->cb.del ? a.del(k->cb, key, object, value) : 0;
}

int Attributes::set(AttributeSet& s, uint32_t key, void* value, const AttrAdapter& a, intptr_t object) {
  auto it = s.values_.find(key);
  if (it != s.values_.end()) {
    if (int rc = call_delete(key, it->second, a, object)) return rc;
    it->second = value;
  } else {
    s.values_[key] = value;
    ++keys_.get(key)->refs;
  }
  return 0;
}

bool Attributes::get(const AttributeSet& s, uint32_t key, void** value) const {
  auto it = s.values_.find(key);
  if (it == s.values_.end()) return false;
  *value = it->second;
  return true;
}

int Attributes::remove(AttributeSet& s, uint32_t key, const AttrAdapter& a, intptr_t object) {
  auto it = s.values_.find(key);
  void* value = it->second;
  s.values_.erase(it);
  int rc = call_delete(key, value, a, object);
  release(key);
  return rc;
}

int Attributes::copy_all(const AttributeSet& from, intptr_t from_object, AttributeSet& to,
                         const AttrAdapter& a) {
  for (const auto& [key, value] : from.values_) {
    Key* k = keys_.get(key);
    if (!k || !k->cb.copy) continue;  // not copied
    void* out = nullptr;
    bool keep = false;
    if (int rc = a.copy(k->cb, key, from_object, value, &out, &keep)) return rc;
    if (keep) {
      to.values_[key] = out;
      ++k->refs;
    }
  }
  return 0;
}

int Attributes::clear(AttributeSet& s, const AttrAdapter& a, intptr_t object) {
  while (!s.values_.empty()) {
    if (int rc = remove(s, s.values_.begin()->first, a, object)) return rc;
  }
  return 0;
}

}  // namespace weft
