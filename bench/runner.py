"""Subprocesses: one benchmark worker per system, and cold `citeqa` command-line runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .corpora import REPO
from .stats import seconds

SYSTEMS = ("citeqa", "llama-index")
NO_CONFIG = os.devnull  # an empty configuration: defaults only


def clean_env(data_dir: Path | None = None) -> dict[str, str]:
    """This environment without any `CITEQA_*` setting or config file (defaults only),
    pointing at `data_dir` when given."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("CITEQA_")}
    env["CITEQA_CONFIG"] = NO_CONFIG
    if data_dir is not None:
        env["CITEQA_DATA_DIR"] = str(data_dir)
    return env


def _run(command: list[str], env: dict[str, str], log: Path) -> None:
    """Run `command` with its output in `log`; fail with the log's tail if it fails."""
    with log.open("w") as handle:
        done = subprocess.run(command, env=env, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-20:])
        raise RuntimeError(f"{' '.join(command[:4])} … exited {done.returncode}:\n{tail}")


def run_worker(task: str, system: str, workdir: Path, options: list[str]) -> dict:
    """Run `bench.worker` for one system in its own process and return its results."""
    out = workdir / f"{task}-{system}.json"
    command = [sys.executable, "-m", "bench.worker", task, system, str(workdir), str(out)]
    _run([*command, *options], clean_env(), workdir / f"{out.stem}.log")
    return json.loads(out.read_text())


def citeqa_command() -> list[str]:
    """The `citeqa` console script next to this Python, else `python -m assistant`."""
    script = Path(sys.executable).with_name("citeqa")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "assistant"]


def cold_seconds(args: list[str], data_dir: Path, runs: int) -> list[float]:
    """Wall seconds of `runs` fresh `citeqa ARGS` processes on the prepared `data_dir`."""
    env = clean_env(data_dir)
    log = data_dir.parent / "cold.log"
    return [seconds(lambda: _run([*citeqa_command(), *args], env, log)) for _ in range(runs)]
