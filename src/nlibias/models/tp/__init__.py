"""Sentence scorers for token-probability (TP) bias: masked-LM pseudo-log-likelihood, causal-LM
log-likelihood (in-process Hugging Face models, GGUF and the embedded SmolLM2 included) and
OpenAI-compatible servers that return prompt log-probabilities (``echo`` + ``logprobs``)."""
