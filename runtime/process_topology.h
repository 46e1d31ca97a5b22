// Process topologies as pure computation: Cartesian grids (row-major ranks, periodic or not)
// and graphs (MPI's index/edges form). The MPI layer keeps the topology of a communicator
// and checks the arguments.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft {

struct CartGrid {
  std::vector<int> dims, periods;  // periods[d] != 0: dimension d wraps around
};

// A distributed graph as one rank sees it: the edges into it and out of it, with weights.
struct DistGraph {
  std::vector<int> sources, source_weights;  // in-edges
  std::vector<int> dests, dest_weights;      // out-edges
  bool weighted = false;
};

// From every rank's (source, dest, weight) triples, concatenated: the edges that touch `rank`.
void keep_edges(const std::vector<int64_t>& triples, int rank, DistGraph* g);
// Where rank's entries start in a table of every rank's entries, counts[r] of them each.
int64_t entries_before(const std::vector<int64_t>& counts, int rank);

// Fills the zero entries of dims (ndims of them, the others fixed and dividing nnodes) with a
// balanced factorisation of what is left of nnodes, non-increasing.
void balanced_dims(int nnodes, int ndims, int* dims);
// Coordinates of a rank (dims.size() of them).
void cart_coords(const CartGrid& g, int rank, int* coords);
// Rank of coordinates, wrapping periodic dimensions; -1 if outside a non-periodic one.
int cart_rank(const CartGrid& g, const int* coords);
// Ranks `disp` steps before (*source) and after (*dest) `rank` along `direction`; -1 past the
// edge of a non-periodic dimension.
void cart_shift(const CartGrid& g, int rank, int direction, int disp, int* source, int* dest);
// The sub-grid of the dimensions kept (remain[d] != 0) that holds `rank`: ranks with the same
// coordinates in the dropped dimensions share a color, ordered by key.
CartGrid cart_sub(const CartGrid& g, int rank, const int* remain, int* color, int* key);

// Neighbours of node `rank` of a graph: edges[begin, end).
inline void graph_neighbor_range(const std::vector<int>& index, int rank, int* begin, int* end) {
  *begin = rank ? index[size_t(rank) - 1] : 0;
  *end = index[size_t(rank)];
}

// The neighbours of `rank` in the order of the neighbourhood collectives. In a grid: for each
// dimension the rank one step before, then the one after (-1 past the edge of a non-periodic
// dimension), as sources and as destinations alike. In a graph: its edges, both ways.
void cart_neighbors(const CartGrid& g, int rank, std::vector<int>* sources, std::vector<int>* dests);
void graph_neighbors(const std::vector<int>& index, const std::vector<int>& edges, int rank,
                     std::vector<int>* sources, std::vector<int>* dests);

}  // namespace weft
