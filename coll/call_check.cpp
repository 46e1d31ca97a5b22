// WEFT_COLL_CHECK's comparison (call_check.h): each member's values and their complements,
// reduced with max in one allreduce, give every value's largest and smallest across the members.
#include "coll/call_check.h"

#include <string>

#include "runtime/log.h"

namespace weft::coll {

Status check_same_call(const CollContext& ctx, const char* fn, const std::vector<SameArgument>& args,
                       bool own_mismatch) {
  const size_t n = args.size();
  std::vector<uint64_t> words(2 * n + 1);
  for (size_t i = 0; i < n; ++i) {
    words[i] = args[i].value;
    words[n + i] = ~args[i].value;
  }
  words[2 * n] = own_mismatch ? uint64_t(ctx.comm.rank) + 1 : 0;
  const Reduction max{ReduceOp::max, BasicType::u64, sizeof(uint64_t)};
  WEFT_TRY(allreduce(ctx, words.data(), words.data(), words.size(), max));
  for (size_t i = 0; i < n; ++i) {
    const uint64_t largest = words[i], smallest = ~words[n + i];
    if (largest == smallest) continue;
    auto text = [&](uint64_t v) { return args[i].name ? args[i].name(v) : std::to_string(v); };
    const std::string msg = std::string(fn) + ": the members of " + ctx.comm.label() + " gave different " +
                            args[i].what + " (from " + text(smallest) + " to " + text(largest) + "; WEFT_COLL_CHECK)";
    WEFT_WARN(Subsys::coll, "%s", msg.c_str());
    set_error_detail(msg);
    return args[i].mismatch;
  }
  if (words[2 * n] != 0) {
    const std::string msg = std::string(fn) + ": rank " + std::to_string(words[2 * n] - 1) + " of " +
                            ctx.comm.label() + " sends a block of another size than it receives (WEFT_COLL_CHECK)";
    WEFT_WARN(Subsys::coll, "%s", msg.c_str());
    set_error_detail(msg);
    return Status::truncated;
  }
  return Status::ok;
}

}  // namespace weft::coll
