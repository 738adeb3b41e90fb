"""Settings sources fed generated garbage: the result is valid settings that hold what the
sources said, or one `SettingsError` sentence (exit 1 and one stderr line from the CLI),
never a traceback and never a value ignored in silence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.errors import SettingsError
from assistant.settings import CONFIG_ENV, Settings, load_settings, setting_variables

# Valid assignments (section or None for top level, key, value); each one a plan uses is
# written to the TOML file, to CITEQA_SECTION__KEY or into a JSON CITEQA_SECTION object.
VALID = [
    ("retrieval", "k", 3),
    ("retrieval", "per_paper_cap", 1),
    ("chunking", "chunk_tokens", 128),
    ("llm", "backend", "extractive"),
    ("llm", "timeout", 7.5),
    ("llm", "deadline", 30.0),
    ("llm", "model", "llama3.1"),
    ("answer", "min_relevance", 0.5),
    ("ui", "port", 8080),
    ("judge", "model", "judge-model"),
    ("chroma", "host", "127.0.0.1"),
    (None, "max_question_chars", 500),
]
PLACES = ["toml", "env", "json"]

ENV_TEXT = st.text(
    st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=40
)
JSONISH = st.lists(
    st.sampled_from(["{", "}", "[", "]", '"', ":", ",", "1", "-2.5", "k", "null", "true", " "]),
    max_size=12,
).map("".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ENV_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ENV_TEXT, inner, max_size=3),
    max_leaves=8,
).map(json.dumps)
TOML_WORDS = [
    *["[retrieval]\n", "[llm]\n", "[judge]\n", "[nope]\n", "[[llm]]\n", "[", "]", " = ", "\n"],
    *["k", "backend", "modle", "data_dir", '"', "'''", "3", "-1", "1e999", "true", "#", "\t"],
    *["1979-05-27", "[1, 2]", "{a = 1}", "\\u0000", "é", "~nobody"],
]
TOML_PIECES = st.lists(st.sampled_from(TOML_WORDS), max_size=14).map("".join)
ENV_NAMES = st.one_of(
    st.sampled_from(sorted(setting_variables() - {CONFIG_ENV})),
    st.sampled_from(["CITEQA_RETRIEVALK", "CITEQA_LLM_BACKEND", "citeqa_ui__port", "CITEQA_"]),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789", min_size=1, max_size=12).map(
        "CITEQA_".__add__
    ),
)
CONFIG_PATHS = st.sampled_from(["", "missing.toml", ".", "/dev/null", "~nobody-here/x.toml"])


@dataclass
class Plan:
    """Settings to write into the sources, and garbage to add to them."""

    valid: list[tuple[tuple[str | None, str, object], str]]
    toml_text: str | None = None  # appended to the TOML file
    toml_bytes: bytes | None = None  # replaces the TOML file
    env: dict[str, str] = field(default_factory=dict)
    config: str | None = None  # CITEQA_CONFIG instead of the written file

    @property
    def garbage(self) -> bool:
        pieces = (self.toml_bytes, self.config)
        return bool(self.toml_text or self.env) or any(p is not None for p in pieces)

    @property
    def must_fail(self) -> bool:
        """An unknown CITEQA_* name, or a CITEQA_CONFIG that is not a file."""
        known = setting_variables()
        unknown = any(name.upper() not in known for name in self.env)
        return unknown or self.config in {"", "missing.toml", ".", "~nobody-here/x.toml"}

    def write(self, folder: Path) -> dict[str, str]:
        """Write the TOML file into `folder`; the CITEQA_* environment to run with."""
        env: dict[str, str] = {}
        tables: dict[str | None, list[str]] = {}
        objects: dict[str, dict] = {}
        for (section, key, value), place in self.valid:
            if place == "toml":
                tables.setdefault(section, []).append(f"{key} = {json.dumps(value)}")
            elif place == "json" and section is not None:
                objects.setdefault(section, {})[key] = value
            else:
                name = f"CITEQA_{section.upper()}__" if section else "CITEQA_"
                env[f"{name}{key.upper()}"] = str(value)
        env.update({f"CITEQA_{section.upper()}": json.dumps(o) for section, o in objects.items()})
        text = "\n".join(tables.pop(None, []))
        for section, lines in tables.items():
            text += f"\n[{section}]\n" + "\n".join(lines)
        path = folder / "citeqa.toml"
        if self.toml_bytes is not None:
            path.write_bytes(self.toml_bytes)
        else:
            path.write_text(text + "\n" + (self.toml_text or ""), encoding="utf-8")
        env[CONFIG_ENV] = str(path) if self.config is None else self.config
        return {**env, **self.env}

    def check(self, loaded: dict) -> None:
        """Without garbage, every valid assignment shows in the loaded settings."""
        if self.garbage:
            return
        for (section, key, value), _ in self.valid:
            assert (loaded[section] if section else loaded)[key] == value


@st.composite
def plans(draw) -> Plan:
    valid = draw(st.lists(st.sampled_from(VALID), unique_by=lambda a: (a[0], a[1]), max_size=5))
    plan = Plan([(assignment, draw(st.sampled_from(PLACES))) for assignment in valid])
    kind = draw(st.sampled_from(["none", "none", "toml", "bytes", "env", "env", "config"]))
    if kind == "toml":
        plan.toml_text = draw(TOML_PIECES | st.text(max_size=60))
    elif kind == "bytes":
        plan.toml_bytes = draw(st.binary(max_size=60))
    elif kind == "env":
        plan.env = draw(st.dictionaries(ENV_NAMES, ENV_TEXT | JSONISH | JSON_VALUES, max_size=3))
    elif kind == "config":
        plan.config = draw(CONFIG_PATHS | ENV_TEXT)
    return plan


def _one_sentence(message: str) -> None:
    assert message.strip() and "\n" not in message and "Traceback" not in message, message


def _without_citeqa(environ) -> dict[str, str]:
    return {k: v for k, v in environ.items() if not k.upper().startswith("CITEQA_")}


PROPERTY = settings(
    max_examples=250,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_garbage_in_any_source_gives_settings_or_one_sentence():
    outcomes: Counter[str] = Counter()

    @PROPERTY
    @given(plans())
    def load(plan: Plan) -> None:
        with tempfile.TemporaryDirectory() as folder:
            env = plan.write(Path(folder))
            with mock.patch.dict(os.environ, env, clear=True):
                try:
                    loaded = load_settings()
                except SettingsError as exc:
                    outcomes["error"] += 1
                    assert plan.garbage, f"valid plan refused: {exc}"
                    _one_sentence(str(exc))
                    return
        outcomes["valid"] += 1
        assert isinstance(loaded, Settings) and not plan.must_fail, plan
        plan.check(loaded.model_dump())

    load()
    assert outcomes["valid"] >= 50 and outcomes["error"] >= 50, outcomes


def test_garbage_through_the_cli_exits_1_with_one_line():
    outcomes: Counter[str] = Counter()

    @settings(PROPERTY, max_examples=16)
    @given(plans())
    def run(plan: Plan) -> None:
        with tempfile.TemporaryDirectory() as folder:
            env = {**_without_citeqa(os.environ), **plan.write(Path(folder))}
            result = subprocess.run(
                [sys.executable, "-m", "assistant", "config"],
                capture_output=True,
                text=True,
                env={**env, "PYTHONPATH": str(REPO)},
                cwd=folder,
                timeout=120,
            )
        assert "Traceback" not in result.stderr, result.stderr
        if result.returncode == 0:
            outcomes["valid"] += 1
            assert not plan.must_fail, plan
            plan.check(json.loads(result.stdout))
            return
        outcomes["error"] += 1
        assert result.returncode == 1 and result.stdout == "", result
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr

    run()
    assert outcomes["valid"] >= 3 and outcomes["error"] >= 3, outcomes


# ---- the cases found by hand, each one sentence naming the problem --------------------


def _load(env: dict[str, str], cwd: Path | None = None) -> Settings:
    with mock.patch.dict(os.environ, env, clear=True):
        if cwd is None:
            return load_settings()
        previous = Path.cwd()
        os.chdir(cwd)
        try:
            return load_settings()
        finally:
            os.chdir(previous)


@pytest.mark.parametrize(
    ("content", "env", "needle"),
    [
        (b"[llm]\nmodel = '\xe9t\xe9'\n", {}, "is not UTF-8 text"),
        (b"[judge]\nmodle = 'x'\n", {}, "setting 'judge.modle': Extra inputs"),
        (b"", {"CITEQA_LLM": "garbage{"}, "CITEQA_LLM is not a JSON object"),
        (b"", {"CITEQA_RETRIEVAL": "[" * 100_000}, "CITEQA_RETRIEVAL is not a JSON object"),
        (b"k = " + b"[" * 100_000, {}, "nests values too deeply"),
        (
            b"",
            {"CITEQA_RETRIEVALK": "3"},
            "unknown environment variable CITEQA_RETRIEVALK (did you mean CITEQA_RETRIEVAL__K?)",
        ),
        (
            b"",
            {"CITEQA_DATA_DIR": "/etc/passwd"},
            "'data_dir': cannot use the data directory /etc/passwd",
        ),
    ],
)
def test_each_source_problem_is_one_sentence(tmp_path, content, env, needle):
    path = tmp_path / "citeqa.toml"
    path.write_bytes(content)
    with pytest.raises(SettingsError) as caught:
        _load({CONFIG_ENV: str(path), **env})
    assert needle in str(caught.value)
    _one_sentence(str(caught.value))


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ("missing.toml", "missing.toml, which does not exist"),
        (".", "which is not a file"),
        ("", "set but empty"),
    ],
)
def test_citeqa_config_must_name_a_file(tmp_path, config, needle):
    with pytest.raises(SettingsError, match=needle):
        _load({CONFIG_ENV: config}, cwd=tmp_path)


def test_citeqa_config_may_be_dev_null():
    assert _load({CONFIG_ENV: os.devnull, "CITEQA_RETRIEVAL__K": "4"}).retrieval.k == 4


def test_without_citeqa_config_the_local_file_is_optional(tmp_path):
    assert _load({}, cwd=tmp_path).retrieval.k == 5
    (tmp_path / "citeqa.toml").write_text("[retrieval]\nk = 9\n")
    assert _load({}, cwd=tmp_path).retrieval.k == 9


def test_settings_built_directly_check_the_sources_too(tmp_path):
    with mock.patch.dict(os.environ, {"CITEQA_UI__PASWORD": "x"}), pytest.raises(SettingsError):
        Settings(data_dir=tmp_path)
