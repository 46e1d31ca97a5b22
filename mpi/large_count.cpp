// The large-count (MPI-4 _c) forms of the datatype, status, matched-receive and one-sided
// routines whose engines take int counts: each checks that its MPI_Count arguments fit (an
// argument that does not is MPI_ERR_COUNT, never cut short) and calls the int form. The
// point-to-point, collective, packing and reduction _c forms share their int forms' paths
// (pt2pt.cpp, sendrecv.cpp, coll.cpp, coll_data.cpp, datatypes.cpp, ops.cpp).
//
// The datatype constructors keep their arguments as MPI_Type_get_contents returns them, in the
// int array (num_large_counts is always 0), so their _c forms take what an int holds:
//   - rejected above INT_MAX (or below INT_MIN): count, blocklength(s), the element-unit stride
//     of MPI_Type_vector_c, the element-unit displacements of MPI_Type_indexed_c and
//     MPI_Type_create_indexed_block_c, the sizes, subsizes and starts of
//     MPI_Type_create_subarray_c and the gsizes of MPI_Type_create_darray_c;
//   - taken whole: byte strides and displacements (MPI_Type_create_hvector_c,
//     MPI_Type_create_hindexed(_block)_c, MPI_Type_create_struct_c) and MPI_Type_create_resized_c's
//     lb and extent, which are MPI_Aint-sized in both forms;
//   - MPI_Type_contiguous_c takes any count (datatypes.cpp): a type's size, extent and packed
//     size are 64-bit; its envelope has no large-count part, so MPI_Type_get_contents reports a
//     count above INT_MAX cut to an int.
#include <climits>
#include <vector>

#include "runtime/typemap.h"
#include "state.h"

namespace weft::mpi {

namespace {

// v as an int into *out; MPI_ERR_COUNT (raised on comm) when it does not fit.
int narrow(const char* fn, MPI_Count v, const char* arg, int* out, MPI_Comm comm = MPI_COMM_NULL) {
  if (v < INT_MIN || v > INT_MAX)
    return raise(comm, MPI_ERR_COUNT, fn, "%ld (argument '%s') is beyond the largest value supported (%d)", long(v),
                 arg, INT_MAX);
  *out = int(v);
  return MPI_SUCCESS;
}

// n entries of a (null stays empty) as ints into *out.
int narrow_array(const char* fn, const MPI_Count* a, int n, const char* arg, std::vector<int>* out) {
  if (!a) return MPI_SUCCESS;
  out->resize(size_t(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i)
    if (int rc = narrow(fn, a[i], arg, &(*out)[size_t(i)])) return rc;
  return MPI_SUCCESS;
}

// The data of an array narrowed from `a` (null when a is).
const int* data_or_null(const MPI_Count* a, const std::vector<int>& v) { return a ? v.data() : nullptr; }

// n displacements in bytes (MPI_Count) as MPI_Aint.
std::vector<MPI_Aint> as_aints(const MPI_Count* a, int n) {
  return a ? std::vector<MPI_Aint>(a, a + (n > 0 ? n : 0)) : std::vector<MPI_Aint>{};
}

// The count, block lengths (ints) and byte displacements (MPI_Aint) of the h-indexed and struct
// forms; null arrays stay null, for the int form to report.
struct Blocks {
  int n = 0;
  std::vector<int> lengths;
  std::vector<MPI_Aint> displs;
  const int* length_data = nullptr;
  const MPI_Aint* displ_data = nullptr;
};

int narrow_blocks(const char* fn, MPI_Count count, const MPI_Count* lengths, const MPI_Count* displs, Blocks* b) {
  if (int rc = narrow(fn, count, "count", &b->n)) return rc;
  if (int rc = narrow_array(fn, lengths, b->n, "array_of_blocklengths", &b->lengths)) return rc;
  b->displs = as_aints(displs, b->n);
  b->length_data = data_or_null(lengths, b->lengths);
  b->displ_data = displs ? b->displs.data() : nullptr;
  return MPI_SUCCESS;
}

// An MPI_Count query through its _x form.
int count_query(const char* fn, const MPI_Status* status, MPI_Datatype dt, MPI_Count* count, bool elements) {
  if (!status || status == MPI_STATUS_IGNORE || !count) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "status or count is NULL");
  if (elements) return PMPI_Get_elements_x(status, dt, count);
  const Datatype* d = lookup_datatype(dt);
  if (!d) return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "invalid datatype 0x%x", unsigned(dt));
  const long long n = type_count_elements(d, status_bytes(status));  // packed bytes per element
  *count = n < 0 ? MPI_UNDEFINED : MPI_Count(n);
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

// ---- Datatype constructors ----

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_vector_c";
  int n = 0, b = 0, s = 0;
  if (int rc = narrow(fn, count, "count", &n)) return rc;
  if (int rc = narrow(fn, blocklength, "blocklength", &b)) return rc;
  if (int rc = narrow(fn, stride, "stride", &s)) return rc;
  return PMPI_Type_vector(n, b, s, oldtype, newtype);
}

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_hvector_c";
  int n = 0, b = 0;
  if (int rc = narrow(fn, count, "count", &n)) return rc;
  if (int rc = narrow(fn, blocklength, "blocklength", &b)) return rc;
  return PMPI_Type_create_hvector(n, b, MPI_Aint(stride), oldtype, newtype);
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_indexed_c";
  int n = 0;
  std::vector<int> bl, displs;
  if (int rc = narrow(fn, count, "count", &n)) return rc;
  if (int rc = narrow_array(fn, array_of_blocklengths, n, "array_of_blocklengths", &bl)) return rc;
  if (int rc = narrow_array(fn, array_of_displacements, n, "array_of_displacements", &displs)) return rc;
  return PMPI_Type_indexed(n, data_or_null(array_of_blocklengths, bl), data_or_null(array_of_displacements, displs),
                           oldtype, newtype);
}

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_indexed_block_c";
  int n = 0, b = 0;
  std::vector<int> displs;
  if (int rc = narrow(fn, count, "count", &n)) return rc;
  if (int rc = narrow(fn, blocklength, "blocklength", &b)) return rc;
  if (int rc = narrow_array(fn, array_of_displacements, n, "array_of_displacements", &displs)) return rc;
  return PMPI_Type_create_indexed_block(n, b, data_or_null(array_of_displacements, displs), oldtype, newtype);
}

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                      MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_hindexed_block_c";
  int n = 0, b = 0;
  if (int rc = narrow(fn, count, "count", &n)) return rc;
  if (int rc = narrow(fn, blocklength, "blocklength", &b)) return rc;
  const std::vector<MPI_Aint> displs = as_aints(array_of_displacements, n);
  return PMPI_Type_create_hindexed_block(n, b, array_of_displacements ? displs.data() : nullptr, oldtype, newtype);
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                              MPI_Datatype* newtype) {
  WEFT_ENTRY;
  Blocks b;
  if (int rc = narrow_blocks("MPI_Type_create_struct_c", count, array_of_blocklengths, array_of_displacements, &b))
    return rc;
  return PMPI_Type_create_struct(b.n, b.length_data, b.displ_data, array_of_types, newtype);
}

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  WEFT_ENTRY;
  const char* fn = "MPI_Type_create_subarray_c";
  std::vector<int> sizes, subsizes, starts;
  if (int rc = narrow_array(fn, array_of_sizes, ndims, "array_of_sizes", &sizes)) return rc;
  if (int rc = narrow_array(fn, array_of_subsizes, ndims, "array_of_subsizes", &subsizes)) return rc;
  if (int rc = narrow_array(fn, array_of_starts, ndims, "array_of_starts", &starts)) return rc;
  return PMPI_Type_create_subarray(ndims, data_or_null(array_of_sizes, sizes),
                                   data_or_null(array_of_subsizes, subsizes), data_or_null(array_of_starts, starts),
                                   order, oldtype, newtype);
}

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                              int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  std::vector<int> gsizes;
  if (int rc = narrow_array("MPI_Type_create_darray_c", array_of_gsizes, ndims, "array_of_gsizes", &gsizes))
    return rc;
  return PMPI_Type_create_darray(size, rank, ndims, data_or_null(array_of_gsizes, gsizes), array_of_distribs,
                                 array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return PMPI_Type_create_resized(oldtype, MPI_Aint(lb), MPI_Aint(extent), newtype);
}

// ---- Datatype queries ----

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) { WEFT_ENTRY; return PMPI_Type_size_x(datatype, size); }

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  WEFT_ENTRY;
  return PMPI_Type_get_extent_x(datatype, lb, extent);
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  WEFT_ENTRY;
  return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

// weft's datatypes keep no large counts: the envelope's num_large_counts is 0.
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses,
                             MPI_Count* num_large_counts, MPI_Count* num_datatypes, int* combiner) {
  WEFT_ENTRY;
  if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Type_get_envelope_c",
                 "num_integers, num_addresses, num_large_counts, num_datatypes or combiner is NULL");
  int ni, na, nd;
  int rc = PMPI_Type_get_envelope(datatype, &ni, &na, &nd, combiner);
  if (rc != MPI_SUCCESS) return rc;
  *num_integers = ni;
  *num_addresses = na;
  *num_large_counts = 0;
  *num_datatypes = nd;
  return MPI_SUCCESS;
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count, MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count[], MPI_Datatype array_of_datatypes[]) {
  WEFT_ENTRY;
  auto clamp = [](MPI_Count v) { return v > INT_MAX ? INT_MAX : int(v); };
  return PMPI_Type_get_contents(datatype, clamp(max_integers), clamp(max_addresses), clamp(max_datatypes),
                                array_of_integers, array_of_addresses, array_of_datatypes);
}

// ---- Status ----

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  WEFT_ENTRY;
  return count_query("MPI_Get_count_c", status, datatype, count, false);
}

int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  WEFT_ENTRY;
  return count_query("MPI_Get_elements_c", status, datatype, count, true);
}

int PMPI_Status_set_elements_c(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  WEFT_ENTRY;
  return PMPI_Status_set_elements_x(status, datatype, count);
}

// ---- Matched receives ----

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request) {
  WEFT_ENTRY;
  int n = 0;
  if (int rc = narrow("MPI_Imrecv_c", count, "count", &n)) return rc;
  return PMPI_Imrecv(buf, n, datatype, message, request);
}

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status) {
  WEFT_ENTRY;
  int n = 0;
  if (int rc = narrow("MPI_Mrecv_c", count, "count", &n)) return rc;
  return PMPI_Mrecv(buf, n, datatype, message, status);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Type_vector_c, Type_create_hvector_c, Type_indexed_c,
                  Type_create_indexed_block_c, Type_create_hindexed_block_c, Type_create_struct_c,
                  Type_create_subarray_c, Type_create_darray_c, Type_create_resized_c, Type_size_c, Type_get_extent_c,
                  Type_get_true_extent_c, Type_get_envelope_c, Type_get_contents_c, Get_count_c, Get_elements_c,
                  Status_set_elements_c, Imrecv_c, Mrecv_c)
