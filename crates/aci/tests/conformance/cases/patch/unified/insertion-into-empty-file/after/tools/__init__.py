from .gen import gen
__all__ = ["gen"]
