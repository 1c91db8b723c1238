"""Reporters: one module per output format, each `render(result, ...) -> str` or printing."""
