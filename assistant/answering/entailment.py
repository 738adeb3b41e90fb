"""A small cross-encoder that reads a claim together with its evidence and says whether the
evidence entails it: the one signal here that sees word order and what a clause adds.

It is all-MiniLM-L6-v2's first four layers fine-tuned on synthetic pairs made from the
corpus abstracts (the seed papers left out): sentences reworded as answers reword them,
against the same sentences with a figure, an entity or the polarity changed, a claim added,
a hedge made absolute, or another paper's abstract as evidence (`tools/entailment_data.py`);
and on the labelled sentences of the tuning answer sets, paired with their evidence as the
verifier pairs them (`tools/labelled_pairs.py`, `tools/train_entailment.py`). It ships as an
int8 ONNX file, so it runs with onnxruntime and no torch. Trained here because no NLI model
with weights installs offline.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np

from ..embeddings import minilm_tokenizer, onnx_session

MODEL_FILE = Path(__file__).resolve().parent.parent / "resources" / "entailment_minilm_l4_int8.onnx"
# Claim and evidence together are cut to this many tokens, as in training.
MAX_TOKENS = 192


class EntailmentModel:
    """P(evidence entails claim) for (claim, evidence) pairs, deterministic and offline."""

    def __init__(self, model: Path = MODEL_FILE, threads: int = 2, batch_size: int = 8) -> None:
        self.model = model
        self.threads = threads
        self.batch_size = batch_size

    @cached_property
    def _session(self):
        return onnx_session(self.model, self.threads)

    @cached_property
    def _tokenizer(self):
        return minilm_tokenizer(MAX_TOKENS)

    def probabilities(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        """For each (claim, evidence), the probability that the evidence entails the claim;
        pairs of similar length are batched together."""
        out = np.empty(len(pairs), dtype=np.float32)
        order = np.argsort([len(claim) + len(evidence) for claim, evidence in pairs])
        for begin in range(0, len(pairs), self.batch_size):
            batch = order[begin : begin + self.batch_size]
            out[batch] = self._logits([pairs[i] for i in batch])
        return 1.0 / (1.0 + np.exp(-out))

    def _logits(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(pairs)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return self._session.run(["logits"], feeds)[0][:, 0]
