// Reductions on GPU device memory: inout[i] = in[i] op inout[i], as a kernel on a stream
// (enqueued; the call returns before the kernel runs). One kernel per (type, op) pair of
// op_gpu.cu's lists: sum, prod, min, max, band, bor, bxor, land, lor, lxor on 8- to 64-bit
// integers, half, bfloat16, float and double where MPI defines the op on the type.
#pragma once
#include <cstddef>
#include <cstdint>

#include "op.h"

namespace weft {

// Whether reduce_device handles (op, type).
bool reduce_device_supports(ReduceOp op, BasicType type);

// stream: a cudaStream_t (nullptr: the default stream). Status::invalid_op for a pair the
// lists do not hold, Status::not_supported in a build without CUDA, Status::internal when the
// launch fails (logged).
Status reduce_device(ReduceOp op, BasicType type, const void* in, void* inout, size_t count, void* stream);

// Several inputs at once (the GPU collectives: every rank's slot of a piece):
// out[i] = in[0][i] op in[1][i] op ... op in[n-1][i], folded left to right (rank order), so
// every rank that reduces the same inputs gets bitwise the same result. half and bfloat16
// accumulate in float and are rounded once, at the store (as NCCL does); the pairwise
// reduce_device and the host loop round after each step. `out` may be one of the inputs
// (each element is read before it is written). Same statuses as reduce_device.
constexpr int kReduceMaxInputs = 32;
struct DeviceInputs {
  const void* in[kReduceMaxInputs] = {};
  int count = 0;
};
Status reduce_device_multi(ReduceOp op, BasicType type, const DeviceInputs& inputs, void* out, size_t count,
                           void* stream);

// The same fold, stored into every output (gpu_direct: rank j's share of the result, written
// straight into every rank's receive buffer). An output may be one of the inputs.
struct DeviceOutputs {
  void* out[kReduceMaxInputs] = {};
  int count = 0;
};
Status reduce_device_multi_out(ReduceOp op, BasicType type, const DeviceInputs& inputs, const DeviceOutputs& outputs,
                               size_t count, void* stream);

// A whole one-shot allreduce in one launch, where launch latency dominates: copy `own` into
// inputs.in[me], publish the next epoch after a system-wide fence, wait until every other rank
// has reached it, then out = the fold of every input (as reduce_device_multi). Flags are
// monotonic epoch words in memory every rank maps. One block (up to kFusedMaxBytes) meets
// through flags.at; a grid of `blocks` blocks splits the vector into one chunk per block, and
// block b meets its peers' block b alone through word b of flags.lane, so no block waits for
// another of its own rank (the middle sizes, up to WEFT_GPU_FUSED's size). Every rank must
// launch the same number of blocks.
// One block from 8 KiB was slower than three launches between two H200s over NVLink (32 KiB:
// 25.2 against 11.6 us): one block's reads of peer memory are latency-bound.
constexpr size_t kFusedMaxBytes = 4 * 1024;
constexpr int kFusedOneShotMaxBlocks = 32;
struct DeviceFlags {
  unsigned long long* at[kReduceMaxInputs] = {};
  unsigned long long* lane[kReduceMaxInputs] = {};  // rank q's kFusedOneShotMaxBlocks block words
  int me = 0;
  int blocks = 1;
  const unsigned int* stop = nullptr;  // non-zero once the host gives up: the wait ends
};
// Loads every kernel of the multi-input and fused reductions now. With CUDA's lazy loading (the
// default) a kernel's first launch loads it, which may wait for the device: a stream-ordered
// call would then stall behind the work queued before it. Idempotent.
Status reduce_device_preload();

// scatter_stride > 0: a reduce-scatter piece in the same launch (gpu_reduce_scatter_block):
// `own` holds inputs.count sub-blocks of `count` elements, scatter_stride elements apart; they
// are copied into this rank's input back to back, and out = the fold of sub-block flags.me of
// every input. Block b copies and folds chunk b of every sub-block, so its own meeting covers
// what it reads.
Status reduce_device_fused_one_shot(ReduceOp op, BasicType type, const void* own, const DeviceInputs& inputs,
                                   const DeviceFlags& flags, void* out, size_t count, void* stream,
                                   size_t scatter_stride = 0);

// Pieces of an allreduce in one launch of a multi-block kernel that meets its peers twice per
// piece on the device (coll/gpu's fused one-shot and fused direct). Each rank's input and
// output of a piece lie either in a registered buffer, which peers find through `table`, or in
// the rank's workspace slot of the piece; a rank publishes where (FusedPlace) in its own memory
// before the piece's first meeting. Then, one-shot: every rank folds every input into its own
// output; direct: rank r folds share r of every input into share r of every output. A second
// meeting ends the piece (no peer reads or writes this rank's buffers any more); a rank whose
// result went to its slot copies it out. A peer's place is checked against this rank's view of
// the peer's registrations; one out of bounds moves no data and sets *error.
// The call's first piece checks whether every rank's input and output of the whole call lie in
// registrations (the same answer on every rank: the same published places and registrations);
// if so it folds the whole call, and the later pieces, seeing *skip, end at once (the slots,
// which the pieces exist for, are not used).
// scatter (reduce_scatter_block, never with direct): a rank's input is `ranks` blocks of
// call_count elements, and a piece is the same elements of every block; through the slot, the
// piece's sub-blocks lie back to back. Rank r folds sub-block r of every input into its own
// output; the whole-call check covers every rank's whole input.
struct FusedPlace {
  int32_t in_reg = -1, out_reg = -1;  // registration id, or -1: the rank's slot
  uint64_t in_off = 0, out_off = 0;   // bytes into the registration
};
struct FusedRegistration {
  const char* base = nullptr;  // mapped here
  uint64_t bytes = 0;          // 0: no registration
};
constexpr int kFusedMaxRegistrations = 64;
struct FusedPiece {
  const void* own_in = nullptr;  // this rank's input and result at the launch's first piece
  void* own_out = nullptr;
  FusedPlace mine;  // the launch's first piece's place; a later piece's offsets run on
  char* slot[kReduceMaxInputs] = {};       // every rank's slot of the launch's first piece, mapped here
  char* slot_next[kReduceMaxInputs] = {};  // and of the other parity (its second piece)
  unsigned long long* flag[kReduceMaxInputs] = {};   // every rank's epoch word (two epochs a piece)
  FusedPlace* place[kReduceMaxInputs] = {};          // every rank's published place
  unsigned int* arrive = nullptr;  // this rank's block counter: zero between launches
  const FusedRegistration* table = nullptr;  // [rank * kFusedMaxRegistrations + id], device memory
  const unsigned int* stop = nullptr;        // non-zero once the host gives up: waits end
  unsigned int* error = nullptr;             // host memory mapped for the device
  int me = 0, ranks = 0;
  size_t count = 0;  // elements of the launch
  size_t per = 0;    // elements of a piece (0: one piece)
  bool direct = false;
  bool scatter = false;
  // Split (a launch of one piece only): the meetings run as one-block kernels around a fold of
  // full grid size (a large first piece, which may fold the whole call: the one kernel's grid,
  // kept small enough to sit beside the peers', folds at 86-90% of the split form's rate).
  bool split = false;
  size_t call_count = 0;               // elements of the whole call
  uint64_t piece = 0, last = 0;        // the launch's first piece's number and the call's last one's
  bool first = true;                   // the launch begins with the call's first piece
  unsigned long long* skip = nullptr;  // this rank's word: the last piece a whole-call fold covered
};
Status reduce_device_fused_allreduce(ReduceOp op, BasicType type, const FusedPiece& piece, void* stream);

}  // namespace weft
