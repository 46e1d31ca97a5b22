// weft_trace: joins the per-rank traces WEFT_TRACE writes into one timeline.
//
//   weft_trace merge -o OUT.json RANKFILE...
//
// Each rank's events move onto rank 0's clock by the offset its file records (the "weft_clock"
// metadata event, measured at MPI_Init). The files are read one line per event, each line
// parsed on its own with a bounded parser: a rank that died leaves a file without its last
// lines, whose events are still joined (unaligned if the clock record is missing, with a
// warning); a line that is not an event is skipped and counted.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topo/json.h"

namespace {

struct RankFile {
  std::string path;
  std::vector<nlohmann::json> events;
  int rank = -1;
  double offset_us = 0;
  bool has_clock = false;
  size_t skipped = 0;
};

int usage() {
  fprintf(stderr, "usage: weft_trace merge -o OUT.json RANKFILE...\n");
  return 2;
}

bool read_rank_file(const std::string& path, RankFile* f) {
  std::ifstream in(path);
  if (!in) {
    fprintf(stderr, "weft_trace: cannot open %s\n", path.c_str());
    return false;
  }
  f->path = path;
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line == "{\"traceEvents\":[" || line.rfind("],", 0) == 0) continue;
    if (line.back() == ',') line.pop_back();
    nlohmann::json event;
    std::string error;
    if (line.size() > 65536 || !weft::topo::parse_json(line, &event, &error) || !event.is_object() ||
        !event.contains("ph") || !event["ph"].is_string()) {
      ++f->skipped;
      continue;
    }
    const auto pid = event.find("pid");
    if (pid == event.end() || !pid->is_number_integer()) {
      ++f->skipped;
      continue;
    }
    const int rank = pid->get<int>();
    if (f->rank < 0) f->rank = rank;
    if (rank != f->rank) {
      fprintf(stderr, "weft_trace: %s holds events of ranks %d and %d: not one rank's file\n", path.c_str(), f->rank,
              rank);
      return false;
    }
    if (event["ph"] == "M" && event.value("name", "") == "weft_clock") {
      const auto args = event.find("args");
      if (args != event.end() && args->is_object() && args->contains("offset_us") && (*args)["offset_us"].is_number()) {
        f->offset_us = (*args)["offset_us"].get<double>();
        f->has_clock = true;
      }
      continue;
    }
    f->events.push_back(std::move(event));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "merge") return usage();
  std::string out;
  std::vector<std::string> inputs;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" && i + 1 < argc) out = argv[++i];
    else inputs.push_back(a);
  }
  if (out.empty() || inputs.empty()) return usage();
  std::vector<RankFile> files(inputs.size());
  std::map<int, std::string> seen;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!read_rank_file(inputs[k], &files[k])) return 1;
    RankFile& f = files[k];
    if (f.rank < 0) {
      fprintf(stderr, "weft_trace: %s holds no events\n", f.path.c_str());
      return 1;
    }
    if (!seen.emplace(f.rank, f.path).second) {
      fprintf(stderr, "weft_trace: rank %d is in both %s and %s\n", f.rank, seen[f.rank].c_str(), f.path.c_str());
      return 1;
    }
    if (!f.has_clock)
      fprintf(stderr, "weft_trace: %s has no clock record (the rank did not finish): its times are not aligned\n",
              f.path.c_str());
    if (f.skipped) fprintf(stderr, "weft_trace: %s: %zu lines that are not events skipped\n", f.path.c_str(), f.skipped);
  }
  FILE* o = fopen(out.c_str(), "w");
  if (!o) {
    fprintf(stderr, "weft_trace: cannot write %s\n", out.c_str());
    return 1;
  }
  fputs("{\"traceEvents\":[\n", o);
  bool first = true;
  size_t total = 0;
  for (RankFile& f : files) {
    for (nlohmann::json& e : f.events) {
      if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() - f.offset_us;
      fputs(first ? "" : ",\n", o);
      fputs(e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str(), o);
      first = false;
      ++total;
    }
  }
  fputs("\n],\"displayTimeUnit\":\"ns\"}\n", o);
  if (fclose(o) != 0) {
    fprintf(stderr, "weft_trace: writing %s failed\n", out.c_str());
    return 1;
  }
  printf("weft_trace: %zu events of %zu ranks joined into %s\n", total, files.size(), out.c_str());
  return 0;
}
