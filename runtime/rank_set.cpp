// Algebra of ordered rank sets.
#include "runtime/rank_set.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace weft {

namespace {

// The members of a that are (keep == true) or are not in b, in a's order.
RankSet filter(const RankSet& a, const RankSet& b, bool keep) {
  std::unordered_set<int> inb(b.begin(), b.end());
  RankSet out;
  for (int w : a)
    if (bool(inb.count(w)) == keep) out.push_back(w);
  return out;
}

}  // namespace

RankSet set_union(const RankSet& a, const RankSet& b) {
  RankSet out = a;
  for (int w : filter(b, a, false)) out.push_back(w);
  return out;
}

RankSet set_intersection(const RankSet& a, const RankSet& b) { return filter(a, b, true); }

RankSet set_difference(const RankSet& a, const RankSet& b) { return filter(a, b, false); }

RankSet set_select(const RankSet& a, int n, const int* which) {
  RankSet out;
  for (int i = 0; i < n; ++i) out.push_back(a[size_t(which[i])]);
  return out;
}

RankSet set_exclude(const RankSet& a, int n, const int* which) {
  std::vector<bool> drop(a.size(), false);
  for (int i = 0; i < n; ++i) drop[size_t(which[i])] = true;
  RankSet out;
  for (size_t i = 0; i < a.size(); ++i)
    if (!drop[i]) out.push_back(a[i]);
  return out;
}

SetMatch set_compare(const RankSet& a, const RankSet& b) {
  if (a == b) return SetMatch::identical;
  RankSet x = a, y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? SetMatch::similar : SetMatch::unequal;
}

void set_translate(const RankSet& a, const RankSet& b, int n, const int* positions, int* out, int skip, int absent) {
  std::unordered_map<int, int> pos;
  for (size_t i = 0; i < b.size(); ++i) pos[b[i]] = int(i);
  for (int i = 0; i < n; ++i) {
    if (positions[i] == skip) {
      out[i] = skip;
      continue;
    }
    auto it = pos.find(a[size_t(positions[i])]);
    out[i] = it == pos.end() ? absent : it->second;
  }
}

std::string rank_list_text(const RankSet& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

}  // namespace weft
