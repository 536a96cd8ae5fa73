"""Helpers for tests and demos: tiny Hugging Face models built in-process, in seconds, offline.

>>> from nlibias.testing import build_tiny_nli_classifier  # doctest: +SKIP
"""

from nlibias.testing.tiny_models import DEFAULT_ID2LABEL as DEFAULT_ID2LABEL
from nlibias.testing.tiny_models import SPECIAL_TOKENS as SPECIAL_TOKENS
from nlibias.testing.tiny_models import bbnli_texts as bbnli_texts
from nlibias.testing.tiny_models import build_tiny_masked_lm as build_tiny_masked_lm
from nlibias.testing.tiny_models import build_tiny_nli_classifier as build_tiny_nli_classifier
from nlibias.testing.tiny_models import train_tiny_tokenizer as train_tiny_tokenizer
