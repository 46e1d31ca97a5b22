// A window handle's object as the bindings keep it (win.cpp owns the table): the rma window,
// its own communicator (errors of the window are raised on it, so its error handler is the
// window's), its name, info, attributes and the values of the predefined attributes.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "rma/mpi_window.h"
#include "state.h"

namespace weft::mpi {

struct WinEntry {
  MPI_Comm comm = MPI_COMM_NULL;  // the window's own duplicate of the creating communicator
  std::unique_ptr<rma::MpiWindow> win;
  std::string name;
  InfoEntries info;     // the hints: those given at creation or by MPI_Win_set_info
  AttributeSet attrs;   // the user's attributes
  // The predefined attributes, whose addresses MPI_Win_get_attr hands out.
  MPI_Aint size = 0;
  int disp_unit = 1, flavor = MPI_WIN_FLAVOR_CREATE, model = MPI_WIN_UNIFIED;
  // The profiler's open RMA_EPOCH events (runtime/profiler.h): the access epoch (fence,
  // lock_all, start), the exposure epoch (post), and one per locked target.
  void* access_epoch = nullptr;
  void* exposure_epoch = nullptr;
  std::map<int, void*> lock_epochs;
};

// nullptr for an invalid or freed handle.
WinEntry* lookup_win(MPI_Win w);
// Every binding of a window starts here (the initialisation check included); MPI_ERR_WIN is
// raised for an invalid handle.
int check_win(const char* fn, MPI_Win w, WinEntry** out);
// The window whose communicator comm is (its error handler is the window's), or MPI_WIN_NULL.
MPI_Win window_of_comm(MPI_Comm comm);
// MPI_Win_free (attr.cpp): the delete callbacks of the window's attributes, the last set first.
int delete_window_attributes(MPI_Win win, WinEntry& e);

}  // namespace weft::mpi
