// The variables of the MPI tool information interface (MPI_T). Control variables are the settings
// of the config registry (runtime/config_vars.def), in its order; performance variables are
// counters and levels kept by the transport, the collective selector and the CUDA IPC cache;
// categories group both by layer. The tables are built once, on first use, and never change
// (MPI_T_category_changed always reports 0). mpi/tool.cpp holds the C bindings.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/config.h"

namespace weft::mpi::tool {

// The values of a choice setting: item k has value k and the choice's name.
struct Enumeration {
  std::string name;
  std::vector<std::string> items;
};

struct ControlVar {
  const ConfigVar* setting;
  int category;
  int verbosity;                    // MPI_T_VERBOSITY_*
  int datatype;                     // MPI_Datatype
  int count;                        // elements of datatype that a read fills
  const Enumeration* enumeration;   // choice settings only
  int scope;                        // MPI_T_SCOPE_*: READONLY unless a write takes effect at run time
};

struct PerfVar {
  std::string name, desc;
  int category;
  int verbosity;
  int var_class;  // MPI_T_PVAR_CLASS_*
  // Levels are read-only; a counter may be reset or written, which moves the origin of that
  // handle's reads only (other handles and sessions keep counting from theirs).
  bool readonly;
  uint64_t (*read)(size_t arg);
  size_t arg;
};

struct Category {
  const char* name;
  const char* desc;
  std::vector<int> cvars, pvars;
};

// Every performance variable is an unsigned long long, continuous (counting from the start of
// the process, never started or stopped) and not atomic.
std::span<const ControlVar> control_vars();
std::span<const PerfVar> perf_vars();
std::span<const Category> categories();
bool is_enumeration(const void* p);

// Length of the character buffer a string control variable's read fills (NUL included).
constexpr int kStringCount = 1024;

// Fills buf with the variable's current value: count elements of its datatype.
void read_control(const ControlVar& v, void* buf);
// MPI_SUCCESS, or the MPI_T error class that refuses the write (the cause is logged).
int write_control(const ControlVar& v, const void* buf);

}  // namespace weft::mpi::tool
