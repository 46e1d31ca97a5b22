// Groups: ordered sets of job ranks, and the set operations on them.
#include <algorithm>

#include "runtime/rank_set.h"
#include "state.h"

namespace weft::mpi {

Group* lookup_group(MPI_Group h) {
  static Group empty;
  if (h == MPI_GROUP_EMPTY) {
    empty.world_ranks.clear();
    return &empty;
  }
  return lookup_direct(&State::groups, h, handle::group, 1);
}

int make_group(std::vector<int> world_ranks, MPI_Group* out, MPI_Session session) {
  if (world_ranks.empty()) {
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  auto g = std::make_unique<Group>();
  g->world_ranks = std::move(world_ranks);
  g->session = session;
  *out = handle::make(handle::direct, handle::group, g_state->groups.add(std::move(g)));
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

using namespace weft;
using namespace weft::mpi;

namespace {

int new_group(std::vector<int> ranks, MPI_Group* out, MPI_Session session) {
  return make_group(std::move(ranks), out, session);
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

// Expands (first, last, stride) triplets into ranks of a group of the given size, validating them.
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

// A binding's start: MPI initialised and the group valid.
int group_of(const char* fn, MPI_Group group, Group** g, const char* arg = "group") {
  if (!g_running) [[unlikely]] return not_initialized(fn);
  *g = lookup_group(group);
  return *g ? MPI_SUCCESS : bad_group(fn, group, arg);
}

int two_groups(const char* fn, MPI_Group group1, MPI_Group group2, Group** a, Group** b) {
  if (int rc = group_of(fn, group1, a, "group1")) return rc;
  *b = lookup_group(group2);
  return *b ? MPI_SUCCESS : bad_group(fn, group2, "group2");
}

// A new group made from one (incl, excl and their range forms).
int derived_group(const char* fn, MPI_Group group, MPI_Group* newgroup, Group** g) {
  if (int rc = group_of(fn, group, g)) return rc;
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "newgroup is NULL");
  return MPI_SUCCESS;
}

// The range forms: the ranks of group that the triplets name.
int range_ranks(const char* fn, MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup, std::vector<int>* out) {
  Group* g;
  if (int rc = derived_group(fn, group, newgroup, &g)) return rc;
  return expand_ranges(fn, n, ranges, int(g->world_ranks.size()), out);
}

// union, intersection, difference.
int set_operation(const char* fn, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup,
                  RankSet (*op)(const RankSet&, const RankSet&)) {
  Group *a, *b;
  if (int rc = two_groups(fn, group1, group2, &a, &b)) return rc;
  if (!newgroup) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "newgroup is NULL");
  return new_group(op(a->world_ranks, b->world_ranks), newgroup, a->session);
}

}  // namespace

extern "C" {

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_group", comm, &c)) return rc;
  if (!group) return raise(comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
  return new_group(c->world_ranks, group, lookup_comm_entry(comm)->session);
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Comm_remote_group", comm, &c)) return rc;
  if (!c->inter) return raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_group", "%s is not an intercommunicator", c->label().c_str());
  if (!group) return raise(comm, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
  return new_group(c->remote_world_ranks, group, lookup_comm_entry(comm)->session);
}

int PMPI_Group_size(MPI_Group group, int* size) {
  WEFT_ENTRY;
  Group* g;
  if (int rc = group_of("MPI_Group_size", group, &g)) return rc;
  if (!size) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
  *size = int(g->world_ranks.size());
  return MPI_SUCCESS;
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
  WEFT_ENTRY;
  Group* g;
  if (int rc = group_of("MPI_Group_rank", group, &g)) return rc;
  if (!rank) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
  auto it = std::find(g->world_ranks.begin(), g->world_ranks.end(), g_state->boot->rank());
  *rank = it == g->world_ranks.end() ? MPI_UNDEFINED : int(it - g->world_ranks.begin());
  return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  WEFT_ENTRY;
  Group* g;
  if (int rc = derived_group("MPI_Group_incl", group, newgroup, &g)) return rc;
  if (int rc = check_ranks("MPI_Group_incl", n, ranks, int(g->world_ranks.size()))) return rc;
  return new_group(set_select(g->world_ranks, n, ranks), newgroup, g->session);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  WEFT_ENTRY;
  Group* g;
  if (int rc = derived_group("MPI_Group_excl", group, newgroup, &g)) return rc;
  if (int rc = check_ranks("MPI_Group_excl", n, ranks, int(g->world_ranks.size()))) return rc;
  return new_group(set_exclude(g->world_ranks, n, ranks), newgroup, g->session);
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  WEFT_ENTRY;
  std::vector<int> ranks;
  if (int rc = range_ranks("MPI_Group_range_incl", group, n, ranges, newgroup, &ranks)) return rc;
  return PMPI_Group_incl(group, int(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  WEFT_ENTRY;
  std::vector<int> ranks;
  if (int rc = range_ranks("MPI_Group_range_excl", group, n, ranges, newgroup, &ranks)) return rc;
  return PMPI_Group_excl(group, int(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  WEFT_ENTRY;
  return set_operation("MPI_Group_union", group1, group2, newgroup, set_union);
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  WEFT_ENTRY;
  return set_operation("MPI_Group_intersection", group1, group2, newgroup, set_intersection);
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  WEFT_ENTRY;
  return set_operation("MPI_Group_difference", group1, group2, newgroup, set_difference);
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  WEFT_ENTRY;
  Group *a, *b;
  if (int rc = two_groups("MPI_Group_compare", group1, group2, &a, &b)) return rc;
  if (!result) return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_compare", "result is NULL");
  const SetMatch m = set_compare(a->world_ranks, b->world_ranks);
  *result = m == SetMatch::identical ? MPI_IDENT : m == SetMatch::similar ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
  WEFT_ENTRY;
  const char* fn = "MPI_Group_translate_ranks";
  Group *a, *b;
  if (int rc = two_groups(fn, group1, group2, &a, &b)) return rc;
  if (n < 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "negative n %d", n);
  if (n > 0 && (!ranks1 || !ranks2)) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "ranks1 or ranks2 is NULL");
  for (int i = 0; i < n; ++i)
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= int(a->world_ranks.size())))
      return raise(MPI_COMM_NULL, MPI_ERR_RANK, fn, "rank %d at index %d is not in group1 (size %zu)", ranks1[i], i,
                   a->world_ranks.size());
  set_translate(a->world_ranks, b->world_ranks, n, ranks1, ranks2, MPI_PROC_NULL, MPI_UNDEFINED);
  return MPI_SUCCESS;
}

int PMPI_Group_free(MPI_Group* group) {
  WEFT_ENTRY;
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

WEFT_PMPI_ALIASES(Comm_group, Comm_remote_group, Group_size, Group_rank, Group_incl, Group_excl, Group_range_incl,
                  Group_range_excl, Group_union, Group_intersection, Group_difference,
                  Group_compare, Group_translate_ranks, Group_free)
