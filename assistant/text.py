"""Sentence boundaries with character spans, shared by chunking and grounding."""

from __future__ import annotations

import os
from functools import cache
from importlib.util import find_spec
from pathlib import Path

# Punkt's English model misses abbreviations that are everywhere in abstracts.
_EXTRA_ABBREVIATIONS = {"e.g", "i.e", "fig", "figs", "eq", "eqs", "al", "vs", "cf", "etc", "approx"}
_EXTRA_ABBREVIATIONS |= {"resp", "sec", "tab", "viz", "w.r.t", "a.k.a", "incl", "no", "i.i.d"}

Span = tuple[int, int]


@cache
def _punkt():
    import nltk
    from nltk.tokenize.punkt import PunktTokenizer

    spec = find_spec("llama_index.core")
    if spec and spec.submodule_search_locations:
        bundled = Path(next(iter(spec.submodule_search_locations))) / "_static" / "nltk_cache"
        if "NLTK_DATA" not in os.environ and str(bundled) not in nltk.data.path:
            nltk.data.path.insert(0, str(bundled))
    tokenizer = PunktTokenizer("english")
    tokenizer._params.abbrev_types.update(_EXTRA_ABBREVIATIONS)
    return tokenizer


def sentence_spans(text: str) -> list[Span]:
    """Character spans `(start, end)` of the sentences of `text`, in order, whitespace excluded."""
    if not text.strip():
        return []
    return list(_punkt().span_tokenize(text))


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, each keeping its trailing whitespace, so that joining them
    gives `text` back (the contract llama-index's `SentenceSplitter` expects)."""
    spans = sentence_spans(text)
    if not spans:
        return [text] if text else []
    starts = [0] + [start for start, _ in spans[1:]]
    ends = [start for start, _ in spans[1:]] + [len(text)]
    return [text[start:end] for start, end in zip(starts, ends, strict=True)]


@cache
def _encoding():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    """Tokens of `text` as OpenAI's cl100k_base counts them (the chunk sizes use the same)."""
    return len(_encoding().encode(text, disallowed_special=()))
