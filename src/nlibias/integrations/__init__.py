"""Bridges to the evaluation tools researchers already run: an lm-evaluation-harness task export,
Inspect AI tasks and model provider, and what they need offline; their logs come back through
``nlibias score``. The tools' packages are imported lazily.
"""
