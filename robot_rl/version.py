"""robot_rl's version, in a module of its own: code that stamps it into a file imports this,
not the package, whose ``__init__`` registers the gymnasium ids."""

__version__ = "0.1.0"
