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

std::string describe_disagreement(const std::vector<std::string>& facts_by_rank) {
  if (facts_by_rank.empty()) return "";
  bool all_same = true;
  for (const std::string& f : facts_by_rank) all_same = all_same && f == facts_by_rank[0];
  if (all_same) return "";
  // Every fact name any rank has, in rank 0's order first.
  std::vector<JobFacts> decoded;
  decoded.reserve(facts_by_rank.size());
  for (const std::string& f : facts_by_rank) decoded.push_back(decode_facts(f));
  std::vector<std::string> names;
  for (const JobFacts& facts : decoded)
    for (const auto& fact : facts)
      if (std::find(names.begin(), names.end(), fact.first) == names.end()) names.push_back(fact.first);
  std::string message;
  for (const std::string& name : names) {
    std::map<std::string, std::vector<int>> holders;  // value -> ranks
    std::vector<std::string> order;
    for (size_t r = 0; r < decoded.size(); ++r) {
      std::string value = "(none)";
      for (const auto& fact : decoded[r])
        if (fact.first == name) value = fact.second.empty() ? "(empty)" : fact.second;
      auto [it, fresh] = holders.try_emplace(value);
      if (fresh) order.push_back(value);
      it->second.push_back(int(r));
    }
    if (holders.size() == 1) continue;
    if (!message.empty()) message += "; ";
    message += name + ":";
    for (size_t k = 0; k < order.size(); ++k)
      message += (k ? "; " : " ") + order[k] + " on " + rank_list(holders[order[k]]);
  }
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
