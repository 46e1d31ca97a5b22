// Groups: ordered sets of job ranks, and the set operations on them.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "state.h"

namespace weft::mpi {

Group* lookup_group(MPI_Group h) {
  static Group empty;
  if (h == MPI_GROUP_EMPTY) {
    empty.world_ranks.clear();
    return &empty;
  }
  if (!g_state || handle::kind_of(h) != handle::direct || handle::obj_of(h) != handle::group)
    return nullptr;
  uint32_t idx = handle::index_of(h);
  return idx >= 1 ? g_state->groups.get(idx) : nullptr;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {

int new_group(std::vector<int> ranks, MPI_Group* out) {
  if (ranks.empty()) {
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  auto g = std::make_unique<Group>();
  g->world_ranks = std::move(ranks);
  *out = handle::make(handle::direct, handle::group, g_state->groups.add(std::move(g)));
  return MPI_SUCCESS;
}

int bad_group(const char* fn, MPI_Group g, const char* arg) {
  return raise(MPI_COMM_NULL, MPI_ERR_GROUP, fn, "invalid group 0x%x (argument '%s')", unsigned(g), arg);
}

// Validates a list of n distinct ranks of a group of the given size.
int check_ranks(const char* fn, int n, const int* ranks, int size) {
  if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative n %d", n);
  if (n > 0 && !ranks) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "ranks is NULL");
  std::vector<bool> seen(size_t(size), false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size)
      return raise(MPI_COMM_NULL, MPI_ERR_RANK, fn, "rank %d at index %d is not in the group (size %d)",
                   ranks[i], i, size);
    if (seen[size_t(ranks[i])])
      return raise(MPI_COMM_NULL, MPI_ERR_RANK, fn, "rank %d appears twice", ranks[i]);
    seen[size_t(ranks[i])] = true;
  }
  return MPI_SUCCESS;
}

// Expands (first, last, stride) triplets into ranks, validating them.
int expand_ranges(const char* fn, int n, int ranges[][3], int size, std::vector<int>* out) {
  if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative n %d", n);
  if (n > 0 && !ranges) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "ranges is NULL");
  for (int i = 0; i < n; ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "stride 0 in range %d", i);
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
      if (first != last) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "range %d (%d, %d, %d) is empty in the direction of its stride", i, first, last, stride);
    }
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) out->push_back(int(r));
  }
  return check_ranks(fn, int(out->size()), out->data(), size);
}

}  // namespace

extern "C" {

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  WEFT_REQUIRE_INIT("MPI_Comm_group");
  Comm* c = lookup_comm(comm);
  if (!c) return raise(MPI_COMM_NULL, MPI_ERR_COMM, "MPI_Comm_group", "invalid communicator 0x%x", unsigned(comm));
  if (!group) return raise(comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
  return new_group(c->world_ranks, group);
}

int PMPI_Group_size(MPI_Group group, int* size) {
  WEFT_REQUIRE_INIT("MPI_Group_size");
  Group* g = lookup_group(group);
  if (!g) return bad_group("MPI_Group_size", group, "group");
  if (!size) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
  *size = int(g->world_ranks.size());
  return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
  WEFT_REQUIRE_INIT("MPI_Group_rank");
  Group* g = lookup_group(group);
  if (!g) return bad_group("MPI_Group_rank", group, "group");
  if (!rank) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
  auto it = std::find(g->world_ranks.begin(), g->world_ranks.end(), g_state->boot->rank());
  *rank = it == g->world_ranks.end() ? MPI_UNDEFINED : int(it - g->world_ranks.begin());
  return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_incl");
  Group* g = lookup_group(group);
  if (!g) return bad_group("MPI_Group_incl", group, "group");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_incl", "newgroup is NULL");
  int rc = check_ranks("MPI_Group_incl", n, ranks, int(g->world_ranks.size()));
  if (rc != MPI_SUCCESS) return rc;
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(g->world_ranks[size_t(ranks[i])]);
  return new_group(std::move(out), newgroup);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_excl");
  Group* g = lookup_group(group);
  if (!g) return bad_group("MPI_Group_excl", group, "group");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_excl", "newgroup is NULL");
  int rc = check_ranks("MPI_Group_excl", n, ranks, int(g->world_ranks.size()));
  if (rc != MPI_SUCCESS) return rc;
  std::vector<bool> drop(g->world_ranks.size(), false);
  for (int i = 0; i < n; ++i) drop[size_t(ranks[i])] = true;
  std::vector<int> out;
  for (size_t i = 0; i < g->world_ranks.size(); ++i)
    if (!drop[i]) out.push_back(g->world_ranks[i]);
  return new_group(std::move(out), newgroup);
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_range_incl");
  Group* g = lookup_group(group);
  if (!g) return bad_group("MPI_Group_range_incl", group, "group");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_range_incl", "newgroup is NULL");
  std::vector<int> ranks;
  int rc = expand_ranges("MPI_Group_range_incl", n, ranges, int(g->world_ranks.size()), &ranks);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Group_incl(group, int(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_range_excl");
  Group* g = lookup_group(group);
  if (!g) return bad_group("MPI_Group_range_excl", group, "group");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_range_excl", "newgroup is NULL");
  std::vector<int> ranks;
  int rc = expand_ranges("MPI_Group_range_excl", n, ranges, int(g->world_ranks.size()), &ranks);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Group_excl(group, int(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_union");
  Group* a = lookup_group(group1);
  Group* b = lookup_group(group2);
  if (!a) return bad_group("MPI_Group_union", group1, "group1");
  if (!b) return bad_group("MPI_Group_union", group2, "group2");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_union", "newgroup is NULL");
  std::vector<int> out = a->world_ranks;
  std::unordered_set<int> in(out.begin(), out.end());
  for (int w : b->world_ranks)
    if (!in.count(w)) out.push_back(w);
  return new_group(std::move(out), newgroup);
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_intersection");
  Group* a = lookup_group(group1);
  Group* b = lookup_group(group2);
  if (!a) return bad_group("MPI_Group_intersection", group1, "group1");
  if (!b) return bad_group("MPI_Group_intersection", group2, "group2");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_intersection", "newgroup is NULL");
  std::unordered_set<int> inb(b->world_ranks.begin(), b->world_ranks.end());
  std::vector<int> out;
  for (int w : a->world_ranks)
    if (inb.count(w)) out.push_back(w);
  return new_group(std::move(out), newgroup);
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  WEFT_REQUIRE_INIT("MPI_Group_difference");
  Group* a = lookup_group(group1);
  Group* b = lookup_group(group2);
  if (!a) return bad_group("MPI_Group_difference", group1, "group1");
  if (!b) return bad_group("MPI_Group_difference", group2, "group2");
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_difference", "newgroup is NULL");
  std::unordered_set<int> inb(b->world_ranks.begin(), b->world_ranks.end());
  std::vector<int> out;
  for (int w : a->world_ranks)
    if (!inb.count(w)) out.push_back(w);
  return new_group(std::move(out), newgroup);
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  WEFT_REQUIRE_INIT("MPI_Group_compare");
  Group* a = lookup_group(group1);
  Group* b = lookup_group(group2);
  if (!a) return bad_group("MPI_Group_compare", group1, "group1");
  if (!b) return bad_group("MPI_Group_compare", group2, "group2");
  if (!result) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_compare", "result is NULL");
  if (a->world_ranks == b->world_ranks) *result = MPI_IDENT;
  else {
    std::vector<int> x = a->world_ranks, y = b->world_ranks;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
  WEFT_REQUIRE_INIT("MPI_Group_translate_ranks");
  Group* a = lookup_group(group1);
  Group* b = lookup_group(group2);
  if (!a) return bad_group("MPI_Group_translate_ranks", group1, "group1");
  if (!b) return bad_group("MPI_Group_translate_ranks", group2, "group2");
  if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks", "negative n %d", n);
  if (n > 0 && (!ranks1 || !ranks2))
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_translate_ranks", "ranks1 or ranks2 is NULL");
  std::unordered_map<int, int> pos;
  for (size_t i = 0; i < b->world_ranks.size(); ++i) pos[b->world_ranks[i]] = int(i);
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (ranks1[i] < 0 || ranks1[i] >= int(a->world_ranks.size()))
      return raise(MPI_COMM_NULL, MPI_ERR_RANK, "MPI_Group_translate_ranks",
                   "rank %d at index %d is not in group1 (size %zu)", ranks1[i], i, a->world_ranks.size());
    auto it = pos.find(a->world_ranks[size_t(ranks1[i])]);
    ranks2[i] = it == pos.end() ? MPI_UNDEFINED : it->second;
  }
  return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group* group) {
  WEFT_REQUIRE_INIT("MPI_Group_free");
  if (!group) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
  if (*group == MPI_GROUP_EMPTY) {  // freeing the predefined empty group is allowed (MPI 3.1)
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
  }
  if (!lookup_group(*group)) return bad_group("MPI_Group_free", *group, "group");
  g_state->groups.remove(handle::index_of(*group));
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIAS(Comm_group)
WEFT_PMPI_ALIAS(Group_size)
WEFT_PMPI_ALIAS(Group_rank)
WEFT_PMPI_ALIAS(Group_incl)
WEFT_PMPI_ALIAS(Group_excl)
WEFT_PMPI_ALIAS(Group_range_incl)
WEFT_PMPI_ALIAS(Group_range_excl)
WEFT_PMPI_ALIAS(Group_union)
WEFT_PMPI_ALIAS(Group_intersection)
WEFT_PMPI_ALIAS(Group_difference)
WEFT_PMPI_ALIAS(Group_compare)
WEFT_PMPI_ALIAS(Group_translate_ranks)
WEFT_PMPI_ALIAS(Group_free)
