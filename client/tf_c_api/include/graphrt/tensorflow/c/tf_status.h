/* TensorFlow's header path for graphrt's TensorFlow C API: code that says
 * #include "tensorflow/c/tf_status.h" compiles unchanged against libgraphrt_tf_c
 * with -I<prefix>/include/graphrt (the tensorflow.pc of
 * <libdir>/graphrt/tensorflow-compat/pkgconfig gives it). graphrt declares
 * TensorFlow's C API in one header. */
#ifndef GRAPHRT_TENSORFLOW_C_TF_STATUS_H_
#define GRAPHRT_TENSORFLOW_C_TF_STATUS_H_
#include "../../tf_c_api.h"
#endif
