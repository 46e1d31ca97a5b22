/*
 * mpi.h - the MPI C interface of weft.
 *
 * weft is an MPI communication runtime.  Its C API is binary compatible
 * with the MPICH 4.x ABI: handles are plain integers with the same
 * encodings MPICH uses, every predefined constant has the same value, and
 * MPI_Status has the same layout.  A program compiled and linked against
 * MPICH can therefore run unchanged on weft's libmpi.
 *
 * The header advertises MPI 3.1 for now; it will move to 4.0 once the
 * MPI-4 routines are implemented.  Declared are the routines weft
 * provides or is about to provide, and a further set (marked in
 * weft/mpi_functions.h) that is declared only so that programs link:
 * those fail with MPI_ERR_UNSUPPORTED_OPERATION until they are implemented.
 */
#ifndef MPI_INCLUDED
#define MPI_INCLUDED

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* Everything declared here is part of the library's public interface,
 * even when the library itself is built with hidden visibility. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ======================================================================
 * Version information
 * ====================================================================== */

#define MPI_VERSION    4
#define MPI_SUBVERSION 0

#define WEFT         1
#define WEFT_VERSION "0.1.0"

/* The MPICH release whose ABI weft implements, as implementations of the MPICH ABI report it
 * (MPICH_NUMVERSION: major * 10000000 + minor * 100000 + revision * 1000 + 300 for a
 * release). */
#define MPICH_VERSION    "4.0.2"
#define MPICH_NUMVERSION 40002300

/* ======================================================================
 * Basic types
 *
 * All object handles are ints, as in MPICH; the bit pattern of a handle
 * encodes its kind, so the predefined values below must not change.
 * ====================================================================== */

typedef int MPI_Datatype;
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Win;
typedef int MPI_Session;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Info;
typedef int MPIX_Stream;  /* MPICH extension: a stream (e.g. a CUDA stream) */

typedef long MPI_Aint;    /* wide enough for any address */
typedef long MPI_Offset;  /* file offsets */
typedef long MPI_Count;   /* large counts */
typedef int  MPI_Fint;    /* Fortran INTEGER */

/* Files are opaque pointers (NULL is the null file). */
typedef struct weft_file *MPI_File;

/* Status of a completed operation.  The received byte count is split over
 * the first two words: count_lo holds its low 32 bits, and the upper 31
 * bits of count_hi_and_cancelled hold the rest; bit 0 of that word is the
 * "cancelled" flag.  Field order and sizes are fixed by the ABI. */
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;

/* ======================================================================
 * Null handles
 * ====================================================================== */

#define MPI_COMM_NULL        ((MPI_Comm)0x04000000)
#define MPI_GROUP_NULL       ((MPI_Group)0x08000000)
#define MPI_DATATYPE_NULL    ((MPI_Datatype)0x0c000000)
#define MPI_ERRHANDLER_NULL  ((MPI_Errhandler)0x14000000)
#define MPI_OP_NULL          ((MPI_Op)0x18000000)
#define MPI_INFO_NULL        ((MPI_Info)0x1c000000)
#define MPI_WIN_NULL         ((MPI_Win)0x20000000)
#define MPI_REQUEST_NULL     ((MPI_Request)0x2c000000)
#define MPI_MESSAGE_NULL     ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC  ((MPI_Message)0x6c000000)
#define MPI_SESSION_NULL     ((MPI_Session)0x38000000)
#define MPIX_STREAM_NULL     ((MPIX_Stream)0x3c000000)
#define MPI_FILE_NULL        ((MPI_File)0)

/* ======================================================================
 * Predefined datatypes
 *
 * For the basic types, bits 8..15 of the handle hold the size in bytes.
 * ====================================================================== */

/* C basic types */
#define MPI_CHAR                ((MPI_Datatype)0x4c000101)
#define MPI_SIGNED_CHAR         ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_CHAR       ((MPI_Datatype)0x4c000102)
#define MPI_WCHAR               ((MPI_Datatype)0x4c00040e)
#define MPI_SHORT               ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT      ((MPI_Datatype)0x4c000204)
#define MPI_INT                 ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED            ((MPI_Datatype)0x4c000406)
#define MPI_LONG                ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG       ((MPI_Datatype)0x4c000808)
#define MPI_LONG_LONG_INT       ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG           MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG  ((MPI_Datatype)0x4c000819)
#define MPI_FLOAT               ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE              ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE         ((MPI_Datatype)0x4c00100c)

/* Untyped data and the deprecated bound markers */
#define MPI_BYTE                ((MPI_Datatype)0x4c00010d)
#define MPI_PACKED              ((MPI_Datatype)0x4c00010f)
#define MPI_LB                  ((MPI_Datatype)0x4c000010)
#define MPI_UB                  ((MPI_Datatype)0x4c000011)

/* Value/index pairs for MPI_MINLOC and MPI_MAXLOC; each is laid out as
 * struct { <value type> value; int index; } */
#define MPI_FLOAT_INT           ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT          ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT            ((MPI_Datatype)0x8c000002)
#define MPI_SHORT_INT           ((MPI_Datatype)0x8c000003)
#define MPI_LONG_DOUBLE_INT     ((MPI_Datatype)0x8c000004)
#define MPI_2INT                ((MPI_Datatype)0x4c000816)

/* Fortran types */
#define MPI_CHARACTER           ((MPI_Datatype)0x4c00011a)
#define MPI_INTEGER             ((MPI_Datatype)0x4c00041b)
#define MPI_REAL                ((MPI_Datatype)0x4c00041c)
#define MPI_LOGICAL             ((MPI_Datatype)0x4c00041d)
#define MPI_COMPLEX             ((MPI_Datatype)0x4c00081e)
#define MPI_DOUBLE_PRECISION    ((MPI_Datatype)0x4c00081f)
#define MPI_2INTEGER            ((MPI_Datatype)0x4c000820)
#define MPI_2REAL               ((MPI_Datatype)0x4c000821)
#define MPI_DOUBLE_COMPLEX      ((MPI_Datatype)0x4c001022)
#define MPI_2DOUBLE_PRECISION   ((MPI_Datatype)0x4c001023)

/* Fortran size-specific types */
#define MPI_INTEGER1            ((MPI_Datatype)0x4c00012d)
#define MPI_INTEGER2            ((MPI_Datatype)0x4c00022f)
#define MPI_INTEGER4            ((MPI_Datatype)0x4c000430)
#define MPI_INTEGER8            ((MPI_Datatype)0x4c000831)
#define MPI_INTEGER16           ((MPI_Datatype)0x4c001032)
#define MPI_REAL4               ((MPI_Datatype)0x4c000427)
#define MPI_REAL8               ((MPI_Datatype)0x4c000829)
#define MPI_REAL16              ((MPI_Datatype)0x4c00102b)
#define MPI_COMPLEX8            ((MPI_Datatype)0x4c000828)
#define MPI_COMPLEX16           ((MPI_Datatype)0x4c00102a)
#define MPI_COMPLEX32           ((MPI_Datatype)0x4c00202c)

/* C99 fixed-width integers */
#define MPI_INT8_T              ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T             ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T             ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T             ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T             ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T            ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T            ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T            ((MPI_Datatype)0x4c00083e)

/* C99 _Bool and complex types, plus the half-precision extension */
#define MPI_C_BOOL                 ((MPI_Datatype)0x4c00013f)
#define MPI_C_FLOAT_COMPLEX        ((MPI_Datatype)0x4c000840)
#define MPI_C_COMPLEX              MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX       ((MPI_Datatype)0x4c001041)
#define MPI_C_LONG_DOUBLE_COMPLEX  ((MPI_Datatype)0x4c002042)
#define MPIX_C_FLOAT16             ((MPI_Datatype)0x4c000246)
/* bfloat16 (8-bit exponent, 7-bit mantissa): weft's handle value; reductions accumulate in
 * float on the GPU and round after each pairwise step on the host. */
#define MPIX_BFLOAT16              ((MPI_Datatype)0x4c00024f)

/* The MPI integer typedefs */
#define MPI_AINT                ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET              ((MPI_Datatype)0x4c000844)
#define MPI_COUNT               ((MPI_Datatype)0x4c000845)

/* C++ types */
#define MPI_CXX_BOOL                 ((MPI_Datatype)0x4c000133)
#define MPI_CXX_FLOAT_COMPLEX        ((MPI_Datatype)0x4c000834)
#define MPI_CXX_DOUBLE_COMPLEX       ((MPI_Datatype)0x4c001035)
#define MPI_CXX_LONG_DOUBLE_COMPLEX  ((MPI_Datatype)0x4c002036)

/* Type classes for MPI_Type_match_size */
#define MPI_TYPECLASS_REAL     1
#define MPI_TYPECLASS_INTEGER  2
#define MPI_TYPECLASS_COMPLEX  3

/* Datatype constructors, as reported by MPI_Type_get_envelope */
enum weft_combiner {
    MPI_COMBINER_NAMED            = 1,
    MPI_COMBINER_DUP              = 2,
    MPI_COMBINER_CONTIGUOUS       = 3,
    MPI_COMBINER_VECTOR           = 4,
    MPI_COMBINER_HVECTOR_INTEGER  = 5,
    MPI_COMBINER_HVECTOR          = 6,
    MPI_COMBINER_INDEXED          = 7,
    MPI_COMBINER_HINDEXED_INTEGER = 8,
    MPI_COMBINER_HINDEXED         = 9,
    MPI_COMBINER_INDEXED_BLOCK    = 10,
    MPI_COMBINER_STRUCT_INTEGER   = 11,
    MPI_COMBINER_STRUCT           = 12,
    MPI_COMBINER_SUBARRAY         = 13,
    MPI_COMBINER_DARRAY           = 14,
    MPI_COMBINER_F90_REAL         = 15,
    MPI_COMBINER_F90_COMPLEX      = 16,
    MPI_COMBINER_F90_INTEGER      = 17,
    MPI_COMBINER_RESIZED          = 18,
    MPI_COMBINER_HINDEXED_BLOCK   = 19
};

/* Array layouts for subarray and distributed-array types */
#define MPI_ORDER_C               56
#define MPI_ORDER_FORTRAN         57
#define MPI_DISTRIBUTE_BLOCK      121
#define MPI_DISTRIBUTE_CYCLIC     122
#define MPI_DISTRIBUTE_NONE       123
#define MPI_DISTRIBUTE_DFLT_DARG  (-49767)

/* ======================================================================
 * Predefined communicators, groups, info objects and error handlers
 * ====================================================================== */

#define MPI_COMM_WORLD   ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF    ((MPI_Comm)0x44000001)
#define MPI_GROUP_EMPTY  ((MPI_Group)0x48000000)
#define MPI_INFO_ENV     ((MPI_Info)0x5c000001)

#define MPI_ERRORS_ARE_FATAL  ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN     ((MPI_Errhandler)0x54000001)
#define MPI_ERRORS_ABORT      ((MPI_Errhandler)0x54000003)

/* Results of MPI_Comm_compare / MPI_Group_compare */
#define MPI_IDENT      0
#define MPI_CONGRUENT  1
#define MPI_SIMILAR    2
#define MPI_UNEQUAL    3

/* Split types for MPI_Comm_split_type */
#define MPI_COMM_TYPE_SHARED         1
#define MPI_COMM_TYPE_HW_GUIDED      2
#define MPI_COMM_TYPE_HW_UNGUIDED    3
#define MPIX_COMM_TYPE_NEIGHBORHOOD  4

/* Topology kinds, as reported by MPI_Topo_test */
enum weft_topo_type {
    MPI_GRAPH      = 1,
    MPI_CART       = 2,
    MPI_DIST_GRAPH = 3
};

/* Neighbour-weight sentinels for distributed graphs (defined by the
 * library; compared by address, never dereferenced) */
extern int * const MPI_UNWEIGHTED;
extern int * const MPI_WEIGHTS_EMPTY;

/* ======================================================================
 * Reduction operations
 * ====================================================================== */

#define MPI_MAX      ((MPI_Op)0x58000001)
#define MPI_MIN      ((MPI_Op)0x58000002)
#define MPI_SUM      ((MPI_Op)0x58000003)
#define MPI_PROD     ((MPI_Op)0x58000004)
#define MPI_LAND     ((MPI_Op)0x58000005)
#define MPI_BAND     ((MPI_Op)0x58000006)
#define MPI_LOR      ((MPI_Op)0x58000007)
#define MPI_BOR      ((MPI_Op)0x58000008)
#define MPI_LXOR     ((MPI_Op)0x58000009)
#define MPI_BXOR     ((MPI_Op)0x5800000a)
#define MPI_MINLOC   ((MPI_Op)0x5800000b)
#define MPI_MAXLOC   ((MPI_Op)0x5800000c)
#define MPI_REPLACE  ((MPI_Op)0x5800000d)
#define MPI_NO_OP    ((MPI_Op)0x5800000e)

/* ======================================================================
 * Attribute keys
 * ====================================================================== */

/* Predefined communicator attributes (attached to MPI_COMM_WORLD) */
#define MPI_TAG_UB           0x64400001
#define MPI_HOST             0x64400003
#define MPI_IO               0x64400005
#define MPI_WTIME_IS_GLOBAL  0x64400007
#define MPI_UNIVERSE_SIZE    0x64400009
#define MPI_LASTUSEDCODE     0x6440000b
#define MPI_APPNUM           0x6440000d

/* Predefined window attributes */
#define MPI_WIN_BASE           0x66000001
#define MPI_WIN_SIZE           0x66000003
#define MPI_WIN_DISP_UNIT      0x66000005
#define MPI_WIN_CREATE_FLAVOR  0x66000007
#define MPI_WIN_MODEL          0x66000009

#define MPI_KEYVAL_INVALID  0x24000000

/* ======================================================================
 * One-sided communication
 * ====================================================================== */

/* Values of the MPI_WIN_CREATE_FLAVOR attribute */
enum weft_win_flavor {
    MPI_WIN_FLAVOR_CREATE   = 1,
    MPI_WIN_FLAVOR_ALLOCATE = 2,
    MPI_WIN_FLAVOR_DYNAMIC  = 3,
    MPI_WIN_FLAVOR_SHARED   = 4
};

/* Values of the MPI_WIN_MODEL attribute */
enum weft_win_model {
    MPI_WIN_SEPARATE = 1,
    MPI_WIN_UNIFIED  = 2
};

/* Lock types for MPI_Win_lock */
#define MPI_LOCK_EXCLUSIVE  234
#define MPI_LOCK_SHARED     235

/* Assertions for synchronisation calls */
#define MPI_MODE_NOCHECK    1024
#define MPI_MODE_NOSTORE    2048
#define MPI_MODE_NOPUT      4096
#define MPI_MODE_NOPRECEDE  8192
#define MPI_MODE_NOSUCCEED  16384

/* Files (MPI-IO, declared but not supported yet): access modes, seek origins, the view's
 * displacement at the file pointer. MPICH's values. */
#define MPI_MODE_CREATE             1
#define MPI_MODE_RDONLY             2
#define MPI_MODE_WRONLY             4
#define MPI_MODE_RDWR               8
#define MPI_MODE_DELETE_ON_CLOSE   16
#define MPI_MODE_UNIQUE_OPEN       32
#define MPI_MODE_EXCL              64
#define MPI_MODE_APPEND           128
#define MPI_MODE_SEQUENTIAL       256
#define MPI_SEEK_SET              600
#define MPI_SEEK_CUR              602
#define MPI_SEEK_END              604
#define MPI_DISPLACEMENT_CURRENT  (-54278278)
/* ROMIO's names, which MPICH programs may use: its requests are MPI requests. */
#define MPIO_Request       MPI_Request
#define MPIO_REQUEST_NULL  MPI_REQUEST_NULL
#define MPIO_Wait          MPI_Wait
#define MPIO_Test          MPI_Test
#define PMPIO_Wait         PMPI_Wait
#define PMPIO_Test         PMPI_Test

/* ======================================================================
 * Miscellaneous constants
 * ====================================================================== */

/* Sizes of caller-provided string buffers (including the terminator) */
#define MPI_MAX_PROCESSOR_NAME          128
#define MPI_MAX_LIBRARY_VERSION_STRING  8192
#define MPI_MAX_ERROR_STRING            512
#define MPI_MAX_PORT_NAME               256
#define MPI_MAX_OBJECT_NAME             128
#define MPI_MAX_DATAREP_STRING          128
#define MPI_MAX_STRINGTAG_LEN           256
#define MPI_MAX_PSET_NAME_LEN           256
#define MPI_MAX_INFO_KEY                255
#define MPI_MAX_INFO_VAL                1024

#define MPI_UNDEFINED       (-32766)
#define MPI_BSEND_OVERHEAD  96

/* Wildcard and special ranks and tags */
#define MPI_PROC_NULL   (-1)
#define MPI_ANY_SOURCE  (-2)
#define MPI_ROOT        (-3)
#define MPI_ANY_TAG     (-1)

/* Special buffer addresses */
#define MPI_BOTTOM    ((void *)0)
#define MPI_IN_PLACE  ((void *)-1)
/* MPI 4.1: attached in place of a buffer, buffered sends copy without a bound (MPICH's value) */
#define MPI_BUFFER_AUTOMATIC ((void *)-2)

/* Arguments that may be ignored */
#define MPI_STATUS_IGNORE    ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE  ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE  ((int *)0)
#define MPI_ARGV_NULL        ((char **)0)
#define MPI_ARGVS_NULL       ((char ***)0)

/* A status seen from Fortran as an INTEGER array (1-based indices) */
#define MPI_F_STATUS_SIZE  5
#define MPI_F_SOURCE       2
#define MPI_F_TAG          3
#define MPI_F_ERROR        4

/* Thread support levels */
#define MPI_THREAD_SINGLE      0
#define MPI_THREAD_FUNNELED    1
#define MPI_THREAD_SERIALIZED  2
#define MPI_THREAD_MULTIPLE    3

/* ======================================================================
 * Error classes
 * ====================================================================== */

#define MPI_SUCCESS                    0
#define MPI_ERR_BUFFER                 1
#define MPI_ERR_COUNT                  2
#define MPI_ERR_TYPE                   3
#define MPI_ERR_TAG                    4
#define MPI_ERR_COMM                   5
#define MPI_ERR_RANK                   6
#define MPI_ERR_ROOT                   7
#define MPI_ERR_GROUP                  8
#define MPI_ERR_OP                     9
#define MPI_ERR_TOPOLOGY               10
#define MPI_ERR_DIMS                   11
#define MPI_ERR_ARG                    12
#define MPI_ERR_UNKNOWN                13
#define MPI_ERR_TRUNCATE               14
#define MPI_ERR_OTHER                  15
#define MPI_ERR_INTERN                 16
#define MPI_ERR_IN_STATUS              17
#define MPI_ERR_PENDING                18
#define MPI_ERR_REQUEST                19
#define MPI_ERR_ACCESS                 20
#define MPI_ERR_AMODE                  21
#define MPI_ERR_BAD_FILE               22
#define MPI_ERR_CONVERSION             23
#define MPI_ERR_DUP_DATAREP            24
#define MPI_ERR_FILE_EXISTS            25
#define MPI_ERR_FILE_IN_USE            26
#define MPI_ERR_FILE                   27
#define MPI_ERR_INFO                   28
#define MPI_ERR_INFO_KEY               29
#define MPI_ERR_INFO_VALUE             30
#define MPI_ERR_INFO_NOKEY             31
#define MPI_ERR_IO                     32
#define MPI_ERR_NAME                   33
#define MPI_ERR_NO_MEM                 34
#define MPI_ERR_NOT_SAME               35
#define MPI_ERR_NO_SPACE               36
#define MPI_ERR_NO_SUCH_FILE           37
#define MPI_ERR_PORT                   38
#define MPI_ERR_QUOTA                  39
#define MPI_ERR_READ_ONLY              40
#define MPI_ERR_SERVICE                41
#define MPI_ERR_SPAWN                  42
#define MPI_ERR_UNSUPPORTED_DATAREP    43
#define MPI_ERR_UNSUPPORTED_OPERATION  44
#define MPI_ERR_WIN                    45
#define MPI_ERR_BASE                   46
#define MPI_ERR_LOCKTYPE               47
#define MPI_ERR_KEYVAL                 48
#define MPI_ERR_RMA_CONFLICT           49
#define MPI_ERR_RMA_SYNC               50
#define MPI_ERR_SIZE                   51
#define MPI_ERR_DISP                   52
#define MPI_ERR_ASSERT                 53
/* 54 is unused */
#define MPI_ERR_RMA_RANGE              55
#define MPI_ERR_RMA_ATTACH             56
#define MPI_ERR_RMA_SHARED             57
#define MPI_ERR_RMA_FLAVOR             58

/* Classes returned by the tool information interface */
#define MPI_T_ERR_MEMORY               59
#define MPI_T_ERR_NOT_INITIALIZED      60
#define MPI_T_ERR_CANNOT_INIT          61
#define MPI_T_ERR_INVALID_INDEX        62
#define MPI_T_ERR_INVALID_ITEM         63
#define MPI_T_ERR_INVALID_HANDLE       64
#define MPI_T_ERR_OUT_OF_HANDLES       65
#define MPI_T_ERR_OUT_OF_SESSIONS      66
#define MPI_T_ERR_INVALID_SESSION      67
#define MPI_T_ERR_CVAR_SET_NOT_NOW     68
#define MPI_T_ERR_CVAR_SET_NEVER       69
#define MPI_T_ERR_PVAR_NO_STARTSTOP    70
#define MPI_T_ERR_PVAR_NO_WRITE        71
#define MPI_T_ERR_PVAR_NO_ATOMIC       72
#define MPI_T_ERR_INVALID_NAME         73
#define MPI_T_ERR_INVALID              74

/* MPI-4 additions */
#define MPI_ERR_SESSION                75
#define MPI_ERR_PROC_ABORTED           76
#define MPI_ERR_VALUE_TOO_LARGE        77
#define MPI_T_ERR_NOT_SUPPORTED        78

/* Upper bound for the codes of predefined classes */
#define MPI_ERR_LASTCODE               0x3fffffff

/* Extension classes (fault tolerance and resource exhaustion) */
#define MPIX_ERR_PROC_FAILED           101
#define MPIX_ERR_PROC_FAILED_PENDING   102
#define MPIX_ERR_REVOKED               103
#define MPIX_ERR_EAGAIN                104
#define MPIX_ERR_NOREQ                 105
#define MPIX_ERR_TIMEOUT               107

/* ======================================================================
 * Fortran handle conversion
 *
 * A Fortran handle is the same integer as the C handle.
 * ====================================================================== */

#define MPI_Comm_c2f(comm)         ((MPI_Fint)(comm))
#define MPI_Comm_f2c(comm)         ((MPI_Comm)(comm))
#define MPI_Type_c2f(datatype)     ((MPI_Fint)(datatype))
#define MPI_Type_f2c(datatype)     ((MPI_Datatype)(datatype))
#define MPI_Group_c2f(group)       ((MPI_Fint)(group))
#define MPI_Group_f2c(group)       ((MPI_Group)(group))
#define MPI_Info_c2f(info)         ((MPI_Fint)(info))
#define MPI_Info_f2c(info)         ((MPI_Info)(info))
#define MPI_Request_c2f(request)   ((MPI_Fint)(request))
#define MPI_Request_f2c(request)   ((MPI_Request)(request))
#define MPI_Op_c2f(op)             ((MPI_Fint)(op))
#define MPI_Op_f2c(op)             ((MPI_Op)(op))
#define MPI_Errhandler_c2f(eh)     ((MPI_Fint)(eh))
#define MPI_Errhandler_f2c(eh)     ((MPI_Errhandler)(eh))
#define MPI_Win_c2f(win)           ((MPI_Fint)(win))
#define MPI_Win_f2c(win)           ((MPI_Win)(win))
#define MPI_Message_c2f(message)   ((MPI_Fint)(message))
#define MPI_Message_f2c(message)   ((MPI_Message)(message))
#define MPI_Session_c2f(session)   ((MPI_Fint)(session))
#define MPI_Session_f2c(session)   ((MPI_Session)(session))

#define PMPI_Comm_c2f(comm)        MPI_Comm_c2f(comm)
#define PMPI_Comm_f2c(comm)        MPI_Comm_f2c(comm)
#define PMPI_Type_c2f(datatype)    MPI_Type_c2f(datatype)
#define PMPI_Type_f2c(datatype)    MPI_Type_f2c(datatype)
#define PMPI_Group_c2f(group)      MPI_Group_c2f(group)
#define PMPI_Group_f2c(group)      MPI_Group_f2c(group)
#define PMPI_Info_c2f(info)        MPI_Info_c2f(info)
#define PMPI_Info_f2c(info)        MPI_Info_f2c(info)
#define PMPI_Request_c2f(request)  MPI_Request_c2f(request)
#define PMPI_Request_f2c(request)  MPI_Request_f2c(request)
#define PMPI_Op_c2f(op)            MPI_Op_c2f(op)
#define PMPI_Op_f2c(op)            MPI_Op_f2c(op)
#define PMPI_Errhandler_c2f(eh)    MPI_Errhandler_c2f(eh)
#define PMPI_Errhandler_f2c(eh)    MPI_Errhandler_f2c(eh)
#define PMPI_Win_c2f(win)          MPI_Win_c2f(win)
#define PMPI_Win_f2c(win)          MPI_Win_f2c(win)
#define PMPI_Message_c2f(message)  MPI_Message_c2f(message)
#define PMPI_Message_f2c(message)  MPI_Message_f2c(message)
#define PMPI_Session_c2f(session)  MPI_Session_c2f(session)
#define PMPI_Session_f2c(session)  MPI_Session_f2c(session)

/* ======================================================================
 * Callback function types
 * ====================================================================== */

/* User-defined reduction operations */
typedef void (MPI_User_function)(void *invec, void *inoutvec, int *len,
                                 MPI_Datatype *datatype);
typedef void (MPI_User_function_c)(void *invec, void *inoutvec,
                                   MPI_Count *len, MPI_Datatype *datatype);

/* Attribute copy and delete callbacks */
typedef int (MPI_Copy_function)(MPI_Comm oldcomm, int keyval,
                                void *extra_state, void *attribute_val_in,
                                void *attribute_val_out, int *flag);
typedef int (MPI_Delete_function)(MPI_Comm comm, int keyval,
                                  void *attribute_val, void *extra_state);
/* MPI_Comm_, MPI_Type_ and MPI_Win_copy_attr_function and _delete_attr_function:
 * one pair for each kind of object that carries attributes. */
#define WEFT_ATTR_FUNCTIONS(kind, handle)                                    \
  typedef int (MPI_##kind##_copy_attr_function)(                             \
      handle oldobj, int keyval, void *extra_state, void *attribute_val_in,  \
      void *attribute_val_out, int *flag);                                   \
  typedef int (MPI_##kind##_delete_attr_function)(                           \
      handle obj, int keyval, void *attribute_val, void *extra_state);
WEFT_ATTR_FUNCTIONS(Comm, MPI_Comm)
WEFT_ATTR_FUNCTIONS(Type, MPI_Datatype)
WEFT_ATTR_FUNCTIONS(Win, MPI_Win)
#undef WEFT_ATTR_FUNCTIONS

/* Error handler callbacks (the variadic tail is implementation-defined) */
typedef void (MPI_Comm_errhandler_function)(MPI_Comm *comm, int *errcode,
                                            ...);
typedef void (MPI_Win_errhandler_function)(MPI_Win *win, int *errcode, ...);
typedef void (MPI_File_errhandler_function)(MPI_File *file, int *errcode,
                                            ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn; /* MPI-2.0 name */
typedef void (MPI_Session_errhandler_function)(MPI_Session *session,
                                               int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn; /* MPI-2.0 name */
typedef void (MPI_Handler_function)(MPI_Comm *comm, int *errcode, ...);

/* Generalized request callbacks */
typedef int (MPI_Grequest_query_function)(void *extra_state,
                                          MPI_Status *status);
typedef int (MPI_Grequest_free_function)(void *extra_state);
typedef int (MPI_Grequest_cancel_function)(void *extra_state, int complete);

/* User-defined data representations for file I/O */
typedef int (MPI_Datarep_conversion_function)(void *userbuf,
                                              MPI_Datatype datatype,
                                              int count, void *filebuf,
                                              MPI_Offset position,
                                              void *extra_state);
typedef int (MPI_Datarep_extent_function)(MPI_Datatype datatype,
                                          MPI_Aint *extent,
                                          void *extra_state);
#define MPI_CONVERSION_FN_NULL  ((MPI_Datarep_conversion_function *)0)
typedef int (MPI_Datarep_conversion_function_c)(void *userbuf,
                                                MPI_Datatype datatype,
                                                MPI_Count count, void *filebuf,
                                                MPI_Offset position,
                                                void *extra_state);
#define MPI_CONVERSION_FN_NULL_C  ((MPI_Datarep_conversion_function_c *)0)

/* ======================================================================
 * The tool information interface (MPI_T)
 *
 * Handles are pointers to opaque structures and the constants have the
 * values MPICH gives them, so that tools built against MPICH run unchanged.
 * ====================================================================== */

struct MPIR_T_enum_s;
struct MPIR_T_cvar_handle_s;
struct MPIR_T_pvar_handle_s;
struct MPIR_T_pvar_session_s;
struct MPIR_T_event_registration_s;
struct MPIR_T_event_instance_s;
typedef struct MPIR_T_enum_s *MPI_T_enum;
typedef struct MPIR_T_cvar_handle_s *MPI_T_cvar_handle;
typedef struct MPIR_T_pvar_handle_s *MPI_T_pvar_handle;
typedef struct MPIR_T_pvar_session_s *MPI_T_pvar_session;
typedef struct MPIR_T_event_registration_s *MPI_T_event_registration;
typedef struct MPIR_T_event_instance_s *MPI_T_event_instance;

/* A handle no allocation returns: "every handle of the session". */
extern struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES;

#define MPI_T_ENUM_NULL          ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL   ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL   ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL  ((MPI_T_pvar_session)0)

/* Verbosity levels, increasing in this order */
#define MPI_T_VERBOSITY_USER_BASIC     221
#define MPI_T_VERBOSITY_USER_DETAIL    222
#define MPI_T_VERBOSITY_USER_ALL       223
#define MPI_T_VERBOSITY_TUNER_BASIC    224
#define MPI_T_VERBOSITY_TUNER_DETAIL   225
#define MPI_T_VERBOSITY_TUNER_ALL      226
#define MPI_T_VERBOSITY_MPIDEV_BASIC   227
#define MPI_T_VERBOSITY_MPIDEV_DETAIL  228
#define MPI_T_VERBOSITY_MPIDEV_ALL     229

/* What a variable is bound to */
#define MPI_T_BIND_NO_OBJECT       9700
#define MPI_T_BIND_MPI_COMM        9701
#define MPI_T_BIND_MPI_DATATYPE    9702
#define MPI_T_BIND_MPI_ERRHANDLER  9703
#define MPI_T_BIND_MPI_FILE        9704
#define MPI_T_BIND_MPI_GROUP       9705
#define MPI_T_BIND_MPI_OP          9706
#define MPI_T_BIND_MPI_REQUEST     9707
#define MPI_T_BIND_MPI_WIN         9708
#define MPI_T_BIND_MPI_MESSAGE     9709
#define MPI_T_BIND_MPI_INFO        9710
#define MPI_T_BIND_MPI_SESSION     9711

/* Where a control variable may be changed */
#define MPI_T_SCOPE_CONSTANT  60438
#define MPI_T_SCOPE_READONLY  60439
#define MPI_T_SCOPE_LOCAL     60440
#define MPI_T_SCOPE_GROUP     60441
#define MPI_T_SCOPE_GROUP_EQ  60442
#define MPI_T_SCOPE_ALL       60443
#define MPI_T_SCOPE_ALL_EQ    60444

/* Performance variable classes */
#define MPI_T_PVAR_CLASS_STATE          240
#define MPI_T_PVAR_CLASS_LEVEL          241
#define MPI_T_PVAR_CLASS_SIZE           242
#define MPI_T_PVAR_CLASS_PERCENTAGE     243
#define MPI_T_PVAR_CLASS_HIGHWATERMARK  244
#define MPI_T_PVAR_CLASS_LOWWATERMARK   245
#define MPI_T_PVAR_CLASS_COUNTER        246
#define MPI_T_PVAR_CLASS_AGGREGATE      247
#define MPI_T_PVAR_CLASS_TIMER          248
#define MPI_T_PVAR_CLASS_GENERIC        249

/* Events (MPI 4.0): weft defines no event sources, so these only type the prototypes. */
typedef enum MPI_T_cb_safety {
  MPI_T_CB_REQUIRE_NONE = 0,
  MPI_T_CB_REQUIRE_MPI_RESTRICTED,
  MPI_T_CB_REQUIRE_THREAD_SAFE,
  MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE
} MPI_T_cb_safety;
typedef enum MPI_T_source_order { MPI_T_SOURCE_ORDERED = 0, MPI_T_SOURCE_UNORDERED } MPI_T_source_order;
typedef void (MPI_T_event_cb_function)(MPI_T_event_instance event_instance,
                                       MPI_T_event_registration event_registration,
                                       MPI_T_cb_safety cb_safety, void *user_data);
typedef void (MPI_T_event_free_cb_function)(MPI_T_event_registration event_registration,
                                            MPI_T_cb_safety cb_safety, void *user_data);
typedef void (MPI_T_event_dropped_cb_function)(MPI_Count count,
                                               MPI_T_event_registration event_registration,
                                               int source_index, MPI_T_cb_safety cb_safety,
                                               void *user_data);

/* ======================================================================
 * Predefined attribute callbacks
 *
 * The "null" callbacks are null pointers.  The "dup" callbacks all refer
 * to MPIR_Dup_fn, the symbol MPICH-built binaries already reference.
 * ====================================================================== */

int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state,
                void *attribute_val_in, void *attribute_val_out, int *flag);

#define MPI_NULL_COPY_FN         ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN       ((MPI_Delete_function *)0)
#define MPI_DUP_FN               MPIR_Dup_fn

#define MPI_COMM_NULL_COPY_FN    ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN  ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN          ((MPI_Comm_copy_attr_function *)MPIR_Dup_fn)

#define MPI_TYPE_NULL_COPY_FN    ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN  ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN          ((MPI_Type_copy_attr_function *)MPIR_Dup_fn)

#define MPI_WIN_NULL_COPY_FN     ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN   ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN           ((MPI_Win_copy_attr_function *)MPIR_Dup_fn)

/* ======================================================================
 * MPI routines
 *
 * Every routine has an MPI_ entry point and a PMPI_ profiling entry point
 * with the same signature; both are declared from the one list in
 * weft/mpi_functions.h, grouped there by topic.
 * ====================================================================== */

#define WEFT_MPI_FUNCTION(ret, name, params) \
  ret MPI_##name params;                     \
  ret PMPI_##name params;
#define WEFT_MPIX_FUNCTION(ret, name, params) \
  ret MPIX_##name params;                     \
  ret PMPIX_##name params;
#define WEFT_MPIX_FUNCTION_NO_PMPI(ret, name, params) ret MPIX_##name params;
#include "weft/mpi_functions.h"
#undef WEFT_MPI_FUNCTION
#undef WEFT_MPIX_FUNCTION
#undef WEFT_MPIX_FUNCTION_NO_PMPI

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#if defined(__cplusplus)
}
#endif

#endif /* MPI_INCLUDED */
