// Entry point of the training family's CPU plugin (optimizer updates).
#include <graphrt/sdk/sdk.h>

GRAPHRT_PLUGIN("ops_training_cpu", "0.1.0")
