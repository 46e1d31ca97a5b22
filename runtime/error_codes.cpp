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
  return int(((kRingBase + slot) << kClassBits) | uint32_t(error_class));
}

bool ErrorCodes::is_class(int c) {
  std::lock_guard lock(mutex_);
  return is_class_locked(c);
}

bool ErrorCodes::is_class_locked(int c) const {
  if (c >= 0 && c < first_user_) return predefined_(c) != nullptr;
  return c >= first_user_ && c < first_user_ + int(class_strings_.size());
}

bool ErrorCodes::decode(int code, int* error_class, std::string* message) {
  std::lock_guard lock(mutex_);
  return decode_locked(code, error_class, message);
}

bool ErrorCodes::decode_locked(int code, int* error_class, std::string* message) const {
  if (code < 0) return false;
  if (code < (1 << kClassBits)) {
    if (!is_class_locked(code)) return false;
    *error_class = code;
    if (message) {
      if (code >= first_user_) *message = class_strings_[size_t(code - first_user_)];
      else *message = predefined_(code);
    }
    return true;
  }
  uint32_t slot = uint32_t(code) >> kClassBits;
  const Entry* e = nullptr;
  if (slot >= 1 && slot < kRingBase) {
    if (slot - 1 >= codes_.size()) return false;
    e = &codes_[slot - 1];
  } else if (slot >= kRingBase && slot < kRingBase + kRingSize) {
    e = &ring_[slot - kRingBase];
  } else {
    return false;
  }
  if ((code & ((1 << kClassBits) - 1)) != e->error_class) return false;
  *error_class = e->error_class;
  if (message) {
    if (!e->message.empty()) *message = e->message;
    else decode_locked(e->error_class, error_class, message);
  }
  return true;
}

int ErrorCodes::add_class() {
  std::lock_guard lock(mutex_);
  int c = first_user_ + int(class_strings_.size());
  if (c > last_user_) return -1;
  class_strings_.emplace_back();
  last_used_ = std::max(last_used_, c);
  return c;
}

int ErrorCodes::add_code(int error_class) {
  std::lock_guard lock(mutex_);
  if (codes_.size() + 1 >= kRingBase) return -1;
  codes_.push_back(Entry{error_class, {}});
  int code = int((uint32_t(codes_.size()) << kClassBits) | uint32_t(error_class));
  last_used_ = std::max(last_used_, code);
  return code;
}

bool ErrorCodes::set_string(int code, const char* string) {
  std::lock_guard lock(mutex_);
  if (code >= first_user_ && code < first_user_ + int(class_strings_.size())) {
    class_strings_[size_t(code - first_user_)] = string;
    return true;
  }
  uint32_t slot = uint32_t(code) >> kClassBits;
  if (code > 0 && slot >= 1 && slot - 1 < codes_.size() && (code & 0xff) == codes_[slot - 1].error_class) {
    codes_[slot - 1].message = string;
    return true;
  }
  return false;
}

int ErrorCodes::last_used() {
  std::lock_guard lock(mutex_);
  return last_used_;
}

}  // namespace weft
