// Entry point of the summary family's CPU plugin (ops.cc + cpu/*.cc).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_summary_cpu", "0.1.0")
