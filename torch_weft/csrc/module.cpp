// The Python module torch_weft._C: makes "weft" process groups over MPI communicators.
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/utils/pybind.h>
#include <torch/python.h>

#include <mutex>

#include <weft/store.h>
#include "process_group.h"

namespace torch_weft {

namespace {

std::mutex groups_mutex;
std::vector<c10::weak_intrusive_ptr<ProcessGroupWeft>> groups;  // live groups, for finalize
bool initialized_here = false;

void ensure_initialized() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  TORCH_CHECK(!finalized, "weft backend: MPI was finalized");
  if (initialized) {
    int level = 0;
    MPI_Query_thread(&level);
    TORCH_CHECK(level == MPI_THREAD_MULTIPLE, "weft backend: MPI was initialised without MPI_THREAD_MULTIPLE, "
                "which the backend's communication thread needs");
    return;
  }
  int provided = 0;
  const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: MPI_Init_thread failed: ", mpi_error_text(rc));
  TORCH_CHECK(provided == MPI_THREAD_MULTIPLE, "weft backend: MPI provides thread level ", provided,
              ", the backend needs MPI_THREAD_MULTIPLE");
  initialized_here = true;
}

// The torch store weft bootstraps through where the launch has no PMIx (torchrun): the
// callbacks of include/weft/store.h over a c10d store (a C++ one, such as torchrun's TCP
// store: weft calls it from threads that do not hold the GIL). One process, one bootstrap.
struct StoreBridge {
  c10::intrusive_ptr<c10d::Store> store;
  std::mutex mutex;  // one call at a time into the store
};
StoreBridge bridge;

template <class Body>
int store_call(void* ctx, const char* what, const char* key, Body&& body) {
  auto* b = static_cast<StoreBridge*>(ctx);
  try {
    std::lock_guard<std::mutex> lock(b->mutex);
    body(*b->store);
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "torch_weft: the store's %s of %s failed: %s\n", what, key, e.what());
    return 1;
  }
}

int bridge_set(void* ctx, const char* key, const void* value, size_t len) {
  return store_call(ctx, "set", key, [&](c10d::Store& s) {
    const auto* p = static_cast<const uint8_t*>(value);
    s.set(key, std::vector<uint8_t>(p, p + len));
  });
}
int bridge_get(void* ctx, const char* key, weft_store_sink_fn sink, void* sink_ctx) {
  return store_call(ctx, "get", key, [&](c10d::Store& s) {
    const std::vector<uint8_t> v = s.get(key);
    sink(sink_ctx, v.data(), v.size());
  });
}
int bridge_add(void* ctx, const char* key, long long delta, long long* result) {
  return store_call(ctx, "add", key, [&](c10d::Store& s) { *result = s.add(key, delta); });
}
int bridge_check(void* ctx, const char* key, int* exists) {
  return store_call(ctx, "check", key, [&](c10d::Store& s) { *exists = s.check({key}) ? 1 : 0; });
}

// Hands the store to weft for the MPI initialisation that follows.
void use_store(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  TORCH_CHECK(!initialized, "weft backend: MPI is initialised already, so the store cannot bootstrap it");
  bridge.store = store;
  weft_store_ops ops{};
  ops.struct_size = sizeof ops;
  ops.ctx = &bridge;
  ops.rank = rank;
  ops.size = size;
  ops.set = bridge_set;
  ops.get = bridge_get;
  ops.add = bridge_add;
  ops.check = bridge_check;
  TORCH_CHECK(weft_bootstrap_use_store(&ops) == MPI_SUCCESS, "weft backend: rank ", rank, " of ", size,
              " cannot bootstrap through the store");
}

bool mpi_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0;
}

std::pair<int, int> world() {
  ensure_initialized();
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return {rank, size};
}

// A group of the torch ranks `ranks` (empty: the default group, every rank). Torch's global
// ranks must be MPI's world ranks (the launch gives both).
c10::intrusive_ptr<ProcessGroupWeft> create(int group_rank, int group_size, int64_t timeout_ms,
                                            const std::vector<int64_t>& ranks, int cuda_device) {
  const auto [world_rank, world_size] = world();
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;
  if (ranks.empty()) {
    TORCH_CHECK(group_rank == world_rank && group_size == world_size, "weft backend: torch rank ", group_rank,
                " of ", group_size, " is not weft's world rank ", world_rank, " of ", world_size,
                ": launch with mpirun or srun and take rank and size from the launch "
                "(torch_weft.init_process_group does)");
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  } else {
    TORCH_CHECK(ranks.size() == size_t(group_size) && group_rank >= 0 && group_rank < group_size &&
                    ranks[size_t(group_rank)] == world_rank,
                "weft backend: group rank ", group_rank, " of ranks of size ", ranks.size(),
                " does not name weft's world rank ", world_rank);
    std::vector<int> members(ranks.begin(), ranks.end());
    MPI_Group all, sub;
    MPI_Comm_group(MPI_COMM_WORLD, &all);
    rc = MPI_Group_incl(all, int(members.size()), members.data(), &sub);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(MPI_COMM_WORLD, sub, 0, &comm);
    MPI_Group_free(&all);
    if (sub != MPI_GROUP_NULL) MPI_Group_free(&sub);
  }
  TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: making the group's communicator failed on world rank ", world_rank,
              ": ", mpi_error_text(rc));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  auto pg = c10::make_intrusive<ProcessGroupWeft>(comm, group_rank, group_size, std::chrono::milliseconds(timeout_ms),
                                                  cuda_device);
  std::lock_guard<std::mutex> lock(groups_mutex);
  groups.emplace_back(pg);
  return pg;
}

void world_barrier() {
  ensure_initialized();
  const int rc = MPI_Barrier(MPI_COMM_WORLD);
  TORCH_CHECK(rc == MPI_SUCCESS, "weft backend: barrier failed: ", mpi_error_text(rc));
}

// At interpreter exit: every live group's thread stops, then MPI is finalised if the backend
// initialised it.
void finalize() {
  {
    std::lock_guard<std::mutex> lock(groups_mutex);
    for (auto& weak : groups)
      if (auto pg = weak.lock()) pg->shutdown();
    groups.clear();
  }
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (initialized_here && !finalized) MPI_Finalize();
}

}  // namespace

}  // namespace torch_weft

PYBIND11_MODULE(_C, m) {
  namespace py = pybind11;
  m.doc() = "weft's torch.distributed backend";
  py::module::import("torch.distributed");  // registers the base class (compat.h)
  py::class_<torch_weft::ProcessGroupWeft, torch_weft::BackendBase, c10::intrusive_ptr<torch_weft::ProcessGroupWeft>>(
      m, "ProcessGroupWeft")
      .def("shutdown", &torch_weft::ProcessGroupWeft::shutdown, py::call_guard<py::gil_scoped_release>());
  m.def("create", &torch_weft::create, py::arg("group_rank"), py::arg("group_size"), py::arg("timeout_ms"),
        py::arg("global_ranks"), py::arg("cuda_device") = -1, py::call_guard<py::gil_scoped_release>(),
        "A weft process group of the given torch ranks (empty: every rank); cuda_device: the CUDA device this "
        "rank has set up, or -1");
  m.def("world", &torch_weft::world, "(rank, size) of the MPI launch; initialises MPI");
  m.def("use_store", &torch_weft::use_store, py::arg("store"), py::arg("rank"), py::arg("size"),
        "Bootstrap weft through this torch store (a launch without PMIx, such as torchrun); before MPI starts");
  m.def("mpi_initialized", &torch_weft::mpi_initialized, "Whether MPI is initialised");
  m.def("world_barrier", &torch_weft::world_barrier, py::call_guard<py::gil_scoped_release>(),
        "MPI_Barrier over every rank of the launch");
  m.def("finalize", &torch_weft::finalize, py::call_guard<py::gil_scoped_release>());
  m.attr("cuda") = torch_weft::cuda_path_built();
}
