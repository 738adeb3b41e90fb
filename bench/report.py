"""Turn the raw results into table rows, each citeqa figure next to its baseline and target."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rich.console import Console
from rich.table import Table

from .stats import median

NONE = "—"
INGEST_RATE = 15.0  # abstracts/s
REINGEST_S = 5.0
SEARCH_P50_MS = 50.0
COLD_SEARCH_S = 3.0
ASK_P50_MS = {"extractive": 300.0, "local": 3000.0}
COLD_ASK_S = 3.0
VERIFY_P50_MS = 150.0
FORMAT_RATIO = 1.10  # BibTeX ingest time / JSONL ingest time, same corpus


@dataclass(frozen=True)
class Target:
    """What a figure should be, and whether it is."""

    goal: str
    passed: bool


@dataclass(frozen=True)
class Row:
    """One metric: citeqa's figure, the baseline's (if any) and citeqa's target (if any)."""

    metric: str
    ours: str
    baseline: str = NONE
    target: Target | None = None


def _ingest(papers: int, took: float) -> str:
    return f"{took:.1f} s ({papers / took:.1f} abstracts/s)"


def _reingest(figures: dict) -> str:
    return f"{figures['seconds']:.2f} s, {figures['embedded_texts']} texts embedded"


def _p50_p95(figures: dict) -> str:
    return f"{figures['p50_ms']:.1f} / {figures['p95_ms']:.1f} ms"


def _cold(samples: list[float]) -> str:
    return f"{median(samples):.2f} s (runs: {', '.join(f'{s:.2f}' for s in samples)})"


def ingest_rows(ours: dict, base: dict) -> list[Row]:
    """Ingest times (the rate target on the 5,564 abstracts, or on the seeds with --quick)."""
    seeds = ours["seed_papers"]
    runs = len(ours["seeds_ingest_s"])
    seed_s, base_seed_s = median(ours["seeds_ingest_s"]), median(base["seeds_ingest_s"])
    big = "abstracts_ingest_s" in ours
    rows = [
        Row(
            f"ingest {seeds} seeds (median of {runs}, fresh dirs)",
            _ingest(seeds, seed_s),
            _ingest(seeds, base_seed_s),
            None if big else Target(f"≥ {INGEST_RATE:g}/s", seeds / seed_s >= INGEST_RATE),
        )
    ]
    if big:
        papers, took = ours["abstracts_papers"], ours["abstracts_ingest_s"]
        rows.append(
            Row(
                f"ingest {papers:,} abstracts (1 run)",
                _ingest(papers, took),
                _ingest(papers, base["abstracts_ingest_s"]),
                Target(f"≥ {INGEST_RATE:g}/s", papers / took >= INGEST_RATE),
            )
        )
    return rows


def reingest_rows(ours: dict, base: dict) -> list[Row]:
    """Unchanged re-ingest: fast, and nothing embedded."""
    return [
        Row(
            f"re-ingest unchanged {label}",
            _reingest(ours[key]),
            _reingest(base[key]),
            Target(
                f"< {REINGEST_S:g} s, 0 embedded",
                ours[key]["seconds"] < REINGEST_S and ours[key]["embedded_texts"] == 0,
            ),
        )
        for key, label in (("seeds_reingest", "seeds"), ("abstracts_reingest", "5,564"))
        if key in ours
    ]


def recall_rows(ours: dict, base: dict) -> list[Row]:
    """Paper-level recall on the dev set; hybrid recall@1 must beat the baseline's."""
    baseline = base["recall"]["llama-index"]
    rows = []
    for name in ("recall@1", "recall@5"):
        for label, scores in ours["recall"].items():
            target = None
            if label == "citeqa hybrid" and name == "recall@1":
                target = Target("> baseline", scores[name] > baseline[name])
            rows.append(
                Row(
                    f"{name} ({label}, seeds)",
                    f"{scores[name]:.3f}",
                    f"{baseline[name]:.3f}",
                    target,
                )
            )
    return rows


def latency_rows(ours: dict, base: dict) -> list[Row]:
    """Warm search latency; the hybrid p50 target applies."""
    baseline = _p50_p95(base["latency"]["llama-index"])
    rows = []
    for label, figures in ours["latency"].items():
        target = None
        if label == "citeqa hybrid":
            target = Target(f"p50 ≤ {SEARCH_P50_MS:g} ms", figures["p50_ms"] <= SEARCH_P50_MS)
        metric = f"warm search p50 / p95 ({label}, {ours['latency_index']}, n={figures['n']})"
        rows.append(Row(metric, _p50_p95(figures), baseline, target))
    return rows


def retrieval_rows(part: dict) -> list[Row]:
    """Every retrieval row, citeqa against the default `VectorStoreIndex`."""
    ours, base = part["citeqa"], part["llama-index"]
    cold = part["cold"]["search"]
    return [
        *ingest_rows(ours, base),
        *reingest_rows(ours, base),
        *recall_rows(ours, base),
        *latency_rows(ours, base),
        Row(
            "peak RSS (whole worker process)",
            f"{ours['peak_rss_mb']:.0f} MiB",
            f"{base['peak_rss_mb']:.0f} MiB",
        ),
        Row(
            f"cold `citeqa search` ({ours['latency_index']}, median of {len(cold)})",
            _cold(cold),
            target=Target(f"≤ {COLD_SEARCH_S:g} s", median(cold) <= COLD_SEARCH_S),
        ),
        load_row(ours, base),
    ]


def answer_rows(part: dict) -> list[Row]:
    """Every answer row, citeqa's backends against `CitationQueryEngine` on the same model."""
    ours, base = part["citeqa"], part["llama-index"]
    base_figures = next(iter(base["latency"].values()))
    rows = []
    for label, figures in ours["latency"].items():
        backend = label.removeprefix("citeqa ")
        goal = ASK_P50_MS[backend]
        rows.append(
            Row(
                f"warm ask p50 / p95 ({backend}, seeds, n={figures['n']})",
                _p50_p95(figures),
                _p50_p95(base_figures) if backend == "local" else NONE,
                Target(f"p50 ≤ {goal:g} ms", figures["p50_ms"] <= goal),
            )
        )
        rows.append(
            Row(
                f"outcomes ({backend})",
                _outcomes(figures),
                _outcomes(base_figures) if backend == "local" else NONE,
            )
        )
    rows.append(
        Row("local model decode speed (median of 3)", f"{ours['tokens_per_second']:.1f} tok/s")
    )
    for label, samples in part["cold"].items():
        rows.append(
            Row(
                f"cold citeqa {label} (median of {len(samples)})",
                _cold(samples),
                target=Target(f"≤ {COLD_ASK_S:g} s", median(samples) <= COLD_ASK_S),
            )
        )
    rows.append(load_row(ours, base))
    return rows


def _runs(samples: list[float]) -> str:
    shown = ", ".join(f"{s:.1f}" for s in samples)
    return f"{median(samples):.1f} s" + (f" (runs: {shown})" if len(samples) > 1 else "")


def format_rows(part: dict) -> list[Row]:
    """BibTeX against JSONL: parse time, full ingest (the ratio target), texts embedded."""
    parse, ingest, texts = part["parse_s"], part["ingest_s"], part["embedded_texts"]
    papers = part["papers"]["bibtex"]
    ratio = median(ingest["bibtex"]) / median(ingest["jsonl"])
    return [
        Row(
            f"papers read ({part['bib_bytes'] / 1e6:.1f} MB .bib)",
            str(papers),
            str(part["papers"]["jsonl"]),
        ),
        Row(
            f"parse only (median of {len(parse['bibtex'])})",
            _runs(parse["bibtex"]),
            _runs(parse["jsonl"]),
        ),
        Row(
            f"ingest {papers:,} abstracts, fresh index (median of {len(ingest['bibtex'])})",
            _runs(ingest["bibtex"]),
            _runs(ingest["jsonl"]),
        ),
        Row(
            "ingest time, BibTeX / JSONL",
            f"{ratio:.3f}",
            target=Target(f"≤ {FORMAT_RATIO:.2f}", ratio <= FORMAT_RATIO),
        ),
        Row("texts embedded", str(texts["bibtex"][0]), str(texts["jsonl"][0])),
        Row("peak RSS (whole worker process)", f"{part['peak_rss_mb']:.0f} MiB"),
        Row(
            "load average (1 min), worker start → end", f"{part['load_start']} → {part['load_end']}"
        ),
    ]


def load_row(ours: dict, base: dict) -> Row:
    """The 1-minute load average while each worker ran: the machine is shared."""
    return Row(
        "load average (1 min), worker start → end",
        f"{ours['load_start']} → {ours['load_end']}",
        f"{base['load_start']} → {base['load_end']}",
    )


def _outcomes(figures: dict) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(figures["outcomes"].items()))


def targets(rows: list[Row]) -> list[dict]:
    """The targets of `rows`, for the JSON file."""
    return [
        {"metric": row.metric, "value": row.ours, **asdict(row.target)}
        for row in rows
        if row.target is not None
    ]


def print_table(
    console: Console, title: str, baseline: str, rows: list[Row], ours: str = "citeqa"
) -> None:
    """One compact table: metric, ours (citeqa), baseline, target, PASS/FAIL."""
    table = Table(title=title, title_justify="left", show_lines=False)
    for name in ("metric", ours, baseline, "target", ""):
        table.add_column(name, overflow="fold")
    for row in rows:
        status = ""
        if row.target is not None:
            status = "[green]PASS[/]" if row.target.passed else "[red]FAIL[/]"
        goal = row.target.goal if row.target else ""
        table.add_row(row.metric, row.ours, row.baseline, goal, status)
    console.print(table)


def verify_rows(part: dict) -> list[Row]:
    """Verification of new answers, and extractive answers to distinct questions."""
    verify, extractive = part["verify"], part["extractive_distinct"]
    return [
        Row(
            f"verify a new 3-4 sentence answer against 5 abstracts (n={verify['n']})",
            _p50_p95(verify),
            target=Target(f"p50 ≤ {VERIFY_P50_MS:g} ms", verify["p50_ms"] <= VERIFY_P50_MS),
        ),
        *(
            [Row(f"prepared while the backend writes (n={prepare['n']})", _p50_p95(prepare))]
            if (prepare := part.get("prepare"))
            else []
        ),
        Row(
            f"extractive answer, each dev question once (n={extractive['n']})",
            _p50_p95(extractive),
            target=Target(
                f"p50 ≤ {ASK_P50_MS['extractive']:g} ms",
                extractive["p50_ms"] <= ASK_P50_MS["extractive"],
            ),
        ),
    ]
