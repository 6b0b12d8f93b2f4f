// Types of Fourier transforms.
#include <sluice/ops/detail/shape_inference.h>

namespace sluice::infer {

DType fft_type(std::string_view op, const Spec& x, int64_t length) {
  if (x.shape.rank() < 1)
    shape_error(op, "x", "a tensor of rank >= 1 (transforms run along the last axis)", x.str());
  if (length < 1) shape_error(op, "length", "a length >= 1", cat(length));
  return to_complex(x.dtype);
}

}  // namespace sluice::infer
