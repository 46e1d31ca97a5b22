// Bytes as hex text, as MPICH's MPIX_Info_set_hex writes them into an info value: two hex
// digits per byte, in memory order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

// Two upper-case hex digits per byte.
std::string hex_encode(const void* bytes, size_t n);
// Decodes hex_encode's text, where newer MPICH also writes "[N]" for a run of N zero bytes.
// False if malformed or longer than max_bytes (a short text can ask for millions of zeros).
bool hex_decode(const std::string& text, std::vector<unsigned char>* out, size_t max_bytes = SIZE_MAX);

}  // namespace weft
