// weft_info: version, build options, configuration variables, available transports, and the MPI
// routines declared but not supported yet.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pt2pt/shm.h"
#include "pt2pt/tag.h"
#include "pt2pt/transport.h"
#include "runtime/config.h"
#include "runtime/memkind.h"
#include "topo/topology.h"

// Defined in libweft (mpi/unsupported.cpp): nullptr-terminated.
extern "C" const char* const weft_unsupported_functions[];

namespace {

void print_version() {
  printf("weft %s\n", WEFT_VERSION_STRING);
  printf("  mpi standard      4.0 (MPICH ABI: libmpi.so.12, libmpich.so.12)\n");
#ifdef WEFT_HAVE_CUDA
  printf("  cuda              compiled in\n");
#else
  printf("  cuda              not compiled in\n");
#endif
  printf("  tag layout        context %d bits, source %d bits, tag %d bits (MPI_TAG_UB %d)\n",
         weft::tag::kContextBits, weft::tag::kSourceBits, weft::tag::kTagBits,
         weft::tag::kMaxUserTag);
}

void print_config() {
  const weft::Config& cfg = weft::process_config();
  if (cfg.check() != weft::Status::ok) {
    fprintf(stderr, "weft_info: the environment holds an invalid WEFT_* value (see above)\n");
    return;
  }
  printf("configuration variables (name, current value, type, doc):\n");
  for (const auto& v : weft::config_vars()) {
    printf("  %-24s %-10s %s%s%s%s\n", v.name,
           std::string(cfg.value(v.name)).empty() ? "(empty)" : std::string(cfg.value(v.name)).c_str(),
           weft::config_type_name(v.type), v.choices ? " " : "", v.choices ? v.choices : "",
           cfg.is_set(v.name) ? " [set]" : "");
    printf("      %s\n", v.doc);
  }
}

// A markdown table cell: '|' would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// The registry as the markdown table of docs/TUNING.md (defaults, not this environment's values).
void print_config_markdown() {
  printf("| Variable | Type | Default | Meaning |\n");
  printf("|---|---|---|---|\n");
  for (const auto& v : weft::config_vars()) {
    std::string type = weft::config_type_name(v.type);
    if (v.choices) {
      type += " ";
      for (const char* c = v.choices; *c; ++c) type += *c == '|' ? std::string(", ") : std::string(1, *c);
    }
    const std::string def = *v.default_value ? "`" + std::string(v.default_value) + "`" : "(empty)";
    printf("| `%s` | %s | %s | %s |\n", v.name, cell(type).c_str(), cell(def).c_str(), cell(v.doc).c_str());
  }
}

void print_transports() {
  std::string shm = weft::shm_unavailable_reason();
  printf("weft shared memory: %s\n",
         shm.empty() ? "available (used when every rank of a job is on one node)" : shm.c_str());
  printf("ucx transports available: %s\n", weft::Transport::available_transports().c_str());
}

void print_cuda() {
  const weft::CudaState& c = weft::cuda_probe(true);
  if (c.usable) printf("cuda devices: %d\n", weft::cuda_device_count());
  else printf("cuda: not usable (%s)\n", c.reason.c_str());
}

void print_unsupported() {
  int n = 0;
  while (weft_unsupported_functions[n]) ++n;
  printf("%d MPI functions are declared but not supported yet:\n", n);
  for (int i = 0; i < n; ++i) printf("%s\n", weft_unsupported_functions[i]);
}

// This machine's topology (or WEFT_TOPO_FILE's), as a tree or as JSON, and this process's binding.
int print_topology(bool json) {
  weft::topo::NodeTopology t;
  std::string error;
  const std::string file(weft::setting_string("WEFT_TOPO_FILE"));
  weft::Status s = !file.empty() ? weft::topo::load_file(file, &t, &error) : weft::topo::load_machine(true, &t, &error);
  if (s != weft::Status::ok) {
    fprintf(stderr, "weft_info: %s\n", error.c_str());
    return 1;
  }
  if (json) {
    fputs(weft::topo::to_json(t).c_str(), stdout);
    return 0;
  }
  fputs(weft::topo::to_text(t).c_str(), stdout);
  weft::topo::Binding b;
  if (weft::topo::current_binding(&b, &error) == weft::Status::ok)
    printf("this process: %s cpus %s\n", b.bound ? "bound to" : "not bound, may run on", b.cpus.c_str());
  return 0;
}

void usage() {
  printf("usage: weft_info [--all | --version | --config | --config-markdown | --transports |"
         " --cuda | --unsupported | --topology [--json]]\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool all = argc == 1;
  bool json = false;
  for (int i = 1; i < argc; ++i) json = json || !strcmp(argv[i], "--json");
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!strcmp(a, "--json")) continue;
    if (!strcmp(a, "--topology")) {
      if (int rc = print_topology(json)) return rc;
      continue;
    }
    if (!strcmp(a, "--all")) all = true;
    else if (!strcmp(a, "--version")) print_version();
    else if (!strcmp(a, "--config")) print_config();
    else if (!strcmp(a, "--config-markdown")) print_config_markdown();
    else if (!strcmp(a, "--transports")) print_transports();
    else if (!strcmp(a, "--cuda")) print_cuda();
    else if (!strcmp(a, "--unsupported")) print_unsupported();
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(); return 0; }
    else { usage(); return 2; }
  }
  if (all) {
    print_version();
    print_cuda();
    print_transports();
    print_config();
  }
  return 0;
}
