// What a process knows of its own start without the runtime: the keys of MPI_Info_create_env
// (MPI-4.0 §11.4.1) that do not depend on initialisation, so that the object is the same
// before MPI_Init, in between and after MPI_Finalize.
#pragma once
#include "runtime/info_set.h"

namespace weft {

// "command" (argv[0]) and "argv" (the other arguments, separated by spaces) when argc > 0 and
// argv is given; "host" (the node's name), "arch" (the machine, as uname reports it) and
// "wdir" (the working directory) where the system answers.
InfoSet launch_environment(int argc, const char* const* argv);

}  // namespace weft
