// Error codes that carry a message. Codes below 256 are classes; a code above is
// (slot << 8) | class: slots [1, 4096) are codes a program added, slots from 4096 a ring of the
// 1,024 most recent error messages. The predefined classes and their strings are the caller's
// (the MPI boundary); classes a program adds follow them. Thread-safe.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace weft {

class ErrorCodes {
 public:
  // A predefined class's string; nullptr for a value that is no predefined class.
  using ClassString = const char* (*)(int error_class);
  // Added classes are [first_user_class, last_user_class]; last_used: the highest predefined code.
  ErrorCodes(ClassString predefined, int first_user_class, int last_user_class, int last_used)
      : predefined_(predefined), first_user_(first_user_class), last_user_(last_user_class),
        last_used_(last_used) {}

  // A new code of error_class carrying message (a slot of the ring).
  int make(int error_class, const std::string& message);
  bool is_class(int c);
  // The class and message of a code; false for a code not made here.
  bool decode(int code, int* error_class, std::string* message);
  int add_class();                // -1: no class left
  int add_code(int error_class);  // -1: no code left
  // The string of an added class or code; false for another code.
  bool set_string(int code, const char* string);
  int last_used();

 private:
  struct Entry {
    int error_class = 0;
    std::string message;
  };
  static constexpr int kClassBits = 8;
  static constexpr uint32_t kRingBase = 1u << 12, kRingSize = 1024;
  bool is_class_locked(int c) const;
  bool decode_locked(int code, int* error_class, std::string* message) const;

  ClassString predefined_;
  int first_user_, last_user_;
  std::mutex mutex_;
  std::vector<std::string> class_strings_;  // added classes, by class - first_user_
  std::vector<Entry> codes_;                // added codes, by slot - 1
  Entry ring_[kRingSize];
  uint32_t ring_next_ = 0;
  int last_used_;
};

}  // namespace weft
