// Entry point of the logging family's CPU plugin (ops.cc + cpu/*.cc).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_logging_cpu", "0.1.0")
