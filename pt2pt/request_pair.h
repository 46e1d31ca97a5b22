// A send and a receive that run as one request (MPI_Isendrecv, MPI_Isendrecv_replace): the
// pair's request completes once both have, with the receive's status and the first error of
// either. A poller of the progress engine watches the pairs in flight.
#pragma once
#include <vector>

#include "pt2pt/transport.h"
#include "runtime/request.h"
#include "runtime/staging.h"

namespace weft {

class RequestPairs {
 public:
  // A request from t's pool, owned by the communicator handle `owner`, that completes once send and
  // recv have (either may be null: already complete, e.g. MPI_PROC_NULL; its status then
  // null_status). `keep` lives as long as the pair (the packed copy a send reads).
  Request* join(Transport& t, Request* send, Request* recv, int owner, StagingBuffer keep,
                const RequestStatus& null_status);
  // Registers the progress poller that advances the pairs (armed only while some are in flight).
  void attach(Progress* progress);
  static int poll(void* ctx);

 private:
  struct Pair {
    Request* joined;
    Request* send;
    Request* recv;
  };
  int advance();
  std::vector<Pair> pairs_;
  Transport* transport_ = nullptr;
  Progress* progress_ = nullptr;
  Progress::PollerId poller_ = 0;
};

}  // namespace weft
