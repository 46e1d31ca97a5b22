// Process topologies: cartesian grids, graphs and distributed graphs. Ranks are never
// reordered (reorder is a hint the standard lets an implementation ignore).
#include <algorithm>
#include <cstring>

#include "coll/agreements.h"
#include "coll_call.h"
#include "state.h"

using namespace weft;
using namespace weft::mpi;

namespace {

// A query's start: MPI initialised and comm has a topology of the given kind (else
// MPI_ERR_TOPOLOGY).
int topo_of(const char* fn, MPI_Comm comm, int kind, const Topology** out) {
  CommEntry* e;
  if (int rc = comm_entry_of(fn, comm, &e)) return rc;
  if (!e->topo || e->topo->kind != kind)
    return raise(comm, MPI_ERR_TOPOLOGY, fn, "the communicator has no %s topology",
                 kind == MPI_CART ? "cartesian" : kind == MPI_GRAPH ? "graph" : "distributed graph");
  *out = e->topo.get();
  return MPI_SUCCESS;
}

std::vector<int> first_ranks(const Comm& c, int n) {
  return std::vector<int>(c.world_ranks.begin(), c.world_ranks.begin() + n);
}

// A rank of a graph topology, as MPI_Graph_neighbors(_count) take it.
int check_graph_rank(const char* fn, MPI_Comm comm, const Topology& t, int rank) {
  if (rank < 0 || rank >= int(t.index.size())) return raise(comm, MPI_ERR_RANK, fn, "invalid rank %d", rank);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  WEFT_ENTRY;
  const char* fn = "MPI_Dims_create";
  WEFT_REQUIRE_INIT(fn);
  if (nnodes <= 0) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "nnodes %d must be positive", nnodes);
  if (ndims < 0) return raise(MPI_COMM_NULL, MPI_ERR_DIMS, fn, "negative ndims %d", ndims);
  if (ndims > 0 && !dims) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "dims is NULL");
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return raise(MPI_COMM_NULL, MPI_ERR_DIMS, fn, "dims[%d] is negative", i);
    if (dims[i] > 0) fixed *= dims[i];
    else ++free_dims;
  }
  if (nnodes % fixed != 0)
    return raise(MPI_COMM_NULL, MPI_ERR_DIMS, fn, "the fixed dimensions (product %d) do not divide nnodes %d", fixed,
                 nnodes);
  if (free_dims == 0 && fixed != nnodes)
    return raise(MPI_COMM_NULL, MPI_ERR_DIMS, fn, "dims multiply to %d, not %d", fixed, nnodes);
  balanced_dims(nnodes, ndims, dims);
  return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int,
                     MPI_Comm* comm_cart) {
  WEFT_ENTRY;
  const char* fn = "MPI_Cart_create";
  if (comm_cart) *comm_cart = MPI_COMM_NULL;  // what a failed call leaves
  Comm* c;
  if (int rc = comm_of(fn, comm, &c)) return rc;
  if (int rc = check_inter(fn, comm, *c)) return rc;
  if (ndims < 0) return raise(comm, MPI_ERR_DIMS, fn, "negative ndims %d", ndims);
  if (!comm_cart || (ndims > 0 && (!dims || !periods)))
    return raise(comm, MPI_ERR_ARG, fn, "dims, periods or comm_cart is NULL");
  long product = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return raise(comm, MPI_ERR_DIMS, fn, "dims[%d] is %d", i, dims[i]);
    product *= dims[i];
  }
  if (product > c->size)
    return raise(comm, MPI_ERR_DIMS, fn, "the grid has %ld positions but the communicator only %d ranks", product, c->size);
  auto t = std::make_shared<Topology>();
  t->kind = MPI_CART;
  t->dims.assign(dims, dims + ndims);
  for (int i = 0; i < ndims; ++i) t->periods.push_back(periods[i] ? 1 : 0);
  return create_communicator(fn, comm, first_ranks(*c, int(product)), t, comm_cart);
}

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Cartdim_get", comm, MPI_CART, &t)) return rc;
  if (!ndims) return raise(comm, MPI_ERR_ARG, "MPI_Cartdim_get", "ndims is NULL");
  *ndims = int(t->dims.size());
  return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Cart_get", comm, MPI_CART, &t)) return rc;
  int n = int(t->dims.size());
  if (maxdims < n) return raise(comm, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d < %d dimensions", maxdims, n);
  std::vector<int> mine(size_t(n) + 1);
  cart_coords(*t, lookup_comm(comm)->rank, mine.data());
  for (int i = 0; i < n; ++i) {
    if (dims) dims[i] = t->dims[size_t(i)];
    if (periods) periods[i] = t->periods[size_t(i)];
    if (coords) coords[i] = mine[size_t(i)];
  }
  return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Cart_rank", comm, MPI_CART, &t)) return rc;
  if (!rank || (!coords && !t->dims.empty())) return raise(comm, MPI_ERR_ARG, "MPI_Cart_rank", "coords or rank is NULL");
  int r = cart_rank(*t, coords);
  if (r < 0) return raise(comm, MPI_ERR_ARG, "MPI_Cart_rank", "coordinates outside a non-periodic dimension");
  *rank = r;
  return MPI_SUCCESS;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Cart_coords", comm, MPI_CART, &t)) return rc;
  int size = lookup_comm(comm)->size;
  if (rank < 0 || rank >= size) return raise(comm, MPI_ERR_RANK, "MPI_Cart_coords", "invalid rank %d", rank);
  if (maxdims < int(t->dims.size()) || (!coords && !t->dims.empty()))
    return raise(comm, MPI_ERR_ARG, "MPI_Cart_coords", "maxdims %d too small or coords NULL", maxdims);
  cart_coords(*t, rank, coords);
  return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Cart_shift", comm, MPI_CART, &t)) return rc;
  if (direction < 0 || direction >= int(t->dims.size()))
    return raise(comm, MPI_ERR_DIMS, "MPI_Cart_shift", "direction %d outside 0..%zu", direction, t->dims.size() - 1);
  if (!rank_source || !rank_dest) return raise(comm, MPI_ERR_ARG, "MPI_Cart_shift", "rank_source or rank_dest is NULL");
  int s, d;
  cart_shift(*t, lookup_comm(comm)->rank, direction, disp, &s, &d);
  *rank_dest = d < 0 ? MPI_PROC_NULL : d;
  *rank_source = s < 0 ? MPI_PROC_NULL : s;
  return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Cart_sub", comm, MPI_CART, &t)) return rc;
  if (!newcomm || (!remain_dims && !t->dims.empty())) return raise(comm, MPI_ERR_ARG, "MPI_Cart_sub", "remain_dims or newcomm is NULL");
  auto sub = std::make_shared<Topology>();
  int color, key;
  static_cast<CartGrid&>(*sub) = cart_sub(*t, lookup_comm(comm)->rank, remain_dims, &color, &key);
  sub->kind = MPI_CART;
  // No dimension left: one zero-dimensional grid, on rank 0 of comm; MPI_COMM_NULL elsewhere.
  const int rank = lookup_comm(comm)->rank;
  if (sub->dims.empty()) color = rank == 0 ? 0 : MPI_UNDEFINED;
  MPI_Comm split;
  if (int rc = PMPI_Comm_split(comm, color, key, &split)) return rc;
  if (split != MPI_COMM_NULL) lookup_comm_entry(split)->topo = sub;
  *newcomm = split;
  return MPI_SUCCESS;
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int[], int* newrank) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Cart_map", comm, &c)) return rc;
  if (!newrank || (ndims > 0 && !dims)) return raise(comm, MPI_ERR_ARG, "MPI_Cart_map", "dims or newrank is NULL");
  long product = 1;
  for (int i = 0; i < ndims; ++i) product *= dims[i];
  if (product > c->size) return raise(comm, MPI_ERR_DIMS, "MPI_Cart_map", "grid of %ld larger than the communicator", product);
  *newrank = c->rank < product ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  WEFT_ENTRY;
  CommEntry* e;
  if (int rc = comm_entry_of("MPI_Topo_test", comm, &e)) return rc;
  if (!status) return raise(comm, MPI_ERR_ARG, "MPI_Topo_test", "status is NULL");
  *status = e->topo ? e->topo->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int indx[], const int edges[], int,
                      MPI_Comm* comm_graph) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Graph_create", comm, &c)) return rc;
  if (int rc = check_inter("MPI_Graph_create", comm, *c)) return rc;
  if (nnodes < 0 || nnodes > c->size)
    return raise(comm, MPI_ERR_ARG, "MPI_Graph_create", "nnodes %d outside 0..%d", nnodes, c->size);
  if (!comm_graph || (nnodes > 0 && (!indx || !edges)))
    return raise(comm, MPI_ERR_ARG, "MPI_Graph_create", "index, edges or comm_graph is NULL");
  auto t = std::make_shared<Topology>();
  t->kind = MPI_GRAPH;
  t->index.assign(indx, indx + nnodes);
  int nedges = nnodes ? indx[nnodes - 1] : 0;
  for (int i = 0; i < nnodes; ++i)
    if (indx[i] < (i ? indx[i - 1] : 0)) return raise(comm, MPI_ERR_ARG, "MPI_Graph_create", "index is not non-decreasing at %d", i);
  for (int i = 0; i < nedges; ++i)
    if (edges[i] < 0 || edges[i] >= nnodes) return raise(comm, MPI_ERR_ARG, "MPI_Graph_create", "edge %d names node %d outside 0..%d", i, edges[i], nnodes - 1);
  t->edges.assign(edges, edges + nedges);
  return create_communicator("MPI_Graph_create", comm, first_ranks(*c, nnodes), t, comm_graph);
}

int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Graphdims_get", comm, MPI_GRAPH, &t)) return rc;
  if (!nnodes || !nedges) return raise(comm, MPI_ERR_ARG, "MPI_Graphdims_get", "nnodes or nedges is NULL");
  *nnodes = int(t->index.size());
  *nedges = int(t->edges.size());
  return MPI_SUCCESS;
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[]) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Graph_get", comm, MPI_GRAPH, &t)) return rc;
  for (int i = 0; i < std::min(maxindex, int(t->index.size())); ++i) indx[i] = t->index[size_t(i)];
  for (int i = 0; i < std::min(maxedges, int(t->edges.size())); ++i) edges[i] = t->edges[size_t(i)];
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Graph_neighbors_count", comm, MPI_GRAPH, &t)) return rc;
  if (int rc = check_graph_rank("MPI_Graph_neighbors_count", comm, *t, rank)) return rc;
  if (!nneighbors) return raise(comm, MPI_ERR_ARG, "MPI_Graph_neighbors_count", "nneighbors is NULL");
  int begin, end;
  graph_neighbor_range(t->index, rank, &begin, &end);
  *nneighbors = end - begin;
  return MPI_SUCCESS;
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Graph_neighbors", comm, MPI_GRAPH, &t)) return rc;
  if (int rc = check_graph_rank("MPI_Graph_neighbors", comm, *t, rank)) return rc;
  int begin, end;
  graph_neighbor_range(t->index, rank, &begin, &end);
  for (int i = begin, k = 0; i < end && k < maxneighbors; ++i, ++k) neighbors[k] = t->edges[size_t(i)];
  return MPI_SUCCESS;
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int[], const int[], int* newrank) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Graph_map", comm, &c)) return rc;
  if (!newrank) return raise(comm, MPI_ERR_ARG, "MPI_Graph_map", "newrank is NULL");
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[], MPI_Info,
                                    int, MPI_Comm* comm_dist_graph) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Dist_graph_create_adjacent", comm, &c)) return rc;
  if (int rc = check_inter("MPI_Dist_graph_create_adjacent", comm, *c)) return rc;
  if (indegree < 0 || outdegree < 0 || !comm_dist_graph)
    return raise(comm, MPI_ERR_ARG, "MPI_Dist_graph_create_adjacent", "negative degree or NULL comm_dist_graph");
  auto t = std::make_shared<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  for (int i = 0; i < indegree; ++i) {
    if (sources[i] < 0 || sources[i] >= c->size) return raise(comm, MPI_ERR_RANK, "MPI_Dist_graph_create_adjacent", "source %d invalid", sources[i]);
    t->sources.push_back(sources[i]);
    t->source_weights.push_back(t->weighted && sourceweights != MPI_WEIGHTS_EMPTY ? sourceweights[i] : 1);
  }
  for (int i = 0; i < outdegree; ++i) {
    if (destinations[i] < 0 || destinations[i] >= c->size) return raise(comm, MPI_ERR_RANK, "MPI_Dist_graph_create_adjacent", "destination %d invalid", destinations[i]);
    t->dests.push_back(destinations[i]);
    t->dest_weights.push_back(t->weighted && destweights != MPI_WEIGHTS_EMPTY ? destweights[i] : 1);
  }
  return create_communicator("MPI_Dist_graph_create_adjacent", comm, c->world_ranks, t, comm_dist_graph);
}

// Every rank may name edges between any ranks: all are shared (coll::share_edges), and each
// rank keeps the edges that touch it.
int PMPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info, int,
                           MPI_Comm* comm_dist_graph) {
  WEFT_ENTRY;
  Comm* c;
  if (int rc = comm_of("MPI_Dist_graph_create", comm, &c)) return rc;
  if (int rc = check_inter("MPI_Dist_graph_create", comm, *c)) return rc;
  if (n < 0 || !comm_dist_graph) return raise(comm, MPI_ERR_ARG, "MPI_Dist_graph_create", "negative n or NULL comm_dist_graph");
  const bool weighted = weights != MPI_UNWEIGHTED;
  std::vector<int64_t> mine;  // (source, dest, weight) triples
  for (int i = 0, k = 0; i < n; ++i) {
    if (sources[i] < 0 || sources[i] >= c->size) return raise(comm, MPI_ERR_RANK, "MPI_Dist_graph_create", "source %d invalid", sources[i]);
    if (degrees[i] < 0) return raise(comm, MPI_ERR_ARG, "MPI_Dist_graph_create", "negative degree at %d", i);
    for (int j = 0; j < degrees[i]; ++j, ++k) {
      if (destinations[k] < 0 || destinations[k] >= c->size) return raise(comm, MPI_ERR_RANK, "MPI_Dist_graph_create", "destination %d invalid", destinations[k]);
      mine.insert(mine.end(), {sources[i], destinations[k], weighted && weights != MPI_WEIGHTS_EMPTY ? weights[k] : 1});
    }
  }
  auto t = std::make_shared<Topology>();
  t->kind = MPI_DIST_GRAPH;
  t->weighted = weighted;
  Status s = coll::share_edges(coll_context(*c), mine, t.get());
  if (s != Status::ok) return raise_status(comm, s, "MPI_Dist_graph_create");
  return create_communicator("MPI_Dist_graph_create", comm, c->world_ranks, t, comm_dist_graph);
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Dist_graph_neighbors_count", comm, MPI_DIST_GRAPH, &t)) return rc;
  if (!indegree || !outdegree || !weighted) return raise(comm, MPI_ERR_ARG, "MPI_Dist_graph_neighbors_count", "an output is NULL");
  *indegree = int(t->sources.size());
  *outdegree = int(t->dests.size());
  *weighted = t->weighted;
  return MPI_SUCCESS;
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]) {
  WEFT_ENTRY;
  const Topology* t = nullptr;
  if (int rc = topo_of("MPI_Dist_graph_neighbors", comm, MPI_DIST_GRAPH, &t)) return rc;
  for (int i = 0; i < std::min(maxindegree, int(t->sources.size())); ++i) {
    sources[i] = t->sources[size_t(i)];
    if (t->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED) sourceweights[i] = t->source_weights[size_t(i)];
  }
  for (int i = 0; i < std::min(maxoutdegree, int(t->dests.size())); ++i) {
    destinations[i] = t->dests[size_t(i)];
    if (t->weighted && destweights && destweights != MPI_UNWEIGHTED) destweights[i] = t->dest_weights[size_t(i)];
  }
  return MPI_SUCCESS;
}

}  // extern "C"

WEFT_PMPI_ALIASES(Dims_create, Cart_create, Cartdim_get, Cart_get, Cart_rank, Cart_coords,
                  Cart_shift, Cart_sub, Cart_map, Topo_test, Graph_create, Graphdims_get, Graph_get,
                  Graph_neighbors_count, Graph_neighbors, Graph_map, Dist_graph_create_adjacent,
                  Dist_graph_create, Dist_graph_neighbors_count, Dist_graph_neighbors)
