// The process sets a session offers (MPI_Session_get_num_psets, MPI_Group_from_session_pset):
// "mpi://WORLD", every rank of the job, and "mpi://SELF", this rank alone. Names compare
// without regard to case, as the standard's "mpi://" names are case-insensitive.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace weft {

inline constexpr int kProcessSets = 2;
// The n-th process set's name (0 <= n < kProcessSets).
std::string_view pset_name(int n);
// The job ranks of the process set named `name` at a rank `rank` of a job of `size`: false
// when no process set has that name.
bool pset_members(std::string_view name, int rank, int size, std::vector<int>* members);

}  // namespace weft
