#include "runtime/launch_env.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <string>

namespace weft {

InfoSet launch_environment(int argc, const char* const* argv) {
  InfoSet info;
  if (argc > 0 && argv && argv[0]) {
    info.set("command", argv[0]);
    std::string args;
    for (int i = 1; i < argc && argv[i]; ++i) {
      if (i > 1) args += ' ';
      args += argv[i];
    }
    if (argc > 1) info.set("argv", args);
  }
  char host[HOST_NAME_MAX + 1] = "";
  if (gethostname(host, sizeof host) == 0) {
    host[HOST_NAME_MAX] = '\0';
    info.set("host", host);
  }
  utsname u;
  if (uname(&u) == 0) info.set("arch", u.machine);
  char cwd[PATH_MAX] = "";
  if (getcwd(cwd, sizeof cwd)) info.set("wdir", cwd);
  return info;
}

}  // namespace weft
