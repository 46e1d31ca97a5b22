// MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size, and their large-count
// forms: the "external32" representation (runtime/external32.h), the only one defined.
#include <cstring>

#include "runtime/external32.h"
#include "state.h"

namespace weft::mpi {

namespace {

// The datarep and datatype of a call; *bytes the external32 size of count elements.
int check_external(const char* fn, const char* datarep, MPI_Count count, MPI_Datatype datatype,
                   const Datatype** d, size_t* bytes) {
  WEFT_REQUIRE_INIT(fn);
  if (!datarep || strcmp(datarep, "external32") != 0)
    return raise(MPI_COMM_NULL, MPI_ERR_UNSUPPORTED_DATAREP, fn, "data representation \"%s\" (only \"external32\")",
                 datarep ? datarep : "(null)");
  if (count < 0) return raise(MPI_COMM_NULL, MPI_ERR_COUNT, fn, "negative count %ld", long(count));
  if (int rc = check_datatype(MPI_COMM_NULL, fn, datatype, d)) return rc;
  if (!external32_size(*d, size_t(count), bytes))
    return raise(MPI_COMM_NULL, MPI_ERR_TYPE, fn, "%s has a basic type without an external32 form here",
                 (*d)->name.empty() ? "the datatype" : (*d)->name.c_str());
  return MPI_SUCCESS;
}

// Pack (packing) or unpack `count` elements of the user's buffer to or from *position of an
// external32 buffer of `size` bytes; *position moves past them.
int external_call(const char* fn, bool packing, const char* datarep, const void* inbuf, MPI_Count count,
                  MPI_Datatype datatype, void* outbuf, MPI_Count size, MPI_Count* position) {
  const Datatype* d;
  size_t bytes;
  if (int rc = check_external(fn, datarep, count, datatype, &d, &bytes)) return rc;
  if (!position) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "position is NULL");
  if (*position < 0 || size < 0 || size_t(*position) + bytes > size_t(size))
    return raise(MPI_COMM_NULL, MPI_ERR_TRUNCATE, fn, "%zu bytes at position %ld do not fit in %ld", bytes,
                 long(*position), long(size));
  if (bytes && (!inbuf || !outbuf)) return raise(MPI_COMM_NULL, MPI_ERR_BUFFER, fn, "inbuf or outbuf is NULL");
  if (packing) external32_pack(d, inbuf, size_t(count), static_cast<char*>(outbuf) + *position);
  else external32_unpack(d, static_cast<const char*>(inbuf) + *position, size_t(count), outbuf);
  *position += MPI_Count(bytes);
  return MPI_SUCCESS;
}

int external_size(const char* fn, const char* datarep, MPI_Count count, MPI_Datatype datatype, MPI_Count* size) {
  const Datatype* d;
  size_t bytes;
  if (int rc = check_external(fn, datarep, count, datatype, &d, &bytes)) return rc;
  if (!size) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "size is NULL");
  *size = MPI_Count(bytes);
  return MPI_SUCCESS;
}

}  // namespace

}  // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

int PMPI_Pack_external(const char* datarep, const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                       MPI_Aint outsize, MPI_Aint* position) {
  WEFT_ENTRY;
  return external_call("MPI_Pack_external", true, datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf,
                         int outcount, MPI_Datatype datatype) {
  WEFT_ENTRY;
  return external_call("MPI_Unpack_external", false, datarep, inbuf, outcount, datatype, outbuf, insize, position);
}

int PMPI_Pack_external_size(const char* datarep, int incount, MPI_Datatype datatype, MPI_Aint* size) {
  WEFT_ENTRY;
  return external_size("MPI_Pack_external_size", datarep, incount, datatype, size);
}

int PMPI_Pack_external_c(const char* datarep, const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void* outbuf, MPI_Count outsize, MPI_Count* position) {
  WEFT_ENTRY;
  return external_call("MPI_Pack_external_c", true, datarep, inbuf, incount, datatype, outbuf, outsize, position);
}

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize, MPI_Count* position,
                           void* outbuf, MPI_Count outcount, MPI_Datatype datatype) {
  WEFT_ENTRY;
  return external_call("MPI_Unpack_external_c", false, datarep, inbuf, outcount, datatype, outbuf, insize, position);
}

int PMPI_Pack_external_size_c(const char* datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count* size) {
  WEFT_ENTRY;
  return external_size("MPI_Pack_external_size_c", datarep, incount, datatype, size);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Pack_external, Unpack_external, Pack_external_size, Pack_external_c, Unpack_external_c,
                  Pack_external_size_c)
