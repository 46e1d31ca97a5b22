#include "tune.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "algorithm.h"
#include "runtime/config.h"

namespace weft::coll {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

bool parse_collective(std::string_view name, Collective* out) {
  for (int i = 0; i < int(Collective::count_); ++i) {
    if (name == collective_name(Collective(i))) {
      *out = Collective(i);
      return true;
    }
  }
  return false;
}

bool parse_bound(std::string_view text, size_t* out) {
  if (text == "inf") {
    *out = std::numeric_limits<size_t>::max();
    return true;
  }
  uint64_t v;
  if (!parse_size(text, &v)) return false;
  *out = size_t(v);
  return true;
}

std::string names_of(Collective coll) {
  std::string all;
  for (const Algorithm* a : algorithms())
    if (a->coll == coll) all += std::string(all.empty() ? "" : ", ") + a->name;
  return all;
}

}  // namespace

Status Tuning::parse(std::string_view text, Tuning* out, std::string* error) {
  out->rules_.clear();
  if (text.empty()) return Status::ok;
  for (std::string_view rule_text : split(text, '#')) {
    auto fail = [&](const std::string& why) {
      *error = "WEFT_COLL_TUNE rule '" + std::string(rule_text) + "': " + why;
      return Status::invalid_arg;
    };
    std::vector<std::string_view> fields = split(rule_text, ':');
    if (fields.size() != 2 && fields.size() != 3)
      return fail("expected collective:[lo-hi:]choices");
    Rule r{Collective::barrier, 0, std::numeric_limits<size_t>::max(), nullptr, {}};
    if (!parse_collective(fields[0], &r.coll)) return fail("unknown collective '" + std::string(fields[0]) + "'");
    if (fields.size() == 3) {
      size_t dash = fields[1].find('-');
      if (dash == std::string_view::npos || !parse_bound(fields[1].substr(0, dash), &r.lo) ||
          !parse_bound(fields[1].substr(dash + 1), &r.hi) || r.lo >= r.hi)
        return fail("bad size range '" + std::string(fields[1]) + "' (expected lo-hi, e.g. 0-4k or 64k-inf)");
    }
    for (std::string_view choice : split(fields.back(), ',')) {
      if (choice.size() < 2 || (choice[0] != '@' && choice[0] != '^'))
        return fail("choice '" + std::string(choice) + "' must be @algorithm or ^algorithm");
      const Algorithm* a = find_algorithm(r.coll, choice.substr(1));
      if (!a)
        return fail("'" + std::string(choice.substr(1)) + "' is not an algorithm of " +
                    collective_name(r.coll) + " (known: " + names_of(r.coll) + ")");
      if (choice[0] == '@') {
        if (r.force || !r.exclude.empty()) return fail("'@' forces one algorithm and takes no other choice");
        r.force = a;
      } else {
        if (r.force) return fail("'@' forces one algorithm and takes no other choice");
        r.exclude.push_back(a);
      }
    }
    out->rules_.push_back(std::move(r));
  }
  // Every size of a collective must keep at least one algorithm.
  for (const Rule& r : out->rules_) {
    if (r.exclude.empty()) continue;
    bool any_left = false;
    for (const Algorithm* a : algorithms())
      if (a->coll == r.coll && !out->excluded(*a, r.lo)) any_left = true;
    if (!any_left) {
      *error = std::string("WEFT_COLL_TUNE excludes every algorithm of ") + collective_name(r.coll);
      return Status::invalid_arg;
    }
  }
  return Status::ok;
}

const Algorithm* Tuning::forced(Collective coll, size_t bytes) const {
  for (const Rule& r : rules_)
    if (r.coll == coll && r.force && bytes >= r.lo && bytes < r.hi) return r.force;
  return nullptr;
}

bool Tuning::excluded(const Algorithm& a, size_t bytes) const {
  for (const Rule& r : rules_)
    if (r.coll == a.coll && bytes >= r.lo && bytes < r.hi &&
        std::find(r.exclude.begin(), r.exclude.end(), &a) != r.exclude.end())
      return true;
  return false;
}

}  // namespace weft::coll
