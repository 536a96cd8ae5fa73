"""The version of nlibias, in a module that imports nothing, so every layer can read it."""

__version__ = "0.1.0"
