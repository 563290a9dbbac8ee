// Entry point of the random family's CPU plugin (ops.cc + cpu/*.cc).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_random_cpu", "0.1.0")
