"""A small U-Net with a windowed self-attention block at the bottleneck."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from ops import bias_softmax


class ConvBlock(nn.Sequential):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )


class WindowAttention(nn.Module):
    """Multi-head self-attention inside non-overlapping windows, with a learned position bias."""

    def __init__(self, dim: int, heads: int = 4, window: int = 8):
        super().__init__()
        self.heads = heads
        self.window = window
        self.head_dim = dim // heads
        self.scale = self.head_dim**-0.5
        self.qkv = nn.Conv2d(dim, dim * 3, 1)
        self.proj = nn.Conv2d(dim, dim, 1)
        tokens = window * window
        self.pos_bias = nn.Parameter(torch.zeros(heads, tokens, tokens))
        nn.init.trunc_normal_(self.pos_bias, std=0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        ws, nh, nw = self.window, h // self.window, w // self.window
        if h % ws or w % ws:
            raise ValueError(f"feature map {h}x{w} is not a multiple of the window size {ws}")

        qkv = self.qkv(x).view(b, 3, self.heads, self.head_dim, nh, ws, nw, ws)
        qkv = qkv.permute(1, 0, 4, 6, 2, 5, 7, 3).reshape(3, -1, self.heads, ws * ws, self.head_dim)
        q, k, v = qkv.unbind(0)

        attn = bias_softmax((q * self.scale) @ k.transpose(-2, -1), self.pos_bias)
        out = (attn @ v).view(b, nh, nw, self.heads, ws, ws, self.head_dim)
        out = out.permute(0, 3, 6, 1, 4, 2, 5).reshape(b, c, h, w)
        return x + self.proj(out)


class UNet(nn.Module):
    def __init__(
        self,
        in_channels: int = 3,
        num_classes: int = 21,
        width: int = 32,
        depth: int = 4,
        attn_heads: int = 4,
        attn_window: int = 8,
    ):
        super().__init__()
        chans = [width * 2**i for i in range(depth + 1)]
        self.stem = ConvBlock(in_channels, chans[0])
        self.down = nn.ModuleList(ConvBlock(chans[i], chans[i + 1]) for i in range(depth))
        self.attn = WindowAttention(chans[-1], attn_heads, attn_window)
        self.up = nn.ModuleList(
            nn.ConvTranspose2d(chans[i + 1], chans[i], 2, stride=2) for i in reversed(range(depth))
        )
        self.dec = nn.ModuleList(ConvBlock(chans[i] * 2, chans[i]) for i in reversed(range(depth)))
        self.head = nn.Conv2d(chans[0], num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        x = self.stem(x)
        for down in self.down:
            skips.append(x)
            x = down(F.max_pool2d(x, 2))
        x = self.attn(x)
        for up, dec in zip(self.up, self.dec):
            x = dec(torch.cat([up(x), skips.pop()], dim=1))
        return self.head(x)


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
