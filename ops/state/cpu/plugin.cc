// Entry point of the state family's CPU plugin (variables).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_state_cpu", "0.1.0")
