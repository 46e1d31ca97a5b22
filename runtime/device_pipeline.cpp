#include "device_pipeline.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace weft {

// ------------------------------------------------------------------ PackPipeline

void PackPipeline::reset(ChunkCopier* copier, void* chunk0, void* chunk1, size_t chunk_bytes) {
  *this = PackPipeline{};
  copier_ = copier;
  chunk_[0] = static_cast<char*>(chunk0);
  chunk_[1] = static_cast<char*>(chunk1);
  chunk_bytes_ = chunk_bytes;
}

void PackPipeline::start(const void* device_src, size_t bytes) {
  src_ = static_cast<const char*>(device_src);
  bytes_ = bytes;
  chunks_ = bytes ? int64_t((bytes + chunk_bytes_ - 1) / chunk_bytes_) : 0;
  held_[0] = held_[1] = -1;
  ready_[0] = ready_[1] = false;
  error_ = Status::ok;
  counters_ = {};
  if (chunks_ > 0) prefetch(0, 0);
  if (chunks_ > 1) prefetch(1, 1);
}

void PackPipeline::fail(Status s) {
  if (error_ == Status::ok) error_ = s;
}

size_t PackPipeline::chunk_size(int64_t chunk) const {
  return std::min(chunk_bytes_, bytes_ - size_t(chunk) * chunk_bytes_);
}

void PackPipeline::prefetch(int slot, int64_t chunk) {
  if (error_ != Status::ok) return;
  Status s = copier_->start_to_host(slot, chunk_[slot], src_ + size_t(chunk) * chunk_bytes_, chunk_size(chunk));
  if (s != Status::ok) return fail(s);
  held_[slot] = chunk;
  ready_[slot] = false;
  ++counters_.chunk_copies;
}

// Chunk `chunk` is being read: the one after it should be on its way into the other pinned
// chunk, provided that one holds an earlier chunk (already sent) or none.
void PackPipeline::advance(int64_t chunk) {
  const int64_t next = chunk + 1;
  if (next >= chunks_ || held_[0] == next || held_[1] == next) return;
  const int slot = held_[0] == chunk ? 1 : held_[1] == chunk ? 0 : (held_[0] <= held_[1] ? 0 : 1);
  if (held_[slot] < chunk) prefetch(slot, next);
}

size_t PackPipeline::pack(size_t offset, void* dest, size_t max_length) {
  if (offset >= bytes_) return 0;
  const size_t len = std::min(max_length, bytes_ - offset);
  char* out = static_cast<char*>(dest);
  for (size_t done = 0; done < len && error_ == Status::ok;) {
    const size_t at = offset + done;
    const int64_t chunk = int64_t(at / chunk_bytes_);
    const size_t in_chunk = at - size_t(chunk) * chunk_bytes_;
    const size_t piece = std::min(len - done, chunk_size(chunk) - in_chunk);
    const int slot = held_[0] == chunk ? 0 : held_[1] == chunk ? 1 : -1;
    if (slot >= 0) {
      if (!ready_[slot]) {
        ++counters_.waits;
        if (Status s = copier_->wait(slot); s != Status::ok) {
          fail(s);
          return len;
        }
        ready_[slot] = true;
      }
      memcpy(out + done, chunk_[slot] + in_chunk, piece);
    } else {  // out of sequence, or asked for again: straight from the device
      ++counters_.direct_copies;
      if (Status s = copier_->copy_now(out + done, src_ + at, piece); s != Status::ok) {
        fail(s);
        return len;
      }
    }
    advance(chunk);
    done += piece;
  }
  return len;
}

Status PackPipeline::finish() {
  for (int slot = 0; slot < 2; ++slot) {
    if (held_[slot] < 0 || ready_[slot]) continue;
    ++counters_.waits;
    if (Status s = copier_->wait(slot); s != Status::ok) fail(s);
    ready_[slot] = true;
  }
  return error_;
}

// ------------------------------------------------------------------ UnpackPipeline

void UnpackPipeline::reset(ChunkCopier* copier, void* chunk0, void* chunk1, size_t chunk_bytes) {
  *this = UnpackPipeline{};
  copier_ = copier;
  chunk_[0] = static_cast<char*>(chunk0);
  chunk_[1] = static_cast<char*>(chunk1);
  chunk_bytes_ = chunk_bytes;
}

void UnpackPipeline::start(void* device_dst, size_t capacity) {
  dst_ = static_cast<char*>(device_dst);
  capacity_ = capacity;
  cur_ = 0;
  run_start_ = run_len_ = 0;
  ahead_.clear();
  finished_ = false;
  error_ = Status::ok;
  counters_ = {};
}

void UnpackPipeline::fail(Status s) {
  if (error_ == Status::ok) error_ = s;
}

// Starts copying the gathered bytes to the device and moves on to the other pinned chunk.
void UnpackPipeline::flush() {
  if (run_len_ == 0 || error_ != Status::ok) return;
  if (Status s = copier_->start_to_device(cur_, dst_ + run_start_, chunk_[cur_], run_len_); s != Status::ok)
    return fail(s);
  busy_[cur_] = true;
  ++counters_.chunk_copies;
  cur_ ^= 1;
  run_start_ += run_len_;
  run_len_ = 0;
}

void UnpackPipeline::unpack(size_t offset, const void* src, size_t length) {
  if (finished_ || error_ != Status::ok || length == 0) return;
  if (offset > capacity_ || length > capacity_ - offset) {
    set_error_detail("a fragment of " + std::to_string(length) + " bytes at offset " +
                     std::to_string(offset) + " does not fit the receive buffer of " +
                     std::to_string(capacity_) + " bytes");
    return fail(Status::truncated);
  }
  const char* in = static_cast<const char*>(src);
  const size_t expected = run_start_ + run_len_;
  if (offset != expected) {  // out of sequence: at once, straight to the device
    ++counters_.direct_copies;
    if (Status s = copier_->copy_now(dst_ + offset, in, length); s != Status::ok) return fail(s);
    if (offset + length > expected) note_ahead(std::max(offset, expected), offset + length);
    skip_ahead();
    return;
  }
  while (length > 0 && error_ == Status::ok) {
    if (run_len_ == 0 && busy_[cur_]) {  // its previous copy to the device must be done
      ++counters_.waits;
      if (Status s = copier_->wait(cur_); s != Status::ok) return fail(s);
      busy_[cur_] = false;
    }
    const size_t piece = std::min(length, chunk_bytes_ - run_len_);
    memcpy(chunk_[cur_] + run_len_, in, piece);
    run_len_ += piece;
    in += piece;
    length -= piece;
    if (run_len_ == chunk_bytes_ || run_start_ + run_len_ == capacity_) flush();
  }
  skip_ahead();
}

// Remembers [begin, end) as on the device already (merged with its neighbours).
void UnpackPipeline::note_ahead(size_t begin, size_t end) {
  auto next = ahead_.lower_bound(begin);
  while (next != ahead_.end() && next->first <= end) {
    end = std::max(end, next->second);
    next = ahead_.erase(next);
  }
  if (next != ahead_.begin()) {
    auto prev = std::prev(next);
    if (prev->second >= begin) {
      begin = prev->first;
      end = std::max(end, prev->second);
      ahead_.erase(prev);
    }
  }
  ahead_[begin] = end;
}

// Where the gathered run reaches bytes copied out of sequence, it sends what it has on its way
// and resumes after them.
void UnpackPipeline::skip_ahead() {
  while (!ahead_.empty() && error_ == Status::ok) {
    const size_t expected = run_start_ + run_len_;
    auto first = ahead_.begin();
    if (first->second <= expected) {  // behind the run already
      ahead_.erase(first);
      continue;
    }
    if (first->first > expected) return;
    const size_t resume = first->second;
    ahead_.erase(first);
    flush();
    run_start_ = resume;
    run_len_ = 0;
  }
}

Status UnpackPipeline::finish() {
  if (finished_) return error_;
  finished_ = true;
  flush();
  for (int slot = 0; slot < 2; ++slot) {
    if (!busy_[slot]) continue;
    ++counters_.waits;
    if (Status s = copier_->wait(slot); s != Status::ok) fail(s);
    busy_[slot] = false;
  }
  return error_;
}

}  // namespace weft
