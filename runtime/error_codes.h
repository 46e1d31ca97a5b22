// Error codes that carry a message. Codes up to the caller's last predefined code are the
// predefined classes and (slot << 8) | (class & 0xff), slots from 4096: a ring of the 1,024 most
// recent error messages. The classes and codes a program adds lie above the last predefined
// code: dynamic | n for the n-th added class, dynamic | code_bit | n for the n-th added code.
// The predefined classes and their strings are the caller's (the MPI boundary). Thread-safe.
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
  // last_predefined: the highest predefined code (MPI_ERR_LASTCODE); added classes and codes
  // lie above it; at most max_classes classes may be added.
  ErrorCodes(ClassString predefined, int last_predefined, int max_classes)
      : predefined_(predefined), last_predefined_(last_predefined), max_classes_(max_classes),
        last_used_(last_predefined) {}

  // A new code of error_class carrying message (a slot of the ring).
  int make(int error_class, const std::string& message);
  bool is_class(int c);
  // The class and message of a code; false for a code not made here. The message of an added
  // class or code is the string set for it, empty if none was.
  bool decode(int code, int* error_class, std::string* message);
  int add_class();                // -1: no class left
  int add_code(int error_class);  // -1: no code left
  // The string of an added class or code; false for another code.
  bool set_string(int code, const char* string);
  // The highest code added so far, at least last_predefined.
  int last_used();

 private:
  struct Entry {
    int error_class = 0;
    std::string message;
  };
  static constexpr int kClassBits = 8;
  static constexpr uint32_t kRingBase = 1u << 12, kRingSize = 1024;
  static constexpr uint32_t kDynamic = 1u << 30, kCodeBit = 1u << 29, kMaxCodes = 1u << 20;
  bool is_class_locked(int c) const;
  bool decode_locked(int code, int* error_class, std::string* message) const;
  // The added class or code `code` is (nullptr: none).
  std::string* added_string(int code);

  ClassString predefined_;
  int last_predefined_, max_classes_;
  std::mutex mutex_;
  std::vector<std::string> class_strings_;  // added classes, by n
  std::vector<Entry> codes_;                // added codes, by n
  Entry ring_[kRingSize];
  uint32_t ring_next_ = 0;
  int last_used_;
};

}  // namespace weft
