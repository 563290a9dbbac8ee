// Entry point of the parsing family's CPU plugin (ops.cc + cpu/*.cc).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_parsing_cpu", "0.1.0")
