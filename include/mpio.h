/* weft/mpio.h - MPI-IO's declarations live in mpi.h (declared, not supported yet); this header
 * is here for programs that include <mpio.h>, as they may with MPICH. */
#ifndef WEFT_MPIO_H_INCLUDED
#define WEFT_MPIO_H_INCLUDED
#include <mpi.h>
#endif
