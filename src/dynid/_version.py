"""The package version, apart from ``dynid/__init__`` so that any module can name it."""

__version__ = "0.1.0"
