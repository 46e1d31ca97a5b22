// JSON for topology files and the records ranks exchange, on nlohmann::json: a parse bounded in
// size and depth whose errors say where (a hostile or truncated text yields an error, never an
// exception or a crash), and string quoting for the writers, which lay their output out by hand.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace weft::topo {

using Json = nlohmann::json;

// Parses text into *out; false with *error ("line L, column C: what") on malformed input,
// on text over 64 MiB and on arrays or objects nested more than 64 deep.
bool parse_json(std::string_view text, Json* out, std::string* error);

// The member `key` of an object, or nullptr (also when o is not an object).
const Json* json_member(const Json& o, std::string_view key);

// Appends s to out as a JSON string literal (quoted, escaped; bytes that are not UTF-8 become
// U+FFFD).
void json_quote(std::string_view s, std::string* out);

}  // namespace weft::topo
