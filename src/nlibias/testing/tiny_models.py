"""Tiny Hugging Face models built in-process (random seeded weights, real everything else).

>>> from nlibias.testing import bbnli_texts, build_tiny_nli_classifier  # doctest: +SKIP
>>> path = build_tiny_nli_classifier("/tmp/tiny-nli", bbnli_texts())     # doctest: +SKIP
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from annotated_types import Gt

from nlibias.errors import DataNotFoundError
from nlibias.schema.declared import PathArg, declared
from nlibias.textio.env_paths import env_path

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

#: Special tokens of every tiny tokenizer, in id order ([PAD] is id 0).
SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
VocabSize = Annotated[int, Gt(len(SPECIAL_TOKENS))]
"""A tiny tokenizer's vocabulary: room for one token besides the special ones."""

#: The label order of the ynie NLI checkpoints, the default of the tiny classifiers.
DEFAULT_ID2LABEL: dict[int, str] = {0: "entailment", 1: "neutral", 2: "contradiction"}

#: Size of the tiny transformers (BERT layout).
TINY_LAYERS = 2
TINY_HIDDEN = 32
TINY_HEADS = 2
TINY_INTERMEDIATE = 64
TINY_MAX_LENGTH = 512
#: Weight init std of the tiny classifiers: large, so that probabilities vary with the input.
TINY_CLASSIFIER_INIT_STD = 0.5

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def bbnli_texts(data_dir: str | Path | None = None) -> list[str]:
    """Sentences of the BBNLI source files (default ``$NLIBIAS_DATA_DIR``) to train a vocabulary
    on: each template rendered once per word of its longest placeholder list.

    >>> texts = bbnli_texts()                    # doctest: +SKIP
    >>> any("{{" in text for text in texts)      # doctest: +SKIP
    False
    """
    root = _bbnli_dir(data_dir)
    files = sorted(root.glob("*/*.json"))
    if not files:
        raise DataNotFoundError(
            f"no BBNLI JSON files under {root} (expected bbnli/<domain>/<subtopic>.json; "
            "point NLIBIAS_DATA_DIR at the data directory that holds bbnli/)"
        )
    texts: dict[str, None] = {}
    for path in files:
        record = json.loads(path.read_text(encoding="utf-8"))
        words: dict[str, list[str]] = {k: [str(w) for w in v] for k, v in record.get("data", {}).items()}
        for group in ("GROUP1", "GROUP2"):
            if record.get(group):
                words[group] = [str(w) for w in record[group]]
        templates = list(record.get("premise", []))
        for key in ("test_hypothesis", "bias_hypothesis_stereotypical"):
            templates.extend(item[0] for item in record.get(key, []))
        rounds = max((len(v) for v in words.values() if v), default=1)
        for template in templates:
            for k in range(rounds):
                texts.setdefault(_render(template, words, k), None)
    return list(texts)


def _bbnli_dir(data_dir: str | Path | None) -> Path:
    if data_dir is None:
        env = env_path("NLIBIAS_DATA_DIR")
        if env is None:
            raise DataNotFoundError(
                "no BBNLI data directory: pass data_dir or set NLIBIAS_DATA_DIR to the directory "
                "that holds bbnli/<domain>/<subtopic>.json"
            )
        data_dir = env
    root = Path(data_dir)
    return root / "bbnli" if (root / "bbnli").is_dir() else root


def _render(template: str, words: Mapping[str, list[str]], k: int) -> str:
    def fill(match: re.Match[str]) -> str:
        options = words.get(match.group(1))
        return options[k % len(options)] if options else ""

    return _PLACEHOLDER.sub(fill, template)


def _word_counts(texts: Iterable[str]) -> Counter[str]:
    from tokenizers import normalizers, pre_tokenizers

    normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    return counts


def _wordpiece_vocab(texts: Iterable[str], vocab_size: int) -> dict[str, int]:
    """Specials, every character (alone and as ``##`` continuation), frequent words, then ``##``
    suffixes of the rest (an eighth of the room); ties alphabetical, so deterministic."""
    counts = _word_counts(texts)
    chars = sorted({char for word in counts for char in word})
    vocab: dict[str, None] = dict.fromkeys([*SPECIAL_TOKENS, *chars, *(f"##{c}" for c in chars)])
    room = max(0, vocab_size - len(vocab))
    word_room = room - room // 8
    ranked = sorted((w for w in counts if len(w) > 1), key=lambda w: (-counts[w], w))
    kept, left_out = ranked[:word_room], ranked[word_room:]
    vocab.update(dict.fromkeys(kept))
    suffixes: Counter[str] = Counter()
    for word in left_out:
        for size in (2, 3, 4):
            if len(word) > size:
                suffixes[f"##{word[-size:]}"] += counts[word]
    room = max(0, vocab_size - len(vocab))
    vocab.update(dict.fromkeys(sorted(suffixes, key=lambda s: (-suffixes[s], s))[:room]))
    return {token: i for i, token in enumerate(vocab)}


@declared
def train_tiny_tokenizer(
    texts: Iterable[str],
    vocab_size: VocabSize = 1024,
    *,
    model_max_length: int = TINY_MAX_LENGTH,
    token_type_ids: bool = True,
) -> PreTrainedTokenizerBase:
    """A cased BERT-style WordPiece fast tokenizer whose vocabulary comes from ``texts``
    (``token_type_ids=False``: RoBERTa's pair layout)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = _wordpiece_vocab(texts, vocab_size)
    backend = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    backend.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls_sep = [("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    pair = "[CLS] $A:0 [SEP]:0 $B:1 [SEP]:1" if token_type_ids else "[CLS] $A [SEP] [SEP] $B [SEP]"
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair=pair, special_tokens=cls_sep
    )
    backend.decoder = decoders.WordPiece()
    specials: dict[str, Any] = {
        "unk_token": "[UNK]",
        "pad_token": "[PAD]",
        "cls_token": "[CLS]",
        "sep_token": "[SEP]",
        "mask_token": "[MASK]",
        "model_max_length": model_max_length,
    }
    if token_type_ids:
        import transformers

        # BertTokenizerFast: the fast BERT tokenizer in transformers 4, an alias of BertTokenizer in 5
        bert_fast: Any = getattr(transformers, "BertTokenizerFast")  # noqa: B009 (lazy alias)
        return bert_fast(tokenizer_object=backend, do_lower_case=False, **specials)
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=backend, model_input_names=["input_ids", "attention_mask"], **specials
    )


@declared
def build_tiny_nli_classifier(
    out_dir: PathArg,
    texts: Iterable[str],
    *,
    id2label: Mapping[int, str] | None = None,
    seed: int = 0,
    arch: Literal["bert", "roberta"] = "bert",
    vocab_size: VocabSize = 1024,
    init_std: float = TINY_CLASSIFIER_INIT_STD,
) -> Path:
    """Save a tiny sequence-classification checkpoint to ``out_dir``, random weights from ``seed``
    (the caller's torch RNG untouched); a model to fine-tune trains better with ``init_std=0.02``.

    >>> path = build_tiny_nli_classifier("/tmp/tiny-nli", ["Men are rational."])  # doctest: +SKIP
    """
    import torch

    labels = dict(DEFAULT_ID2LABEL if id2label is None else id2label)
    tokenizer = train_tiny_tokenizer(texts, vocab_size, token_type_ids=(arch == "bert"))
    common = _tiny_sizes(tokenizer) | {
        "id2label": {int(k): str(v) for k, v in labels.items()},
        "label2id": {str(v): int(k) for k, v in labels.items()},
        "initializer_range": init_std,
    }
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        if arch == "bert":
            from transformers import BertConfig, BertForSequenceClassification

            config: Any = BertConfig(max_position_embeddings=TINY_MAX_LENGTH, **common)
            model: Any = BertForSequenceClassification(config)
        else:
            from transformers import RobertaConfig, RobertaForSequenceClassification

            config = RobertaConfig(
                max_position_embeddings=TINY_MAX_LENGTH + tokenizer.pad_token_id + 1,
                type_vocab_size=1,
                bos_token_id=tokenizer.cls_token_id,
                eos_token_id=tokenizer.sep_token_id,
                **common,
            )
            model = RobertaForSequenceClassification(config)
    return save_model(model, tokenizer, out_dir)


@declared
def build_tiny_masked_lm(
    out_dir: PathArg, texts: Iterable[str], *, seed: int = 0, vocab_size: VocabSize = 1024
) -> Path:
    """Save a tiny BERT masked LM (same sizes and tokenizer kind, ``[MASK]`` included) to ``out_dir``.

    >>> path = build_tiny_masked_lm("/tmp/tiny-mlm", ["Men are rational."])  # doctest: +SKIP
    """
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = train_tiny_tokenizer(texts, vocab_size)
    config = BertConfig(max_position_embeddings=TINY_MAX_LENGTH, **_tiny_sizes(tokenizer))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertForMaskedLM(config)
    return save_model(model, tokenizer, out_dir)


def _tiny_sizes(tokenizer: PreTrainedTokenizerBase) -> dict[str, Any]:
    """The config sizes every tiny transformer shares (BERT layout)."""
    return {
        "vocab_size": len(tokenizer), "hidden_size": TINY_HIDDEN, "num_hidden_layers": TINY_LAYERS,
        "num_attention_heads": TINY_HEADS, "intermediate_size": TINY_INTERMEDIATE,
        "pad_token_id": tokenizer.pad_token_id,
    }  # fmt: skip


def save_model(model: Any, tokenizer: PreTrainedTokenizerBase, out_dir: str | Path) -> Path:
    """Save a model (in eval mode) and its tokenizer to ``out_dir``, created if needed."""
    path = Path(out_dir)
    path.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
