"""worldcheck: facts about the paths a text names and what changed, vetoes only. Real files."""

from __future__ import annotations

import inspect
from pathlib import Path

from agentui.roles import worldcheck as W


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.csv").write_text("name,age\nann,31\nbob,42\ncid,25\ndee,38\neve,29\n")
    (ws / "a.txt").write_text("precious data\n")
    (ws / "poem.txt").write_text("a b\n")
    return ws


def test_nothing_here_grants_or_reads_a_questions_wording():
    # what stays is question-agnostic: no recogniser of counting, summing or which-file questions
    names = {n for n, _ in inspect.getmembers(W, inspect.isfunction)}
    for gone in ("counted", "confirmed", "request_check", "request_done", "listed", "converted", "sorted_into",
                 "appended_wrong", "only_named_changed"):
        assert gone not in names, gone
    assert len(inspect.getsource(W).splitlines()) < 400


def test_a_copy_must_hold_the_same_bytes(tmp_path):
    ws = _ws(tmp_path)
    task = "Copy a.txt to backup/a.txt (create the backup folder)."
    why, todo = W.contradiction(task, ws)
    assert why == "backup/a.txt does not exist: a.txt was not copied there" and "cp a.txt backup/a.txt" in todo
    (ws / "backup").mkdir()
    (ws / "backup/a.txt").write_text("x" * 106)
    why, _ = W.contradiction(task, ws)
    assert why.startswith("backup/a.txt is not a copy of a.txt: it holds 106 bytes, a.txt 14")
    (ws / "backup/a.txt").write_bytes((ws / "a.txt").read_bytes())
    assert W.contradiction(task, ws) is None
    assert W.contradiction("Copy a.txt into backup/", ws) is None  # into a folder: same name there
    (ws / "b.txt").write_text("precious data\nmore\n")  # copied, then changed as asked
    assert W.contradiction("Copy a.txt to b.txt, then append a line to b.txt", ws) is None


def test_facts_say_what_is_there_and_never_leave_the_workspace(tmp_path):
    ws = _ws(tmp_path)
    (tmp_path / "outside.txt").write_text("secret-ish\n")
    (ws / "src/app").mkdir(parents=True)
    (ws / ".env").write_text("TOKEN=hunter2\n")
    lines = W.facts(f"data.csv, src/app, missing.txt and {tmp_path}/outside.txt", ws)
    assert lines == ["data.csv: a file of 44 bytes, 6 lines; line 1: 'name,age'",
                     "src/app: a directory with 0 entries", "missing.txt: does not exist"]
    assert W._resolve("../outside.txt", ws) is None and W._resolve(".env", ws) is None
    assert W.facts("data.csv", None) == [] and W.contradiction("Create x.txt", None) is None


def test_what_a_task_says_to_create_must_be_there(tmp_path):
    ws = _ws(tmp_path)
    task = "Write the text ok into out/status.txt."
    why, todo = W.contradiction(task, ws)
    assert why == "out/status.txt does not exist in the workspace" and "out/status.txt" in todo
    (ws / "out").mkdir()
    (ws / "out/status.txt").write_text("ok")
    assert W.contradiction(task, ws) is None
    # something may take a path away, or the text is about absence: code cannot tell
    assert W.contradiction("Delete junk.txt and create keep.txt", ws) is None
    assert W.contradiction("Check whether config.yaml exists", ws) is None
    # a subtask's intent may name a later step's file: only its criterion says what must be there
    assert W.contradiction("the input is read\nRead a.txt to write b.txt next", ws, made="the input is read") is None
    assert W.contradiction("Save https://example.org/a.html, e.g. with curl, to a.txt", ws) is None


def test_a_json_file_that_does_not_parse(tmp_path):
    ws = _ws(tmp_path)
    (ws / "person.json").write_text("{: person.json has been created with the correct JSON object\n")
    q = "Create person.json containing a JSON object with name Ada and age 36."
    why, todo = W.contradiction(q, ws)
    assert why.startswith("person.json is not valid JSON") and "python3 -m json.tool person.json" in todo
    (ws / "person.json").write_text('{"name": "Ada", "age": 36}\n')
    assert W.contradiction(q, ws) is None
    (ws / "bad.json").write_text("{")
    assert W.contradiction("How many keys does bad.json have?", ws) is None  # not asked to make it


def test_question_changed_names_the_asked_file_only(tmp_path):
    ws = _ws(tmp_path)
    q = "How many words are in poem.txt?"
    assert "poem.txt" in W.question_changed(q, ["poem.txt"], ws)
    assert W.question_changed(q, ["scratch.txt"], ws) is None  # a scratch file is no harm
    assert W.question_changed("Append 'x' to poem.txt", ["poem.txt"], ws) is None  # asked to change it
    assert "poem.txt" in W.question_changed("What is the last line of poem.txt?", ["poem.txt"], ws)


def test_what_a_request_only_reads_is_read_only(tmp_path):
    ws = _ws(tmp_path)
    (ws / "names.txt").write_text("bob\nalice\n")
    assert W.read_only("Copy names.txt to backup.txt", ws) == [ws.resolve() / "names.txt"]
    # a question writes nothing: the files it names and the whole workspace
    assert W.read_only("How many words are in poem.txt?", ws) == [ws.resolve() / "poem.txt", ws.resolve()]
    assert W.read_only("Which file in this folder contains TODO?", ws) == [ws.resolve()]
    assert W.read_only("Add a line to names.txt", ws) == []
    assert W.read_only("Copy names.txt to names.txt", ws) == []
    assert "names.txt" in W.source_changed("Copy names.txt to b.txt", ["names.txt", "b.txt"], ws)
    assert W.source_changed("Copy names.txt to b.txt", ["b.txt"], ws) is None


def test_question_paths_are_the_paths_a_question_names(tmp_path):
    ws = _ws(tmp_path)
    assert W.question_paths("How many words are in poem.txt?", ws) == [ws.resolve() / "poem.txt"]
    assert W.question_paths("What is the first line of poem.txt?", ws) == [ws.resolve() / "poem.txt"]
    assert W.question_paths("Append 'x' to poem.txt", ws) == []  # asked to change it
    assert W.question_paths("Create notes.txt", ws) == []


def test_located_names_where_a_path_the_request_reads_is(tmp_path):
    ws = _ws(tmp_path)
    (ws / "conf").mkdir()
    (ws / "conf" / "settings.ini").write_text("mode = turbo\n")
    (ws / "archive" / "reports").mkdir(parents=True)
    assert W.located("Read settings.ini and tell me the value of mode.", ws) == [
        "settings.ini is not there; the workspace has conf/settings.ini"]
    assert W.located("List the files in the reports folder.", ws) == [
        "reports is not there; the workspace has archive/reports"]
    for nothing in ("What is in conf/settings.ini?", "How many lines are in absent.txt?",
                    "Create settings.ini with mode = fast"):
        assert W.located(nothing, ws) == [], nothing
    assert W.located("Read settings.ini", None) == []


def test_a_request_that_names_a_workspace_entry_is_no_chat(tmp_path):
    from agentui.roles.perceiver import names_workspace

    ws = _ws(tmp_path)
    (ws / "problem_directory" / "sub").mkdir(parents=True)
    assert names_workspace("Is there anything in problem_directory?", ws)
    assert names_workspace("what does 'poem' say", ws)  # poem.txt, named by its stem
    assert not names_workspace("What is the capital of France?", ws)
    assert not names_workspace("thanks!", tmp_path / "missing")
