#include "runtime/attributes.h"

#include <algorithm>
#include <memory>

namespace weft {

AttributeSet::Values::iterator AttributeSet::find(uint32_t key) {
  return std::find_if(values_.begin(), values_.end(), [key](const auto& kv) { return kv.first == key; });
}

AttributeSet::Values::const_iterator AttributeSet::find(uint32_t key) const {
  return std::find_if(values_.begin(), values_.end(), [key](const auto& kv) { return kv.first == key; });
}

uint32_t Attributes::create_key(AttrObject kind, const AttrCallbacks& cb) {
  return keys_.add(std::make_unique<Key>(Key{kind, cb}));
}

bool Attributes::is_key(uint32_t key, AttrObject kind) const {
  const Key* k = key ? keys_.get(key) : nullptr;
  return k && k->kind == kind;
}

void Attributes::free_key(uint32_t key) {
  Key* k = keys_.get(key);
  if (!k || k->freed) return;
  k->freed = true;
  release(key);
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
  if (auto it = s.find(key); it != s.values_.end()) {
    if (int rc = call_delete(key, it->second, a, object)) return rc;
    if (it = s.find(key); it != s.values_.end()) {  // the callback may have changed the set
      it->second = value;
      return 0;
    }
  }
  s.values_.emplace_back(key, value);
  ++keys_.get(key)->refs;
  return 0;
}

bool Attributes::get(const AttributeSet& s, uint32_t key, void** value) const {
  auto it = s.find(key);
  if (it == s.values_.end()) return false;
  *value = it->second;
  return true;
}

int Attributes::remove(AttributeSet& s, uint32_t key, const AttrAdapter& a, intptr_t object) {
  if (int rc = call_delete(key, s.find(key)->second, a, object)) return rc;
  auto it = s.find(key);  // the callback may have changed the set
  if (it == s.values_.end()) return 0;
  s.values_.erase(it);
  release(key);
  return 0;
}

int Attributes::copy_all(const AttributeSet& from, intptr_t from_object, AttributeSet& to,
                         const AttrAdapter& a) {
  const AttributeSet::Values values = from.values_;  // a callback may change `from`
  for (const auto& [key, value] : values) {
    Key* k = keys_.get(key);
    if (!k || !k->cb.copy) continue;  // not copied
    void* out = nullptr;
    bool keep = false;
    if (int rc = a.copy(k->cb, key, from_object, value, &out, &keep)) return rc;
    if (keep) {
      to.values_.emplace_back(key, out);
      ++keys_.get(key)->refs;
    }
  }
  return 0;
}

int Attributes::clear(AttributeSet& s, const AttrAdapter& a, intptr_t object) {
  while (!s.values_.empty()) {
    if (int rc = remove(s, s.values_.back().first, a, object)) return rc;
  }
  return 0;
}

}  // namespace weft
