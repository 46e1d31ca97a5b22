// Ordered (key, value) string pairs: what an MPI info object holds, and the hints kept with a
// communicator. Keys keep the order they were first set in.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft {

class InfoSet {
 public:
  using Entry = std::pair<std::string, std::string>;
  InfoSet() = default;
  InfoSet(std::vector<Entry> entries) : entries_(std::move(entries)) {}  // NOLINT: a list converts

  // The value of key, or nullptr.
  const std::string* find(std::string_view key) const {
    for (const Entry& e : entries_)
      if (e.first == key) return &e.second;
    return nullptr;
  }
  // Replaces key's value, or appends the pair.
  void set(std::string_view key, std::string_view value) {
    for (Entry& e : entries_) {
      if (e.first == key) {
        e.second = value;
        return;
      }
    }
    entries_.emplace_back(key, value);
  }
  // False if key was not set.
  bool erase(std::string_view key) {
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.erase(it);
        return true;
      }
    }
    return false;
  }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const Entry& operator[](size_t i) const { return entries_[i]; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace weft
