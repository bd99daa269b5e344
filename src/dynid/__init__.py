"""dynid: dynamic identification of robot manipulators."""

__version__ = "0.1.0"
