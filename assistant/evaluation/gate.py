"""The CI gate: the minimum each gated backend (and the verifier) must reach, from
`eval/thresholds.toml`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import tomllib

from ..errors import SettingsError
from .metrics import METRIC_NAMES, cell
from .verifier import VERIFIER_METRICS

if TYPE_CHECKING:
    from .run import EvalReport

BACKEND = "backend"


@dataclass(frozen=True)
class Thresholds:
    """The minimum each gated backend must reach on each metric, and the verifier on the
    labelled answers."""

    backends: tuple[str, ...]
    minimum: dict[str, float]
    verifier: dict[str, float] = field(default_factory=dict)


def load_thresholds(path: Path) -> Thresholds:
    """Read `eval/thresholds.toml`: `backends = [...]`, a `[minimum]` table and a
    `[verifier]` table."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"cannot read the thresholds file {path}: {exc}") from None
    minimum = {name: float(value) for name, value in data.get("minimum", {}).items()}
    unknown = sorted(set(minimum) - set(METRIC_NAMES))
    if unknown:
        raise SettingsError(f"{path}: unknown metric(s) {', '.join(unknown)}")
    verifier = {name: float(value) for name, value in data.get("verifier", {}).items()}
    unknown = sorted(set(verifier) - set(VERIFIER_METRICS))
    if unknown:
        raise SettingsError(f"{path}: unknown verifier metric(s) {', '.join(unknown)}")
    return Thresholds(tuple(data.get("backends", ())), minimum, verifier)


def gate_failures(report: EvalReport, thresholds: Thresholds) -> list[str]:
    """One line per gated backend metric below its minimum (or not measured at all)."""
    failures = []
    for system in report.systems:
        if system.kind != BACKEND or system.name not in thresholds.backends:
            continue
        metrics = asdict(system.metrics)
        for metric, minimum in thresholds.minimum.items():
            value = metrics[metric]
            if value is None or value < minimum:
                failures.append(f"{system.name}: {metric} {cell(value)} < {minimum:g}")
    if report.verifier is not None:
        measured = report.verifier.metrics()
        for metric, minimum in thresholds.verifier.items():
            value = measured[metric]
            if value is None or value < minimum:
                failures.append(f"verifier: {metric} {cell(value)} < {minimum:g}")
    return failures
