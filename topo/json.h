// A small JSON reader for topology files: a tree of values, bounded in depth and size, with
// errors that say where (a hostile or truncated file yields an error, never a crash).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace weft::topo {

struct Json {
  enum Kind { null, boolean, number, string, array, object } kind = null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<Json> items;          // array
  std::vector<std::string> keys;    // object: member names, in file order
  std::vector<Json> values;         // object: keys[i]'s value (Json is incomplete here, so no pairs)

  // The member `key` of an object, or nullptr.
  const Json* get(std::string_view key) const;
};

// Parses text; false with *error ("line L, column C: what") on malformed input.
bool parse_json(std::string_view text, Json* out, std::string* error);

// Appends s to out as a JSON string literal (quoted, escaped).
void json_quote(std::string_view s, std::string* out);

}  // namespace weft::topo
