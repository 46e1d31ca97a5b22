// Ordered sets of job ranks (what an MPI group is) and their algebra. Results keep the order
// the MPI standard gives them: that of the first set, then the second's for a union.
#pragma once
#include <string>
#include <vector>

namespace weft {

using RankSet = std::vector<int>;

RankSet set_union(const RankSet& a, const RankSet& b);
RankSet set_intersection(const RankSet& a, const RankSet& b);
RankSet set_difference(const RankSet& a, const RankSet& b);
// The members at positions `which` (n of them, valid and distinct), in that order; or all but
// those, in the set's order.
RankSet set_select(const RankSet& a, int n, const int* which);
RankSet set_exclude(const RankSet& a, int n, const int* which);

enum class SetMatch { identical, similar, unequal };  // same order, same members, else
SetMatch set_compare(const RankSet& a, const RankSet& b);
// The position in b of the member of a at each of `positions` (n of them, valid; `skip`
// entries are copied as they are), or `absent`.
void set_translate(const RankSet& a, const RankSet& b, int n, const int* positions, int* out, int skip, int absent);

// "0, 2, 5": ranks for a message.
std::string rank_list_text(const RankSet& ranks);

}  // namespace weft
