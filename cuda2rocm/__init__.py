"""cuda2rocm: find and fix what breaks when a PyTorch project moves to ROCm."""

__version__ = "0.1.0"
