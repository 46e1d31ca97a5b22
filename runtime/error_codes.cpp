// Error codes that carry a message (error_codes.h).
#include "runtime/error_codes.h"

#include <algorithm>
#include <cstdint>

namespace weft {

int ErrorCodes::make(int error_class, const std::string& message) {
  std::lock_guard lock(mutex_);
  uint32_t slot = ring_next_;
  ring_next_ = (ring_next_ + 1) % kRingSize;
  ring_[slot] = Entry{error_class, message};
  return int(((kRingBase + slot) << kClassBits) | (uint32_t(error_class) & 0xff));
}

bool ErrorCodes::is_class(int c) {
  std::lock_guard lock(mutex_);
  return is_class_locked(c);
}

bool ErrorCodes::is_class_locked(int c) const {
  if (c < 0) return false;
  if (c < (1 << kClassBits)) return predefined_(c) != nullptr;
  const uint32_t u = uint32_t(c);
  return (u & kDynamic) && !(u & kCodeBit) && (u & ~kDynamic) < class_strings_.size();
}

bool ErrorCodes::decode(int code, int* error_class, std::string* message) {
  std::lock_guard lock(mutex_);
  return decode_locked(code, error_class, message);
}

bool ErrorCodes::decode_locked(int code, int* error_class, std::string* message) const {
  if (code < 0) return false;
  const uint32_t u = uint32_t(code);
  if (is_class_locked(code)) {
    *error_class = code;
    if (message) *message = u & kDynamic ? class_strings_[u & ~kDynamic] : predefined_(code);
    return true;
  }
  if (u & kDynamic) {
    const uint32_t n = u & ~(kDynamic | kCodeBit);
    if (!(u & kCodeBit) || n >= codes_.size()) return false;
    *error_class = codes_[n].error_class;
    if (message) *message = codes_[n].message;
    return true;
  }
  const uint32_t slot = u >> kClassBits;
  if (slot < kRingBase || slot >= kRingBase + kRingSize) return false;
  const Entry& e = ring_[slot - kRingBase];
  if ((u & 0xff) != (uint32_t(e.error_class) & 0xff)) return false;
  *error_class = e.error_class;
  if (message) {
    if (!e.message.empty()) *message = e.message;
    else decode_locked(e.error_class, error_class, message);
  }
  return true;
}

int ErrorCodes::add_class() {
  std::lock_guard lock(mutex_);
  if (int(class_strings_.size()) >= max_classes_) return -1;
  const int c = int(kDynamic | uint32_t(class_strings_.size()));
  class_strings_.emplace_back();
  last_used_ = std::max(last_used_, c);
  return c;
}

int ErrorCodes::add_code(int error_class) {
  std::lock_guard lock(mutex_);
  if (codes_.size() >= kMaxCodes) return -1;
  const int code = int(kDynamic | kCodeBit | uint32_t(codes_.size()));
  codes_.push_back(Entry{error_class, {}});
  last_used_ = std::max(last_used_, code);
  return code;
}

std::string* ErrorCodes::added_string(int code) {
  const uint32_t u = uint32_t(code);
  if (code < 0 || !(u & kDynamic)) return nullptr;
  const uint32_t n = u & ~(kDynamic | kCodeBit);
  if (u & kCodeBit) return n < codes_.size() ? &codes_[n].message : nullptr;
  return n < class_strings_.size() ? &class_strings_[n] : nullptr;
}

bool ErrorCodes::set_string(int code, const char* string) {
  std::lock_guard lock(mutex_);
  std::string* s = added_string(code);
  if (s) *s = string;
  return s != nullptr;
}

int ErrorCodes::last_used() {
  std::lock_guard lock(mutex_);
  return last_used_;
}

}  // namespace weft
