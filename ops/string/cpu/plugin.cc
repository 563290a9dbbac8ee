// Entry point of the string family's CPU plugin (ops.cc + cpu/*.cc).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_string_cpu", "0.1.0")
