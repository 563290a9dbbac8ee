// Entry point of the io family's CPU plugin (io_ops.cc + cpu/*.cc).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_io_cpu", "0.1.0")
