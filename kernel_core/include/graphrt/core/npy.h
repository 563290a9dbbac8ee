// NumPy .npy files (format 1.0-3.0) <-> Tensors.
#ifndef GRAPHRT_CORE_NPY_H_
#define GRAPHRT_CORE_NPY_H_

#include <string>

#include "graphrt/core/status.h"
#include "graphrt/core/tensor.h"

namespace graphrt {

// Maps every POD dtype and bool to its numpy descr ('<f4', '|b1', ...) and
// back; strings are written as fixed-width bytes ('|S<n>'); '<U' is read too.
Status ReadNpy(const std::string& path, Tensor* out);
Status WriteNpy(const std::string& path, const Tensor& t);
Status ParseNpy(const std::string& bytes, const std::string& what, Tensor* out);
Status SerializeNpy(const Tensor& t, std::string* out);

}  // namespace graphrt

#endif  // GRAPHRT_CORE_NPY_H_
