// The process sets of a session.
#include "pt2pt/psets.h"

#include <cctype>
#include <numeric>

namespace weft {

namespace {

constexpr std::string_view kNames[kProcessSets] = {"mpi://WORLD", "mpi://SELF"};

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

std::string_view pset_name(int n) { return kNames[n]; }

bool pset_members(std::string_view name, int rank, int size, std::vector<int>* members) {
  if (same_name(name, kNames[0])) {
    members->resize(size_t(size));
    std::iota(members->begin(), members->end(), 0);
    return true;
  }
  if (same_name(name, kNames[1])) {
    members->assign(1, rank);
    return true;
  }
  return false;
}

}  // namespace weft
