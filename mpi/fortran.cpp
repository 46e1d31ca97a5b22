// The C side of Fortran interoperability: MPI_Status in its Fortran form (an INTEGER array of
// MPI_F_STATUS_SIZE, the same five words) and the parameterised Fortran 90 types, which are the
// predefined size-specific types that hold the asked precision and range, each under an
// envelope that names its constructor (parameterized_type).
#include <cstring>

#include "state.h"

static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint));

namespace weft::mpi {

namespace {

// The first of `kinds` whose precision and exponent range cover p and r (MPI_UNDEFINED: any).
struct Kind {
  int precision, range;
  MPI_Datatype type;
};

// The result answers MPI_Type_get_envelope with the F90 combiner and the arguments given.
template <size_t N>
int pick(const char* fn, Combiner combiner, const Kind (&kinds)[N], int p, int r, MPI_Datatype* newtype) {
  WEFT_REQUIRE_INIT(fn);
  if (!newtype) return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "newtype is NULL");
  for (const Kind& k : kinds)
    if ((p == MPI_UNDEFINED || p <= k.precision) && (r == MPI_UNDEFINED || r <= k.range)) {
      *newtype = parameterized_type(combiner, k.type, p, r);
      return MPI_SUCCESS;
    }
  return raise(MPI_COMM_NULL, MPI_ERR_ARG, fn, "no type has precision %d and range %d", p, r);
}

// IEEE binary32, binary64 and binary128: decimal precision and exponent range.
constexpr Kind kReals[] = {{6, 37, MPI_REAL4}, {15, 307, MPI_REAL8}, {33, 4931, MPI_REAL16}};
constexpr Kind kComplexes[] = {{6, 37, MPI_COMPLEX8}, {15, 307, MPI_COMPLEX16}, {33, 4931, MPI_COMPLEX32}};
// Integers of 1, 2, 4 and 8 bytes: the decimal exponent range each holds.
constexpr Kind kIntegers[] = {{0, 2, MPI_INTEGER1}, {0, 4, MPI_INTEGER2}, {0, 9, MPI_INTEGER4}, {0, 18, MPI_INTEGER8}};

}  // namespace

}  // namespace weft::mpi

using namespace weft::mpi;

extern "C" {

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  WEFT_ENTRY;
  if (!c_status || c_status == MPI_STATUS_IGNORE || !f_status)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Status_c2f", "c_status or f_status is NULL");
  memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  WEFT_ENTRY;
  if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
    return raise(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Status_f2c", "f_status or c_status is NULL");
  memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return pick("MPI_Type_create_f90_real", weft::Combiner::f90_real, kReals, p, r, newtype);
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return pick("MPI_Type_create_f90_complex", weft::Combiner::f90_complex, kComplexes, p, r, newtype);
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  WEFT_ENTRY;
  return pick("MPI_Type_create_f90_integer", weft::Combiner::f90_integer, kIntegers, MPI_UNDEFINED, r, newtype);
}

}  // extern "C"

WEFT_PMPI_ALIASES(Status_c2f, Status_f2c, Type_create_f90_real, Type_create_f90_complex,
                  Type_create_f90_integer)
