// A table of objects addressed by small integer indices (the index part of MPI handles).
// Freed slots are reused, so create/free loops do not grow it.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace weft {

template <class T>
class HandleTable {
 public:
  // first_index: slots below it are reserved (e.g. for predefined objects).
  explicit HandleTable(uint32_t first_index = 0) : items_(first_index) {}

  uint32_t add(std::unique_ptr<T> item) {
    if (!free_.empty()) {
      uint32_t i = free_.back();
      free_.pop_back();
      items_[i] = std::move(item);
      return i;
    }
    items_.push_back(std::move(item));
    return uint32_t(items_.size() - 1);
  }
  void put(uint32_t index, std::unique_ptr<T> item) {  // a reserved slot
    if (index >= items_.size()) items_.resize(index + 1);
    items_[index] = std::move(item);
  }
  T* get(uint32_t index) const { return index < items_.size() ? items_[index].get() : nullptr; }
  void remove(uint32_t index) {
    if (index < items_.size() && items_[index]) {
      items_[index].reset();
      free_.push_back(index);
    }
  }
  size_t live() const { return items_.size() - free_.size(); }
  uint32_t slots() const { return uint32_t(items_.size()); }  // indices below it may hold items

 private:
  std::vector<std::unique_ptr<T>> items_;
  std::vector<uint32_t> free_;
};

}  // namespace weft
