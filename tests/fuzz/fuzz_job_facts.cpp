// Fuzzes the reading of the facts every rank publishes at MPI_Init (pmix/job_agreement.h): the
// input is split at NUL bytes into one text per rank. The message is empty exactly when every
// text equals rank 0's, and stays bounded whatever the texts hold; facts read back from any text
// encode to a text that reads back the same.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "pmix/job_agreement.h"

using namespace weft;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> by_rank;
  size_t pos = 0;
  for (size_t nul; (nul = input.find('\0', pos)) != std::string::npos; pos = nul + 1)
    by_rank.push_back(input.substr(pos, nul - pos));
  by_rank.push_back(input.substr(pos));

  bool all_same = true;
  for (const std::string& text : by_rank) all_same = all_same && text == by_rank[0];
  const std::string message = describe_disagreement(by_rank);
  if (message.empty() != all_same) abort();
  if (message.size() > 65536) abort();

  const JobFacts facts = decode_facts(by_rank[0]);
  bool encodable = true;  // names without '=', and no line breaks anywhere
  for (const auto& [name, value] : facts)
    encodable = encodable && name.find_first_of("=\n") == std::string::npos && value.find('\n') == std::string::npos;
  if (encodable && decode_facts(encode_facts(facts)) != facts) abort();
  return 0;
}
