"""R1's scope is kept only where the user named it or the workspace has it (#13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentui.roles.perceiver import grounded_scope


@pytest.mark.parametrize(("scope", "said", "kept"), [
    # uppercase over HTTP: the prompt's field help and its example's "docs", not the user's words
    ("files/folders/docs/in.txt, docs/out.txt",
     "Write the contents of in.txt converted to upper case into a new file out.txt.", None),
    ("files/folders/your_documents_folder_here/numbers.txt, sum.txt",
     "Write the numbers 1 to 10 into numbers.txt, then write their sum into sum.txt.", "sum.txt"),
    ("current directory", "Create a file hello.txt containing exactly the text: Hello, world", None),
    ("src/app, tests, src/app/__init__.py",
     "Create the folders src/app and tests, and an empty file src/app/__init__.py.",
     "src/app, tests, src/app/__init__.py"),
    ("reports folder", "How many files are in the reports folder?", "reports folder"),
    ("Numbers.TXT", "What is the sum of the numbers in numbers.txt?", "Numbers.TXT"),
    ("data", "How many files are directly inside this folder?", "data"),  # the workspace has it
    ("data/a.csv", "Sum the first column", "data/a.csv"),  # so does this file
    ("../outside", "Tidy up", None),  # not the user's words, and outside the workspace
    ("null", "anything", None),
    # corpus 9: "/" is inside "docs/a.txt" and ".." inside "...", but the user typed neither
    ("/", "Copy docs/a.txt to docs/b.txt", None),
    ("..", "Count the files here... then report", None),
    ("docs", "Count the files in docs.", "docs"),
])
def test_a_scope_is_kept_only_where_named_or_present(tmp_path: Path, scope: str, said: str, kept: str | None) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("1\n")
    (tmp_path.parent / "outside").mkdir(exist_ok=True)
    assert grounded_scope(scope, said, tmp_path) == kept
