// The UCX generic datatype of device buffers pipelined through pinned host chunks
// (runtime/device_staging.h). Its "buffer" is the message's DeviceStaging, in host memory,
// so UCX never sees the device pointer: UCX asks for the bytes at each offset (pack) or hands
// them over (unpack), and the staging pipeline moves them through the two chunks. The
// transport passes it with UCP_OP_ATTR_FIELD_DATATYPE for device buffers to and from UCX peers.
#pragma once
#include <ucp/api/ucp.h>

#include "runtime/request.h"

namespace weft {

// Makes the datatype (ucp_dt_create_generic); ucp_dt_destroy frees it.
ucs_status_t device_datatype_create(ucp_datatype_t* out);

// Ends a request's staging (Request::device_staging, if any) when its UCX operation is over:
// the copies are done and the set is back in the pool. A copy that failed inside a callback
// (kept there, never reported to UCX's protocol) becomes the request's error, unless the
// request already failed or was cancelled.
void end_device_staging(Request* r);

}  // namespace weft
