// What every rank of a job must share: weft's build and the settings whose values must be the
// same everywhere (ring layouts, collective tuning, offload mode). Each rank publishes its facts
// with the modex; after the first exchange each rank reads every rank's and compares them with
// rank 0's, so every rank fails with the same message (no hang, no silent slowdown).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace weft {

// One fact per line, "name=value".
using JobFacts = std::vector<std::pair<std::string, std::string>>;
std::string encode_facts(const JobFacts& facts);
JobFacts decode_facts(const std::string& text);

// "" when every rank's facts (encoded, by job rank) equal rank 0's; else one message naming
// each fact that differs, with its values and the ranks that hold each, e.g.
// "WEFT_SHM_CELLS: 16 on ranks 0, 2-3; 8 on rank 1".
std::string describe_disagreement(const std::vector<std::string>& facts_by_rank);

// The build identity of the library this code is linked into: its version, ABI and the ELF
// build id (GNU note) of the file that holds it ("" where the file carries none).
std::string library_build_id();

}  // namespace weft
