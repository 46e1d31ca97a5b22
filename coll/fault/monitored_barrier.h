// A barrier that names its stragglers (PyTorch's monitored_barrier): rank 0 waits up to a
// timeout for every other rank's arrival, then sends each of them the list of ranks that did not
// arrive in time (those that arrive later find it waiting). A rank that waits for rank 0 gives up
// after twice the timeout and names rank 0.
#pragma once
#include <vector>

#include "pt2pt/comm.h"
#include "pt2pt/transport.h"

namespace weft::coll::fault {

// *late: the communicator ranks that did not arrive within timeout_ms (a member found dead
// counts as late). Status::ok when every rank arrived, else Status::timed_out (detail set).
Status monitored_barrier(Transport& t, const Comm& c, int timeout_ms, std::vector<int>* late);

}  // namespace weft::coll::fault
