"""Sentence scorers for token-probability (TP) bias: masked and causal LMs in process, and
OpenAI-compatible servers that echo prompt log-probabilities."""
