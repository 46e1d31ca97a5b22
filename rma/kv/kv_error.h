// Errors of the KV agents: logged where detected, the reason kept for weft_kv_last_error.
#pragma once
#include <string>

namespace weft::kv {

// Logs msg, records it as this thread's error detail and returns code (a weft_kv_status_t).
int kv_error(int code, const std::string& msg);

}  // namespace weft::kv
