"""Fused ops used by the model, with a plain PyTorch fallback when the extension isn't built."""
import torch

try:
    import tinyseg_ops  # built from csrc/ by `pip install -e .`
except ImportError:
    tinyseg_ops = None


def has_fused_kernels() -> bool:
    return tinyseg_ops is not None


def default_device() -> torch.device:
    """The GPU this process runs on."""
    if torch.version.hip is not None:
        return torch.device("hip", torch.cuda.current_device())
    return torch.device("cuda", torch.cuda.current_device())


class BiasSoftmax(torch.autograd.Function):
    """softmax(x + bias, dim=-1), with `bias` broadcast over the leading dims of `x`."""

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x, bias):
        if tinyseg_ops is not None and x.is_cuda:
            y = tinyseg_ops.bias_softmax(x.contiguous(), bias.contiguous())
        else:
            y = torch.softmax(x + bias, dim=-1)
        ctx.save_for_backward(y)
        ctx.bias_shape = bias.shape
        return y

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        grad_in = y * (grad_out - (grad_out * y).sum(dim=-1, keepdim=True))
        grad_bias = grad_in.reshape(-1, *ctx.bias_shape).sum(dim=0)
        return grad_in, grad_bias


def bias_softmax(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return BiasSoftmax.apply(x, bias)


def _check_against_reference(rows: int = 64, cols: int = 64, heads: int = 4) -> None:
    device = default_device()
    x = torch.randn(8, heads, rows, cols, device=device, requires_grad=True)
    bias = torch.randn(heads, rows, cols, device=device, requires_grad=True)

    y = bias_softmax(x, bias)
    ref = torch.softmax(x + bias, dim=-1)
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=1e-5)

    grad = torch.randn_like(y)
    gx, gb = torch.autograd.grad(y, (x, bias), grad)
    rx, rb = torch.autograd.grad(ref, (x, bias), grad)
    torch.testing.assert_close(gx, rx, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(gb, rb, rtol=1e-4, atol=1e-4)
    print(f"bias_softmax OK on {device} (fused kernels: {has_fused_kernels()})")


if __name__ == "__main__":
    _check_against_reference()
    _check_against_reference(rows=16, cols=1000, heads=2)
