"""Synthetic entailment pairs from the corpus abstracts, for training the verifier's
cross-encoder (`tools/train_entailment.py`).

Every pair is (evidence, claim, label): the evidence is a window of one abstract's
sentences; the claim is one of them (or two fused) rewritten the way an answer writer
rewrites (reporting verbs, synonyms, a clause dropped, "It" for "Our method"). Label 1
when that is all; label 0 after one change a fluent but unfaithful answer makes (a number,
an entity, one word of a two-word term, the polarity, an added claim, a hedge made
absolute), or when the evidence is another paper's abstract. Positives and negatives
share the rewrites, so the model must look at the change, not the style. The seed papers
(the ones the evaluation sets ask about) are left out.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[$\\])")
WORD = re.compile(r"[A-Za-z][A-Za-z\-]+")
TERM_WORD = re.compile(r"[A-Za-z][a-z\-]{2,}")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*[A-Za-z])")
NAMEISH = re.compile(
    r"\b(?=[A-Za-z0-9\-]*[A-Z])(?=[A-Za-z0-9\-]*(?:[A-Z].*[A-Z]|\d))[A-Za-z][A-Za-z0-9\-]{1,}\b"
)
STOP = set(
    [
        "the",
        "a",
        "an",
        "of",
        "and",
        "or",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "as",
        "at",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "this",
        "that",
        "these",
        "those",
        "we",
        "our",
        "it",
        "its",
        "their",
        "they",
        "which",
        "such",
        "can",
        "may",
        "also",
        "than",
        "then",
        "into",
        "over",
        "under",
        "between",
        "using",
        "used",
        "use",
        "based",
        "via",
        "while",
        "both",
        "each",
        "more",
        "most",
        "other",
        "new",
        "two",
        "one",
    ]
)

SYNONYMS = {
    "propose": "introduce",
    "proposes": "introduces",
    "proposed": "introduced",
    "show": "demonstrate",
    "shows": "demonstrates",
    "showed": "demonstrated",
    "method": "approach",
    "methods": "approaches",
    "approach": "method",
    "significantly": "substantially",
    "improve": "enhance",
    "improves": "enhances",
    "improved": "enhanced",
    "reduce": "lower",
    "reduces": "lowers",
    "reduced": "lowered",
    "large": "big",
    "utilize": "use",
    "utilizes": "uses",
    "leverage": "exploit",
    "leverages": "exploits",
    "novel": "new",
    "achieve": "attain",
    "achieves": "attains",
    "demonstrate": "show",
    "demonstrates": "shows",
    "framework": "approach",
    "evaluate": "assess",
    "evaluated": "assessed",
    "enables": "allows",
    "enable": "allow",
    "requires": "needs",
    "require": "need",
    "results": "findings",
    "task": "problem",
    "obtain": "get",
    "obtains": "gets",
    "outperforms": "beats",
    "outperform": "beat",
    "performance": "results",
    "crucial": "key",
    "important": "key",
    "efficient": "economical",
    "address": "tackle",
    "addresses": "tackles",
    "capture": "model",
    "captures": "models",
    "various": "several",
    "numerous": "many",
    "extensive": "thorough",
    "however": "yet",
    "additionally": "also",
    "furthermore": "moreover",
    "remarkable": "notable",
    "substantial": "considerable",
    "superior": "better",
    "prior": "previous",
    "existing": "current",
    "datasets": "benchmarks",
    "consistently": "reliably",
}
OPPOSITES = [
    ("improves", "degrades"),
    ("improve", "degrade"),
    ("improved", "degraded"),
    ("outperforms", "underperforms"),
    ("outperform", "underperform"),
    ("increases", "decreases"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("reduces", "increases"),
    ("reduce", "increase"),
    ("reduced", "increased"),
    ("higher", "lower"),
    ("lower", "higher"),
    ("better", "worse"),
    ("faster", "slower"),
    ("more", "less"),
    ("fewer", "more"),
    ("larger", "smaller"),
    ("smaller", "larger"),
    ("without", "with"),
    ("robust", "brittle"),
    ("efficient", "inefficient"),
    ("stable", "unstable"),
    ("consistent", "inconsistent"),
    ("accurate", "inaccurate"),
    ("effective", "ineffective"),
    ("possible", "impossible"),
    ("necessary", "unnecessary"),
    ("strong", "weak"),
    ("positive", "negative"),
    ("upper", "lower"),
    ("maximize", "minimize"),
    ("minimizes", "maximizes"),
    ("benefits", "hurts"),
    ("helps", "hurts"),
    ("enables", "prevents"),
    ("preserves", "destroys"),
    ("mitigates", "exacerbates"),
    ("alleviates", "worsens"),
    ("surpasses", "trails"),
    ("superior", "inferior"),
    ("advantage", "disadvantage"),
]
AUXILIARIES = [
    (" is ", " is not "),
    (" are ", " are not "),
    (" can ", " cannot "),
    (" does ", " does not "),
    (" will ", " will not "),
    (" has ", " has not "),
    (" have ", " have not "),
    (" do ", " do not "),
]
ABSOLUTES = [
    (r"\bsome\b", "all"),
    (r"\bmany\b", "all"),
    (r"\bmost\b", "all"),
    (r"\boften\b", "always"),
    (r"\busually\b", "always"),
    (r"\btypically\b", "always"),
    (r"\bcan\b", "always"),
    (r"\bmay\b", "will always"),
    (r"\bseveral\b", "all"),
    (r"\bup to\s+", ""),
    (r"\b(?:nearly|almost|approximately|about|roughly)\s+", ""),
    (r"\bcompetitive\b", "state-of-the-art"),
    (r"\bcomparable\b", "superior"),
    (r"\bsimilar\b", "better"),
    (r"\ba few\b", "all"),
    (r"\bpartially\b", "fully"),
    (r"\bslightly\b", "dramatically"),
    (r"\bmodest\b", "large"),
    (r"\bcould\b", "will"),
    (r"\bmight\b", "will"),
    (r"\bpotentially\b", "certainly"),
    (r"\bsuggests?\b", "proves"),
    (r"\bin most cases\b", "in all cases"),
]
BROADER = [
    " on every benchmark",
    " across all tasks",
    " in all settings",
    " for any model",
    " on all datasets",
    " for every architecture",
    " in every case",
]
GROUPS = [
    [
        "accuracy",
        "precision",
        "recall",
        "F1",
        "AUC",
        "perplexity",
        "BLEU",
        "latency",
        "throughput",
        "memory",
        "robustness",
        "calibration",
    ],
    ["images", "videos", "text", "graphs", "molecules", "proteins", "speech", "audio", "code"],
    [
        "classification",
        "segmentation",
        "detection",
        "generation",
        "translation",
        "retrieval",
        "summarization",
        "regression",
        "clustering",
    ],
    ["transformers", "CNNs", "RNNs", "GNNs", "LLMs", "MLPs", "autoencoders"],
    ["supervised", "unsupervised", "self-supervised", "semi-supervised"],
    ["encoder", "decoder"],
    ["training", "inference"],
    ["pre-training", "fine-tuning"],
    ["local", "global"],
    ["offline", "online"],
    ["white-box", "black-box"],
    ["linear", "quadratic", "exponential", "logarithmic"],
    ["first-order", "second-order"],
    ["convex", "non-convex"],
    ["lower", "upper"],
    ["forward", "backward"],
    ["synthetic", "real-world"],
    ["small", "large"],
    ["sparse", "dense"],
    ["discrete", "continuous"],
    ["deterministic", "stochastic"],
    ["single", "multiple"],
    ["static", "dynamic"],
    ["shallow", "deep"],
]
ADDITIONS = [
    ", without any additional training",
    ", at no extra computational cost",
    ", and it is the first method to do so",
    ", while also halving the memory footprint",
    ", and it transfers to unseen domains",
    ", outperforming GPT-4",
    ", in real time",
    ", even on mobile devices",
    ", and the code is used in production",
    ", with theoretical convergence guarantees",
    ", using only unlabeled data",
    ", and it scales to billions of parameters",
    ", and human raters preferred it",
    ", which removes the need for hyperparameter tuning",
    ", across 20 languages",
    ", and it is robust to adversarial attacks",
    ", with a 2x speed-up at inference",
    ", and it was validated in a clinical trial",
    ", by distilling a larger teacher model",
    ", using reinforcement learning from human feedback",
]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if len(s.split()) >= 6]


def content(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(text) if w.lower() not in STOP and len(w) > 3}


def reword(sentence: str, rng: random.Random) -> str:
    """Rewrite a sentence as an answer would say it, keeping what it states."""
    s = sentence
    moves = rng.sample(["report", "synonyms", "drop", "it", "hedge", "keep"], k=2)
    for move in moves:
        if move == "report":
            s = re.sub(r"^In this (?:paper|work), we\b", "The authors", s)
            s = re.sub(r"^We\b", rng.choice(["The authors", "They", "The paper"]), s)
            s = re.sub(r"\bour\b", rng.choice(["their", "the"]), s)
            s = re.sub(r"\bwe\b", "they", s)
        elif move == "synonyms":
            words = s.split(" ")
            spots = [i for i, w in enumerate(words) if w.lower().strip(",.") in SYNONYMS]
            for i in rng.sample(spots, k=min(len(spots), rng.randint(1, 3))):
                bare = words[i].strip(",.")
                swap = SYNONYMS[bare.lower()]
                swap = swap.capitalize() if bare[0].isupper() else swap
                words[i] = words[i].replace(bare, swap)
            s = re.sub(r"\b([Aa])n? (?=[aeiou])", r"\1n ", " ".join(words))
            s = re.sub(r"\b([Aa])n (?=[^aeiou\s])", r"\1 ", s)
        elif move == "drop":
            cut = re.search(r",\s+(?:which|including|e\.g\.|such as|where|thereby)\b[^.]*", s)
            if cut and len(s[: cut.start()].split()) >= 7:
                s = s[: cut.start()] + "."
        elif move == "it":
            s = re.sub(r"^(?:Our|The proposed|This) (?:method|approach|framework|model)\b", "It", s)
        elif move == "hedge" and not s.startswith(("The authors", "They")):
            lead = rng.choice(
                ["The authors report that ", "Reportedly, ", "According to the paper, "]
            )
            s = lead + s[0].lower() + s[1:] if not s[:2].isupper() else lead + s
    return s


def fuse(first: str, second: str) -> str:
    tail = re.sub(r"^(?:We|In this paper, we)\b", "they", second)
    tail = tail[0].lower() + tail[1:] if not tail[:2].isupper() else tail
    return first.rstrip(". ") + ", and " + tail


def change_number(s: str, rng: random.Random) -> str | None:
    found = [m for m in NUMBER.finditer(s) if not re.fullmatch(r"(?:19|20)\d\d", m.group(1))]
    if not found:
        return None
    m = rng.choice(found)
    value = m.group(1)
    if "." in value:
        places = len(value.split(".")[1])
        new = f"{float(value) * rng.choice([0.5, 0.7, 1.3, 1.6, 2.0]):.{places}f}"
    else:
        n = int(value)
        new = str(
            rng.choice([n + 1, n * 2, max(n // 2, 1) if n > 2 else n + 2, n + rng.randint(2, 9)])
        )
    if new == value:
        return None
    return s[: m.start(1)] + new + s[m.end(1) :]


def change_entity(s: str, rng: random.Random, names: list[str]) -> str | None:
    options = []
    for group in GROUPS:
        for word in group:
            if re.search(rf"\b{re.escape(word)}\b", s):
                options.append((word, rng.choice([w for w in group if w != word])))
    own = [m.group(0) for m in NAMEISH.finditer(s) if m.start() > 0]
    options += [(name, rng.choice(names)) for name in own]
    options = [(a, b) for a, b in options if a != b]
    if not options:
        return None
    old, new = rng.choice(options)
    return re.sub(rf"\b{re.escape(old)}\b", new, s, count=1)


def term_pairs(abstracts: list[str], min_count: int = 5) -> dict[str, dict[str, list[str]]]:
    """The corpus's recurring two-word terms ('ridge regression', 'sample covariance'),
    indexed both ways: `after['ridge']` lists the words seen after 'ridge', `before`
    the words seen before a word."""
    counts: Counter[tuple[str, str]] = Counter()
    for abstract in abstracts:
        words = TERM_WORD.findall(abstract.lower())
        counts.update(
            (x, y) for x, y in itertools.pairwise(words) if x not in STOP and y not in STOP
        )
    indexed: dict[str, dict[str, list[str]]] = {"after": {}, "before": {}}
    for (x, y), count in counts.items():
        if count >= min_count and x != y:
            indexed["after"].setdefault(x, []).append(y)
            indexed["before"].setdefault(y, []).append(x)
    return indexed


def change_term(
    s: str, rng: random.Random, terms: dict[str, dict[str, list[str]]], evidence: str
) -> str | None:
    """One word of a two-word term swapped for a word the corpus uses in the same place and
    the evidence does not use ('sample covariance' -> 'population covariance', 'partial
    homogeneity' -> 'partial convexity'): the plausible wrong term a writer slips in."""
    known = set(TERM_WORD.findall(evidence.lower()))
    found = list(TERM_WORD.finditer(s))
    options = []
    for first, second in itertools.pairwise(found):
        x, y = first.group(0).lower(), second.group(0).lower()
        if x in STOP or y in STOP or s[first.end() : second.start()] != " ":
            continue
        options += [(second, w) for w in terms["after"].get(x, []) if w not in known]
        options += [(first, w) for w in terms["before"].get(y, []) if w not in known]
    if not options:
        return None
    match, word = rng.choice(options)
    return s[: match.start()] + word + s[match.end() :]


def flip(s: str, rng: random.Random) -> str | None:
    options = [(rf"\b{a}\b", b) for a, b in OPPOSITES if re.search(rf"\b{a}\b", s)]
    options += [(re.escape(a), b) for a, b in AUXILIARIES if a in s]
    if " not " in s:
        options.append((r" not ", " "))
    if not options:
        return None
    pattern, new = rng.choice(options)
    return re.sub(pattern, new, s, count=1)


def overgeneralise(s: str, rng: random.Random) -> str | None:
    options = [(p, b) for p, b in ABSOLUTES if re.search(p, s)]
    if options:
        pattern, new = rng.choice(options)
        return re.sub(pattern, new, s, count=1)
    return s.rstrip(". ") + rng.choice(BROADER) + "."


def add_claim(s: str, rng: random.Random, other: list[str]) -> str:
    if other and rng.random() < 0.5:
        clause = rng.choice(other).rstrip(". ")
        clause = re.sub(r"^(?:We|In this paper, we)\b", "they", clause)
        clause = clause[0].lower() + clause[1:] if not clause[:2].isupper() else clause
        words = clause.split()
        return s.rstrip(". ") + ", and " + " ".join(words[:16]) + "."
    return s.rstrip(". ") + rng.choice(ADDITIONS) + "."


def window(sents: list[str], used: list[int], rng: random.Random) -> str:
    """The evidence: the used sentences and up to two neighbours, in abstract order;
    sometimes the whole abstract."""
    if rng.random() < 0.15:
        return " ".join(sents)
    extra = [i for i in range(len(sents)) if i not in used]
    chosen = sorted(set(used) | set(rng.sample(extra, k=min(len(extra), rng.randint(0, 2)))))
    return " ".join(sents[i] for i in chosen)


KINDS = [
    "number",
    "entity",
    "term",
    "negation",
    "addition",
    "overgeneralisation",
    "citation",
    "missing",
]


def unfaithful(
    claim: str,
    sents: list[str],
    used: list[int],
    near: list[str],
    names: list[str],
    terms: dict[str, dict[str, list[str]]],
    rng: random.Random,
) -> tuple[str, str, str]:
    """One unfaithful (claim, kind, evidence): kinds in random order (a figure first when
    the claim has one, since few do), the first that applies."""
    kinds = rng.sample(KINDS, k=len(KINDS))
    if change_number(claim, rng) and rng.random() < 0.5:
        kinds.insert(0, "number")
    evidence = window(sents, used, rng)
    for kind in kinds:
        if kind == "citation":
            return claim, kind, window(near, [rng.randrange(len(near))], rng)
        if kind == "missing":
            rest = [j for j in range(len(sents)) if j not in used]
            return (
                claim,
                kind,
                " ".join(sents[j] for j in sorted(rng.sample(rest, k=min(3, len(rest))))),
            )
        changed = {
            "number": lambda: change_number(claim, rng),
            "entity": lambda: change_entity(claim, rng, names),
            "term": lambda: change_term(claim, rng, terms, evidence),
            "negation": lambda: flip(claim, rng),
            "addition": lambda: add_claim(claim, rng, near),
            "overgeneralisation": lambda: overgeneralise(claim, rng),
        }[kind]()
        if changed and changed != claim:
            return changed, kind, evidence
    return claim, "citation", window(near, [0], rng)


def pairs(abstracts: list[str], seed: int = 13) -> Iterator[dict]:
    rng = random.Random(seed)
    split = [sentences(a) for a in abstracts]
    words = [content(a) for a in abstracts]
    names = sorted({m.group(0) for a in abstracts for m in NAMEISH.finditer(a)})
    terms = term_pairs(abstracts)
    for k, sents in enumerate(split):
        if len(sents) < 3:
            continue
        sample = rng.sample(range(len(split)), 200)
        near = max(
            (j for j in sample if j != k and len(split[j]) >= 3),
            key=lambda j: len(words[k] & words[j]),
        )
        for _ in range(6):
            i = rng.randrange(len(sents))
            used = [i]
            claim = reword(sents[i], rng)
            if rng.random() < 0.2 and i + 1 < len(sents):
                used = [i, i + 1]
                claim = fuse(claim, sents[i + 1])
            evidence = window(sents, used, rng)
            if rng.random() < 0.5:
                yield {"evidence": evidence, "claim": claim, "label": 1, "kind": "faithful"}
                continue
            changed, kind, evidence = unfaithful(claim, sents, used, split[near], names, terms, rng)
            yield {"evidence": evidence, "claim": changed, "label": 0, "kind": kind}


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="../shared/corpus/abstracts_2024.jsonl")
    parser.add_argument("--seeds", default="seeds/seed_metadata.jsonl")
    parser.add_argument("--out", default="/tmp/entailment_pairs.jsonl")
    args = parser.parse_args()
    starts = {
        json.loads(line)["abstract_start"][:60]
        for line in Path(args.seeds).read_text().splitlines()
    }
    abstracts = [
        row["abstract"]
        for row in map(json.loads, Path(args.corpus).read_text().splitlines())
        if row.get("abstract") and row["abstract"][:60] not in starts
    ]
    with Path(args.out).open("w") as out:
        count = 0
        for pair in pairs(abstracts):
            out.write(json.dumps(pair) + "\n")
            count += 1
    print(f"{len(abstracts)} abstracts, {count} pairs -> {args.out}")


if __name__ == "__main__":
    main()
