// Runs a fuzz target's entry point on files, without libFuzzer: how builds that are not fuzzing
// (any compiler, the sanitizer build) replay the corpus and every crash ever found. Arguments
// are files or folders (their files, not recursively); options starting with '-' are ignored.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int run_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  (void)LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int files = 0, failures = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    struct stat st {};
    if (stat(arg.c_str(), &st) != 0) {
      fprintf(stderr, "replay: no such file or folder: %s\n", arg.c_str());
      ++failures;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      failures += run_file(arg);
      ++files;
      continue;
    }
    DIR* dir = opendir(arg.c_str());
    if (!dir) continue;
    while (const dirent* e = readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == ".." || name == ".gitkeep") continue;
      failures += run_file(arg + "/" + name);
      ++files;
    }
    closedir(dir);
  }
  printf("replay: %d inputs run, %d unreadable\n", files, failures);
  return failures ? 1 : 0;
}
