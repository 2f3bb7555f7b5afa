"""The product knows nothing of its benchmark: no suite task id or task wording in `agentui/`."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "agentui"


def _texts() -> list[Path]:
    """The package's code and the prompts it sends (agentui/roles/prompts/*.md)."""
    return sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.md")])


def _suites() -> list[dict]:
    tasks: list[dict] = []
    for path in sorted((REPO / "benchmarks").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, list) and all(isinstance(t, dict) and "id" in t and "description" in t for t in doc):
            tasks.extend(doc)
    return tasks


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def test_no_suite_task_id_or_wording_in_the_package():
    tasks = _suites()
    assert len(tasks) >= 30, "the suites are read"
    sources = {p: p.read_text(encoding="utf-8") for p in _texts()}
    flat = {p: _flat(s) for p, s in sources.items()}
    hits = []
    for t in tasks:
        tid = t["id"]
        if "-" in tid:  # one-word ids ("uppercase") are ordinary words
            pat = re.compile(r"(?<![\w-])" + re.escape(tid) + r"(?![\w-])")
            hits += [f"{p.relative_to(REPO)}: id {tid}" for p, s in sources.items() if pat.search(s)]
        words = _flat(t["description"])
        hits += [f"{p.relative_to(REPO)}: the wording of {tid}" for p, s in flat.items() if words in s]
    assert hits == []


def test_comments_carry_no_issue_numbers_or_model_anecdotes():
    """A comment says what the code does and why, in the present tense; the story of a failure
    (an issue number, a model's size, a commit) belongs in the commit message."""
    pat = re.compile(r"#\d{1,3}\b|\b[0-9.]+B model\b|\b[01]\.5B\b|\boutside tester")
    hits = [f"{p.relative_to(REPO)}:{i}: {line.strip()[:100]}"
            for p in _texts()
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pat.search(line)]
    assert hits == []
