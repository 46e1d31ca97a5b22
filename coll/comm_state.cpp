// The per-communicator state table of comm_state.h.
#include "coll/comm_state.h"

#include <utility>

namespace weft::coll {

namespace {

using Table = std::unordered_map<uint64_t, std::unique_ptr<CommState>>;
Table& table() {
  static auto* t = new Table;  // never destroyed: communicators may outlive statics
  return *t;
}

}  // namespace

CommState& state_of(const Comm& c) {
  std::unique_ptr<CommState>& st = table()[c.serial];
  if (!st) st = std::make_unique<CommState>();
  return *st;
}

CommState* find_state(const Comm& c) {
  auto it = table().find(c.serial);
  return it == table().end() ? nullptr : it->second.get();
}

void release(const Comm& c) {
  if (c.local) release(*c.local);  // an intercommunicator's local group
  auto it = table().find(c.serial);
  if (it == table().end()) return;
  // Out of the table before it is destroyed: the hierarchy releases its node communicator.
  std::unique_ptr<CommState> st = std::move(it->second);
  table().erase(it);
  st.reset();
}

}  // namespace weft::coll
