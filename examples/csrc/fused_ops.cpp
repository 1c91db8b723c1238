#include <torch/extension.h>

// Implemented in fused_ops_kernel.cu.
torch::Tensor bias_softmax_cuda(const torch::Tensor& x, const torch::Tensor& bias);

#define CHECK_CUDA(t) TORCH_CHECK((t).is_cuda(), #t " must be a CUDA tensor")
#define CHECK_CONTIGUOUS(t) TORCH_CHECK((t).is_contiguous(), #t " must be contiguous")
#define CHECK_INPUT(t) \
  CHECK_CUDA(t);       \
  CHECK_CONTIGUOUS(t)

torch::Tensor bias_softmax(const torch::Tensor& x, const torch::Tensor& bias) {
  CHECK_INPUT(x);
  CHECK_INPUT(bias);
  TORCH_CHECK(x.dim() >= 2, "x must have at least 2 dimensions, got ", x.dim());
  TORCH_CHECK(bias.size(-1) == x.size(-1), "bias and x differ in their last dimension: ",
              bias.size(-1), " vs ", x.size(-1));
  TORCH_CHECK(bias.scalar_type() == x.scalar_type(), "bias and x must have the same dtype");
  TORCH_CHECK(bias.get_device() == x.get_device(), "bias and x must be on the same device");
  return bias_softmax_cuda(x, bias);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "tinyseg fused CUDA kernels";
  m.def("bias_softmax", &bias_softmax, "softmax(x + bias, dim=-1), bias broadcast over leading dims",
        py::arg("x"), py::arg("bias"));
}
