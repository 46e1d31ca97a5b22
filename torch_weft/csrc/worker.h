// The backend's communication thread. Every MPI call of a process group is made on it, in the
// order the operations were submitted (MPI requires every rank to start collectives in the
// same order), so the caller's thread (training, autograd) never blocks on communication: an
// operation starts its MPI calls, and the thread tests the requests of every started
// operation until they complete (yielding the core between rounds; it sleeps while nothing is
// in flight), then runs the operation's finish step and completes its Work.
#pragma once
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace torch_weft {

// One operation. start makes its MPI calls and appends the requests to wait for (none: it
// completed inside start); it returns an MPI error code. finish runs once they completed (copies
// out of staging buffers, the average's division). done is called once, with null on success.
struct Operation {
  std::string name;  // e.g. "allreduce", for messages
  std::function<int(std::vector<MPI_Request>*)> start;
  std::function<void(const std::vector<MPI_Status>&)> finish;  // the requests' statuses
  std::function<void(std::exception_ptr)> done;
  std::chrono::milliseconds timeout{0};  // 0: none
};

class Worker {
 public:
  // comm: the group's communicator (its error handler returns errors); rank: for messages.
  Worker(MPI_Comm comm, int rank);
  ~Worker();  // completes what was submitted, then stops the thread
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void submit(Operation op);

 private:
  struct Started {
    Operation op;
    std::vector<MPI_Request> requests;
    std::vector<MPI_Status> statuses;
    std::chrono::steady_clock::time_point deadline;
  };
  void loop();
  void start(Operation op);
  // Tests one started operation: true when it completed (or failed) and was retired.
  bool test(Started& s);
  std::exception_ptr failure(const std::string& what, int code) const;

  MPI_Comm comm_;
  int rank_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Operation> queue_;
  bool stopping_ = false;
  std::vector<Started> started_;
  // After a timeout the group's state is unknown (requests were abandoned): every later
  // operation fails with this message.
  std::string broken_;
  std::thread thread_;
};

// The text of an MPI error code.
std::string mpi_error_text(int code);

}  // namespace torch_weft
