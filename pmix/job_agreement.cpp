#include "job_agreement.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace weft {

std::string encode_facts(const JobFacts& facts) {
  std::string out;
  for (const auto& [name, value] : facts) out += name + "=" + value + "\n";
  return out;
}

JobFacts decode_facts(const std::string& text) {
  JobFacts facts;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const size_t eq = line.find('=');
    if (eq == std::string::npos) facts.emplace_back(line, "");
    else facts.emplace_back(line.substr(0, eq), line.substr(eq + 1));
    pos = end + 1;
  }
  return facts;
}

namespace {

// "rank 3", "ranks 0, 2-5, 9" (at most 8 runs, then how many more ranks).
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  size_t runs = 0;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (runs == 8) {
      out += " and " + std::to_string(ranks.size() - i) + " more";
      break;
    }
    if (runs++) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace

namespace {

// Facts come from other processes: bound what one rank's text may cost to read and to print.
constexpr size_t kMaxFactsBytes = 16384;
constexpr size_t kMaxFactsNamed = 16;  // differing facts in one message
constexpr size_t kMaxValuesNamed = 8;  // values of one fact in one message
constexpr size_t kMaxValueChars = 96;

std::string shown_value(const std::string& value) {
  if (value.empty()) return "(empty)";
  std::string out;
  for (char ch : value.substr(0, kMaxValueChars)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
  if (value.size() > kMaxValueChars) out += "...";
  return out;
}

using FactMap = std::map<std::string, std::string>;

// One rank's facts by name; a text over the bound, or naming a fact twice, stands for a fact
// of its own so that it still differs from a well-formed rank 0.
FactMap read_facts(const std::string& text) {
  FactMap facts;
  if (text.size() > kMaxFactsBytes) {
    facts["(facts)"] = std::to_string(text.size()) + " bytes, over the " + std::to_string(kMaxFactsBytes) + " allowed";
    return facts;
  }
  for (auto& [name, value] : decode_facts(text))
    if (!facts.try_emplace(name, value).second) facts["(facts)"] = "names " + shown_value(name) + " twice";
  return facts;
}

}  // namespace

std::string describe_disagreement(const std::vector<std::string>& facts_by_rank) {
  if (facts_by_rank.empty()) return "";
  std::vector<int> differing_ranks;
  for (size_t r = 1; r < facts_by_rank.size(); ++r)
    if (facts_by_rank[r] != facts_by_rank[0]) differing_ranks.push_back(int(r));
  if (differing_ranks.empty()) return "";
  std::vector<FactMap> decoded;
  decoded.reserve(facts_by_rank.size());
  for (const std::string& f : facts_by_rank) decoded.push_back(read_facts(f));
  // Fact names in the order rank 0 gives them, then those only other ranks have.
  std::vector<std::string> names;
  for (const auto& fact : decode_facts(facts_by_rank[0].substr(0, kMaxFactsBytes)))
    if (decoded[0].count(fact.first) && std::find(names.begin(), names.end(), fact.first) == names.end())
      names.push_back(fact.first);
  if (decoded[0].count("(facts)") && std::find(names.begin(), names.end(), "(facts)") == names.end())
    names.push_back("(facts)");
  std::string message;
  size_t named = 0;
  auto describe = [&](const std::string& name) {
    std::map<std::string, std::vector<int>> holders;  // shown value -> ranks
    std::vector<std::string> order;
    for (size_t r = 0; r < decoded.size(); ++r) {
      auto found = decoded[r].find(name);
      const std::string value = found == decoded[r].end() ? "(none)" : shown_value(found->second);
      auto [it, fresh] = holders.try_emplace(value);
      if (fresh) order.push_back(value);
      it->second.push_back(int(r));
    }
    if (holders.size() == 1) return;
    if (named++ == kMaxFactsNamed) {
      message += "; and more";
      return;
    }
    if (!message.empty()) message += "; ";
    message += shown_value(name) + ":";
    for (size_t k = 0; k < order.size() && k < kMaxValuesNamed; ++k)
      message += (k ? "; " : " ") + order[k] + " on " + rank_list(holders[order[k]]);
    if (order.size() > kMaxValuesNamed) message += "; " + std::to_string(order.size() - kMaxValuesNamed) + " more values";
  };
  for (const std::string& name : names) {
    if (named > kMaxFactsNamed) break;
    describe(name);
  }
  // Names rank 0 lacks, looked at only on the ranks that differ from it.
  for (int r : differing_ranks) {
    for (const auto& fact : decoded[size_t(r)]) {
      if (named > kMaxFactsNamed) break;
      if (decoded[0].count(fact.first) || std::find(names.begin(), names.end(), fact.first) != names.end()) continue;
      names.push_back(fact.first);
      describe(fact.first);
    }
  }
  // Texts that differ only in form (a missing last newline, say) still differ.
  if (message.empty())
    message = "the published facts of " + rank_list(differing_ranks) + " differ in form from rank 0's";
  return message;
}

namespace {

struct NoteSearch {
  const void* address;  // an address inside the wanted object
  std::string id;
};

int find_build_id(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<NoteSearch*>(data);
  const auto wanted = reinterpret_cast<uintptr_t>(search->address);
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum && !inside; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    inside = ph.p_type == PT_LOAD && wanted >= start && wanted < start + ph.p_memsz;
  }
  if (!inside) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      if (desc + note->n_descsz > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        static const char kHex[] = "0123456789abcdef";
        for (uint32_t k = 0; k < note->n_descsz; ++k) {
          const auto byte = static_cast<unsigned char>(desc[k]);
          search->id += kHex[byte >> 4];
          search->id += kHex[byte & 15];
        }
        return 1;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;  // the object holding this code, without a build id
}

}  // namespace

std::string library_build_id() {
  NoteSearch search{reinterpret_cast<const void*>(&library_build_id), {}};
  dl_iterate_phdr(find_build_id, &search);
  return search.id;
}

}  // namespace weft
