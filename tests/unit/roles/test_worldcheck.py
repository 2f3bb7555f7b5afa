"""worldcheck (#13): validators judge the workspace, not the executor's claims. Real files."""

from __future__ import annotations

from pathlib import Path

from agentui.roles import worldcheck as W

CSV_ROWS = "How many data rows, not counting the header, are in data.csv?"


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.csv").write_text("name,age\nann,31\nbob,42\ncid,25\ndee,38\neve,29\n")
    (ws / "a.txt").write_text("precious data\n")
    (ws / "list.txt").write_text("a\n\nb\n  \nc\n")
    return ws


def test_a_count_of_every_line_cannot_answer_a_question_that_excludes_some(tmp_path):
    ws = _ws(tmp_path)
    why, todo = W.contradiction(CSV_ROWS, "data.csv has 6 rows", ws)
    assert "data.csv has 6 lines" in why and "header" in why and "header" in todo
    assert "(e.g. tail -n +2 data.csv | wc -l)" in todo  # a command the planner can take as it is
    assert W.contradiction(CSV_ROWS, "5", ws) is None
    assert W.contradiction(CSV_ROWS, "6 lines, so 5 data rows", ws) is None  # the asked-for count is there
    assert W.contradiction("How many lines does data.csv have?", "6", ws) is None  # nothing excluded
    assert W.contradiction("How many non-empty lines does list.txt have?", "5", ws) is not None
    assert W.contradiction("How many non-empty lines does list.txt have?", "3", ws) is None


def test_nothing_to_exclude_means_the_whole_count_may_be_right(tmp_path):
    ws = _ws(tmp_path)
    (ws / "dense.txt").write_text("a\nb\nc\n")
    assert W.contradiction("How many lines of dense.txt, not counting blank lines?", "3", ws) is None
    assert W.contradiction("How many lines of dense.txt, excluding the frobs?", "3", ws) is None  # unknown kind


def test_a_copy_must_hold_the_same_bytes(tmp_path):
    ws = _ws(tmp_path)
    task = "Copy a.txt to backup/a.txt (create the backup folder)."
    why, todo = W.contradiction(task, "done", ws)
    assert why == "backup/a.txt does not exist: a.txt was not copied there" and "cp a.txt backup/a.txt" in todo
    (ws / "backup").mkdir()
    (ws / "backup/a.txt").write_text("x" * 106)
    why, _ = W.contradiction(task, "done", ws)
    assert why.startswith("backup/a.txt is not a copy of a.txt: it holds 106 bytes, a.txt 14")
    (ws / "backup/a.txt").write_bytes((ws / "a.txt").read_bytes())
    assert W.contradiction(task, "done", ws) is None
    assert W.contradiction("Copy a.txt into backup/", "done", ws) is None  # into a folder: same name there
    (ws / "b.txt").write_text("precious data\nmore\n")  # copied, then changed as asked
    assert W.contradiction("Copy a.txt to b.txt, then append a line to b.txt", "done", ws) is None


def test_facts_say_what_is_there_and_never_leave_the_workspace(tmp_path):
    ws = _ws(tmp_path)
    (tmp_path / "outside.txt").write_text("secret-ish\n")
    (ws / "src/app").mkdir(parents=True)
    (ws / ".env").write_text("TOKEN=hunter2\n")
    lines = W.facts(f"data.csv, src/app, missing.txt and {tmp_path}/outside.txt", ws)
    assert lines == ["data.csv: a file of 44 bytes, 6 lines; line 1: 'name,age'",
                     "src/app: a directory with 0 entries", "missing.txt: does not exist"]
    assert W._resolve("../outside.txt", ws) is None and W._resolve(".env", ws) is None
    assert W.facts("data.csv", None) == [] and W.contradiction(CSV_ROWS, "6", None) is None


def test_what_a_task_says_to_create_must_be_there(tmp_path):
    ws = _ws(tmp_path)
    task = "Write the text ok into out/status.txt."
    why, todo = W.contradiction(task, "done", ws)
    assert why == "out/status.txt does not exist in the workspace" and "out/status.txt" in todo
    (ws / "out").mkdir()
    (ws / "out/status.txt").write_text("ok")
    assert W.contradiction(task, "done", ws) is None
    # something may take a path away, or the text is about absence: code cannot tell
    assert W.contradiction("Delete junk.txt and create keep.txt", "done", ws) is None
    assert W.contradiction("Check whether config.yaml exists", "no", ws) is None
    # a subtask's intent may name a later step's file: only its criterion says what must be there
    assert W.contradiction("the input is read\nRead a.txt to write b.txt next", "ok", ws, made="the input is read") is None
    # URLs and abbreviations are not workspace paths
    assert W.contradiction("Save https://example.org/a.html, e.g. with curl, to a.txt", "done", ws) is None


def test_a_which_file_answer_must_name_a_file_that_is_there(tmp_path):
    """find-todo on the 1.5B model: `find -name '*TODO*'` found nothing, the plan's next step echoed
    the model's guess `…/ws/TODO.txt`, and R4a/R4b accepted a file that does not exist (#13)."""
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    for name, text in (("a.txt", "all done\n"), ("b.txt", "TODO: fix the parser\n"), ("sub/c.txt", "TODO later\n")):
        (ws / name).write_text(text)
    q = "Which file in this folder contains the word TODO? Answer with the file name."
    why, todo = W.contradiction(q, f"The command found the file '{ws}/TODO.txt' containing the word 'TODO'.", ws)
    assert "TODO.txt" in why and "does not exist" in why and "answer with one of them" in todo
    assert W.contradiction(q, "TODO.txt", ws) is not None
    assert W.contradiction(q, "b.txt", ws) is None
    assert W.contradiction(q, f"{ws}/b.txt", ws) is None
    assert W.contradiction(q, "c.txt", ws) is None  # a bare name found deeper in the tree is real
    (ws / "sub" / "c.txt").write_text("x\n")  # real, but it does not hold the word: code reads it
    assert "sub/c.txt in this folder does not hold 'TODO'" in W.contradiction(q, "c.txt", ws)[0]
    (ws / "sub" / "c.txt").write_text("TODO later\n")
    assert W.contradiction(q, "b.txt (not TODO.txt)", ws) is None  # names something real: cannot tell
    assert W.contradiction(q, "no file contains it", ws) is None  # no path: the missing-value rule decides
    assert W.contradiction("Which file did you delete?", "old.log", ws) is None  # a path may be gone
    assert W.contradiction("Create notes.md and give its path", "notes.md", ws) is not None  # made, missing


INDEX = "Write the names of all .md files in this folder, sorted, one per line, into index.txt."
APPEND = "Add a line saying 'done' at the end of todo.txt, keeping the existing lines."


def _md_ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("zeta.md", "alpha.md", "mid.md", "other.txt"):
        (ws / name).write_text("")
    return ws


def test_an_index_of_md_files_must_list_exactly_them_sorted(tmp_path):
    """index-md on the 1.5B model: `accept` with an index.txt the check rejects (#13)."""
    ws = _md_ws(tmp_path)
    idx = ws / "index.txt"
    idx.write_text("alpha.md\nmid.md\nzeta.md\n")
    assert W.contradiction(INDEX, "done", ws) is None
    idx.write_text("./alpha.md\n./mid.md\n./zeta.md\n")  # find's spelling of the same names
    assert W.contradiction(INDEX, "done", ws) is None
    idx.write_text("zeta.md\nalpha.md\nmid.md\n")
    why, _ = W.contradiction(INDEX, "done", ws)
    assert "not sorted" in why
    idx.write_text("alpha.md\nmid.md\nother.txt\nzeta.md\n")
    why, todo = W.contradiction(INDEX, "done", ws)
    assert "other.txt" in why and "alpha.md, mid.md, zeta.md" in todo
    idx.write_text("alpha.md\nzeta.md\n")
    assert "leaves out mid.md" in W.contradiction(INDEX, "done", ws)[0]
    idx.write_text("index.txt has been created with the names of all .md files\n")
    assert W.contradiction(INDEX, "done", ws) is not None
    idx.write_text("zeta.md\nalpha.md\nmid.md\n")  # not asked sorted: any order
    assert W.contradiction(INDEX.replace(", sorted", ""), "done", ws) is None
    assert W.contradiction(INDEX.replace("in this folder", "in this folder and its subfolders"), "x", ws) is None


def test_an_appended_line_must_end_the_file_and_keep_what_was_there(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    todo = ws / "todo.txt"
    todo.write_text("buy milk\ncall bob\ndone\n")
    assert W.contradiction(APPEND, "done", ws) is None
    todo.write_text("done\n")
    why, what = W.contradiction(APPEND, "done", ws)
    assert "the lines it had before are gone" in why and ">>" in what
    todo.write_text("buy milk\ncall bob\n")
    assert "last line of todo.txt is 'call bob'" in W.contradiction(APPEND, "done", ws)[0]
    todo.write_text("done\nbuy milk\ncall bob\n")
    assert W.contradiction(APPEND, "done", ws) is not None  # prepended, not appended
    # no final newline: the last line, but the next line added would join it — the 1.5B model's
    # "\ndone" was accepted and failed the suite's check (#13): no longer a pass
    todo.write_text("buy milk\ncall bob\ndone")
    assert "no line end" in W.contradiction(APPEND, "done", ws)[0]
    assert W.contradiction("Add a line saying 'done' to todo.txt", "ok", ws) is None
    assert W.contradiction("Remove the line 'done' from todo.txt", "ok", ws) is None


def test_the_append_check_holds_when_request_and_criterion_quote_the_line_twice(tmp_path):
    """append-line on the 1.5B model, in process (2026-11-26): R4b checks the request with its
    criterion, "todo.txt is updated with 'done' at the end" — two quotes of 'done' made the check
    give up, and a todo.txt ending in 'buy milk' was accepted (#13)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "todo.txt").write_text("buy milk\ncall bob\nbuy milk\ncall bob\ndone\nbuy milk\n")
    text = f"{APPEND}\ntodo.txt is updated with 'done' at the end"
    assert "last line of todo.txt is 'buy milk'" in W.contradiction(text, "todo.txt has been updated", ws)[0]


def test_sorted_lines_must_be_the_source_lines_sorted(tmp_path):
    """sort-names on the 1.5B model: `accept` with a sorted.txt the check rejects (#13)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "names.txt").write_text("mallory\nalice\ntrent\nbob\n")
    task = "Sort the lines of names.txt alphabetically and write the result to sorted.txt."
    out = ws / "sorted.txt"
    out.write_text("alice\nbob\nmallory\ntrent\n")
    assert W.contradiction(task, "done", ws) is None
    out.write_text("mallory\nalice\ntrent\nbob\n")  # a copy, not sorted
    why, todo = W.contradiction(task, "done", ws)
    assert "sorted.txt does not hold the lines of names.txt sorted" in why and "sort names.txt" in todo
    out.write_text("alice\nbob\n")
    assert W.contradiction(task, "done", ws) is not None
    out.write_text("trent\nmallory\nbob\nalice\n")
    assert W.contradiction(task.replace("alphabetically", "in reverse order"), "done", ws) is None
    (ws / "mixed.txt").write_text("bob\nAlice\ncarol\n")
    (ws / "m.txt").write_text("Alice\nbob\ncarol\n")  # either case rule is a sort
    assert W.contradiction("Sort mixed.txt into m.txt", "done", ws) is None
    assert W.contradiction("Sort names.txt by length into sorted.txt", "done", ws) is None  # code cannot tell


def test_a_count_of_a_word_in_any_case_is_of_whole_words_in_every_case(tmp_path):
    """trap-error-any-case on the 1.5B model: 4 (`terror` counted) accepted where the answer is 3."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "server.log").write_text("ok start\nERROR disk\nerror net\nError auth\nwarn slow\nterror movie\n")
    q = "How many lines in server.log contain the word error, in any letter case?"
    why, todo = W.contradiction(q, "server.log contains 4 lines with the word 'error' in any case.", ws)
    assert "inside other words" in why and "on 3 lines" in why and "grep -iw" in todo
    assert "one letter case only" in W.contradiction(q, "1", ws)[0]
    assert W.contradiction(q, "3", ws) is None
    # no reading gives 7 or 45 lines: R4b passed "server.log contains 45 lines with 'error'" after
    # `grep -i error server.log | wc` printed "4 8 45" (trap-error-any-case over HTTP, 4e180a2)
    assert "7 is no count of the lines of server.log" in W.contradiction(q, "7", ws)[0]
    why, todo = W.contradiction(q, "server.log contains 45 lines with 'error' (case-insensitive)", ws)
    assert why.startswith("45 is no count") and "on 3 lines" in why and "grep -iw" in todo
    assert W.contradiction(q, "Lines 2, 3 and 4 hold it", ws) is None  # 3 is there: the validators decide
    plain = "How many lines in server.log contain the word error?"
    assert W.contradiction(plain, "1", ws) is None  # case-sensitive, whole word: 1 is right
    assert W.contradiction(plain, "2", ws) is not None  # 'terror' counted


def test_a_file_that_holds_the_quoted_text_confirms_a_criterion_that_asks_only_that(tmp_path):
    ws = _ws(tmp_path)
    (ws / "hello.txt").write_text("Hello, world")
    (ws / "more.txt").write_text("a\nHello, world!\n")
    crit = "The file hello.txt exists and contains the text 'Hello, world'"
    assert W.confirmed(crit, ws) == "checked by code: hello.txt contains 'Hello, world'"
    assert W.confirmed("hello.txt contains exactly 'Hello, world'", ws) == "checked by code: hello.txt holds exactly 'Hello, world'"
    assert W.confirmed("the content of hello.txt is \"Hello, world\"", ws) is not None
    assert W.confirmed("more.txt contains 'Hello, world'", ws) is not None
    # exact content asked (by the criterion or by its context): more than the text is not enough
    assert W.confirmed("more.txt contains exactly 'Hello, world'", ws) is None
    assert W.confirmed("more.txt contains 'Hello, world'", ws, "write exactly the text Hello, world") is None
    assert W.confirmed("the content of more.txt is 'Hello, world'", ws) is None
    # anything else in the criterion, a negation, a missing or outside file: code cannot tell
    assert W.confirmed("hello.txt contains 'Hello' and more.txt exists", ws) is None
    assert W.confirmed("hello.txt does not contain 'Hello'", ws) is None
    assert W.confirmed("hello.txt contains 'Hello, world' on every line, sorted", ws) is None
    assert W.confirmed("missing.txt contains 'x'", ws) is None
    assert W.confirmed("../outside.txt contains 'x'", ws) is None
    assert W.confirmed("hello.txt contains ''", ws) is None
    assert W.confirmed("hello.txt contains 'Goodbye'", ws) is None
    assert W.confirmed(crit, None) is None


def test_a_line_count_answer_must_be_the_files_line_count(tmp_path):
    # an outside tester (#13): `echo "a.txt has 7 lines"`, answer 7, a.txt has 3 lines → accepted
    ws = _ws(tmp_path)
    (ws / "a.txt").write_text("x\ny\nz\n")
    why, todo = W.contradiction("How many lines does a.txt have?", "a.txt has 7 lines", ws)
    assert why == "a.txt has 3 lines, and the answer says 7" and "wc -l < a.txt" in todo
    assert W.contradiction("How many lines does a.txt have?", "a.txt has 3 lines", ws) is None
    assert W.contradiction("the number of lines in a.txt is reported", "7", ws) is not None
    # filtered, edited or several files: not the whole count, code cannot tell
    assert W.contradiction("How many lines in a.txt contain an x?", "1", ws) is None
    assert W._line_count_problem("Append 'w' to a.txt, then say how many lines it has", "9", ws) is None
    assert W.contradiction("How many lines do a.txt and list.txt have in total?", "99", ws) is None
    assert W.contradiction("How many lines does a.txt have?", "no idea", ws) is None  # no number: other checks


def test_existence_only_criteria_and_plain_requests_are_confirmed_by_the_files(tmp_path):
    # make-tree on the 1.5B model (#13): R4b failed "… an empty file src/app/__init__.py is created"
    # with "src/app/__init__.py has 0 bytes" — the very thing asked
    ws = _ws(tmp_path)
    (ws / "src" / "app").mkdir(parents=True)
    (ws / "tests").mkdir()
    (ws / "src" / "app" / "__init__.py").write_text("")
    crit = "The directories src/app and tests are created and an empty file src/app/__init__.py is created"
    assert W.confirmed(crit, ws).startswith("checked by code: src/app is there (a directory), tests is there")
    assert W.confirmed("src/app and tests exist.", ws) is not None
    assert W.confirmed("an empty file a.txt is created", ws) is None  # a.txt has bytes
    assert W.confirmed("docs is created", ws) is None  # not there
    assert W.confirmed("tests is deleted", ws) is None  # says more than existence
    assert W.confirmed("src/app/__init__.py contains a main function", ws) is None
    assert W.confirmed("The directory src/app does not exist", ws) is None
    assert W.confirmed("an empty directory tests exists", ws) is None
    assert W.confirmed("a file is created", ws) is None  # names nothing
    assert W.confirmed("the file ../outside exists", ws) is None
    # R4b takes code's word only when the request itself asks nothing but that, and it is done
    (ws / "hello.txt").write_text("Hello, world\n")
    (ws / "todo.txt").write_text("eggs\nbuy milk\n")
    assert W.request_done("Create the directories src/app and tests, and an empty file src/app/__init__.py.", ws)
    assert W.request_done("Create a file hello.txt containing exactly the text: Hello, world", ws)
    assert W.request_done("Create todo.txt containing 'buy milk'", ws)
    assert not W.request_done("Write 'buy milk' to todo.txt", ws)  # todo.txt holds more than that
    assert not W.request_done("Create a.txt containing exactly: precious", ws)
    assert not W.request_done("Create the directories src/app and docs", ws)
    assert not W.request_done("write a haiku about cats to hello.txt", ws)
    assert not W.request_done("What is the sum of the numbers in data.csv?", ws)
    assert not W.request_done("Create notes.txt and then delete a.txt", ws)


def test_granting_checks_hold_against_an_outside_testers_attacks(tmp_path):
    # #13, a second outside corpus: a directory passed as a file and the reverse, an apostrophe
    # inside double quotes, the right count elsewhere in a wrong answer, a task that changed more
    ws = _ws(tmp_path)
    (ws / "build.txt").mkdir()
    (ws / "logs").write_text("")
    (ws / "q.txt").write_text("it's done\n")
    assert W.confirmed("the file build.txt is created", ws) is None
    assert W.confirmed("build.txt exists", ws) is None  # a name with an extension is a file
    assert W.confirmed("the directory logs is created", ws) is None
    assert W.confirmed("an empty file build.txt exists", ws) is None
    assert W.request_check("create the file build.txt", ws) == (False, "build.txt is not a file")
    assert W.request_check("create the directory logs", ws) == (False, "logs is not a directory")
    assert W.confirmed('q.txt contains "it\'s done"', ws) == 'checked by code: q.txt contains "it\'s done"'
    assert W.request_check('create q.txt containing "it\'s done"', ws) == \
        (True, 'checked by code: q.txt contains "it\'s done"')
    assert W.request_check("write a haiku to q.txt", ws) is None  # says more than files: not code's
    why = W.request_check("Create q.txt containing exactly: done", ws)
    assert why is not None and why[0] is False and "does not hold exactly 'done'" in why[1]
    (ws / "a3.txt").write_text("1\n2\n3\n")
    assert W.contradiction("How many lines does a3.txt have?", "a3.txt has 5 lines (b.txt has 3)", ws) is not None
    assert W.contradiction("How many lines does a3.txt have?", "a3.txt has three lines", ws) is None
    assert W.changed([], ws) == []
    assert W.collateral(["hello.txt", "important.txt"], "create hello.txt containing 'hi'", ws) == \
        "important.txt was changed too"
    assert W.collateral(["hello.txt"], "create hello.txt containing 'hi'", ws) is None


def test_counts_and_sums_code_can_recount(tmp_path):
    """The 1.5B model's grounded but wrong answers on the full suite (#13): `awk '{print $3}'` for
    the score column (96, not 49); `ls -a /abs/…/data | wc -l` on the wrong folder (6, not 4);
    the files counted instead of their extensions (6, not 4); `ls /abs/ws/*.md > index.txt`."""
    ws = tmp_path / "ws"
    (ws / "data/sub").mkdir(parents=True)
    (ws / "scores.csv").write_text("name,score,age\nann,12,30\nbob,30,41\ncid,7,25\n")
    for n in ("a.csv", "b.csv", ".env", ".cache", "sub/x.csv"):
        (ws / "data" / n).write_text("")
    col = "What is the total of the score column in scores.csv?"
    why, todo = W.contradiction(col, "The total of the score column in scores.csv is 96.", ws)
    assert "column 2" in why and "NR>1 {s+=$2}" in todo
    assert W.contradiction(col, "49", ws) is None and W.contradiction(col, "the total is not shown", ws) is None
    hidden = "How many files (not folders) are directly inside the data folder, hidden files included?"
    assert W.contradiction(hidden, "6", ws) is not None and W.contradiction(hidden, "2", ws) is not None
    assert W.contradiction(hidden, "4", ws) is None
    plain = "How many files are in the data folder?"  # hidden? folders? it does not say: any reading
    assert all(W.contradiction(plain, n, ws) is None for n in ("2", "3", "4", "5"))
    assert W.contradiction(plain, "6", ws) is not None
    ext = tmp_path / "ext"
    ext.mkdir()
    for n in ("a.txt", "b.txt", "c.md", "d.py", "e.py", "f.json"):
        (ext / n).write_text("")
    q = "How many distinct file extensions are there among the files in this folder?"
    assert W.contradiction(q, "6", ext) is not None and W.contradiction(q, "4", ext) is None
    (ext / "Makefile").write_text("")  # no extension: counted as one or not, code cannot tell
    assert W.contradiction(q, "5", ext) is None and W.contradiction(q, "4", ext) is None
    md = tmp_path / "md"
    md.mkdir()
    for n in ("zeta.md", "alpha.md", "mid.md"):
        (md / n).write_text("")
    (md / "index.txt").write_text("".join(f"{md}/{n}\n" for n in ("alpha.md", "mid.md", "zeta.md")))
    task = "Write the names of all .md files in this folder, sorted, one per line, into index.txt."
    why, _ = W.contradiction(task, "done", md)
    assert "lists paths" in why
    (md / "index.txt").write_text("alpha.md\nmid.md\nzeta.md\n")
    assert W.contradiction(task, "done", md) is None


def test_recounts_read_the_question_as_a_user_means_it(tmp_path):
    """A second outside tester's cases (#13): the folder the question names (not the workspace
    root), "not counting hidden" as hidden out, links counted by `ls` or not by `find -type f`,
    the column found inside "add up the values in the amount column", a BOM and semicolons,
    lists written comma-separated or as bullets, and number words left to grounding."""
    ws = tmp_path / "ws"
    (ws / "d/sub").mkdir(parents=True)
    (ws / "docs").mkdir()
    for n in ("d/a.txt", "d/b.txt", "d/c.txt", "d/.h", "d/sub/x", "d/sub/y", "docs/a.md", "docs/b.md", "docs/c.txt",
              "README.md"):
        (ws / n).write_text("")
    rec = "How many files are in the d folder including subfolders, not counting hidden files?"
    assert W.contradiction(rec, "5", ws) is None and W.contradiction(rec, "7", ws) is not None  # 7: hidden in
    assert W.contradiction("How many files are in the d folder, not counting folders?", "5", ws) is not None
    assert W.contradiction("How many visible files are in the d folder?", "5", ws) is not None
    assert W.contradiction("Count the files in the d folder.", "9", ws) is not None
    (ws / "d/la").symlink_to(ws / "d/a.txt")
    direct = "How many files are directly inside the d folder, not counting folders or hidden files?"
    assert W.contradiction(direct, "3", ws) is None and W.contradiction(direct, "4", ws) is None
    lst = "Write the names of all .md files in docs into list.txt."
    for body in ("a.md\nb.md\n", "a.md, b.md\n", "- a.md\n- b.md\n", "a.md\r\nb.md\r\n"):
        (ws / "list.txt").write_text(body)
        assert W.contradiction(lst, "done", ws) is None, body
    (ws / "list.txt").write_text("README.md\n")
    assert W.contradiction(lst, "done", ws) is not None
    (ws / "sales.csv").write_bytes("\ufeffamount;name\r\n10;a\r\n39;b\r\n".encode())
    add = "Add up the values in the amount column in sales.csv and tell me the result."
    assert W.contradiction(add, "60", ws) is not None and W.contradiction(add, "49", ws) is None
    assert W.contradiction("What is the total of the amount column in sales.csv?", "forty-nine", ws) is None


# -- counted: the grant for one count code can take from the files (#13) -------------------------
def _count_ws(tmp_path: Path) -> Path:
    ws = _ws(tmp_path)
    (ws / "poem.txt").write_text("the quick brown fox\njumps over the lazy dog\n")
    (ws / "scores.csv").write_text("name,score,age\nann,10,30\nbob,39,40\n")
    (ws / "numbers.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    (ws / "server.log").write_text("Error one\nerror two\nERROR three\nerrors four\nok\n")
    for rel in ("docs/a.md", "docs/b.md", "docs/sub/c.md", "docs/sub/d.md", "docs/x.txt", "data/.h", "data/v"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x")
    return ws


GRANTED = [
    ("How many words are in poem.txt?", "poem.txt has 2 lines, 9 words, 44 characters"),
    ("How many words are in poem.txt?", "9"),
    ("How many words are in poem.txt?", "9.txt aside, poem.txt has 9 words"),
    (CSV_ROWS, "data.csv has 5 rows"),
    ("What is the total of the score column in scores.csv?", "The total is 49.0"),
    ("What is the sum of the numbers in numbers.txt?", "55"),
    ("How many .md files are in the docs folder, including its subfolders?", "There are 4 .md files in docs."),
    ("How many .md files are directly in the docs folder?", "2"),
    ("How many lines in server.log contain the word error, in any letter case?", "3 lines"),
    ("How many lines in server.log contain the word error?", "1"),
    ("How many lines does poem.txt have?", "poem.txt has 2 lines"),
    ("How many files are in the data folder, hidden files included?", "2 files"),
]
REFUSED = [
    ("How many words are in poem.txt?", "poem.txt has 18 words"),
    ("How many words are in poem.txt?", "about 9 words"),
    ("How many words are in poem.txt?", "9 or 10 words"),
    ("How many words are in poem.txt?", "at least 9 words"),
    ("How many words are in poem.txt?", "It is not 9 words"),
    ("How many words are in poem.txt?", "2 lines, 44 characters, 9 bytes"),  # 9 said of no "words"
    ("How many words are in poem.txt?", "9.txt"),  # a name, not a count
    ("How many words are in poem.txt? And which word is longest?", "9"),
    ("How many words are in poem.txt and what is its first line?", "9"),
    ("How many words are in poem.txt and numbers.txt?", "9"),  # two files
    ("Count the words in poem.txt and write the number into count.txt.", "9"),  # a write request
    ("How many words in poem.txt start with t?", "9"),
    ("How many lines in server.log contain the word error, in any letter case?", "4"),  # inside "errors"
    ("How many lines in server.log contain the word error?", "3"),  # one case only asked
    ("How many files are in the data folder?", "2"),  # hidden in or out: 1 or 2, code cannot tell
    ("How many .md files are in the docs folder, including its subfolders?", "2"),
    ("What is the total of the score column in scores.csv?", "10 + 39 = 49"),
    ("How many words are in ../poem.txt?", "9"),
    # an outside tester's (#13 corpus 5): the 9 is said of lines, the word count is "ten"
    ("How many words are in poem.txt?", "poem.txt has ten words in 9 lines."),
    ("How many lines does poem.txt have?", "poem.txt has 2 words"),  # the right number, another unit
]


def test_counted_grants_a_plainly_stated_right_count(tmp_path):
    ws = _count_ws(tmp_path)
    for q, a in GRANTED:
        got = W.counted(q, a, ws)
        assert got and got.startswith("checked by code: "), (q, a)


def test_counted_refuses_wrong_hedged_ambiguous_or_compound(tmp_path):
    ws = _count_ws(tmp_path)
    for q, a in REFUSED:
        assert W.counted(q, a, ws) is None, (q, a)


def test_question_changed_names_the_asked_file_only(tmp_path):
    ws = _count_ws(tmp_path)
    q = "How many words are in poem.txt?"
    assert "poem.txt" in W.question_changed(q, ["poem.txt"], ws)
    assert W.question_changed(q, ["scratch.txt"], ws) is None  # a scratch file is no harm
    assert W.question_changed("Append 'x' to poem.txt", ["poem.txt"], ws) is None  # asked to change it
    assert "docs/a.md" in W.question_changed("How many .md files are in the docs folder?", ["docs/a.md"], ws)
    # "how many files are in this folder?" and the task wrote one: the count may include it
    assert "scratch.txt" in W.question_changed("How many files are in this folder?", ["scratch.txt"], ws)


def test_counted_grants_the_first_line_given_whole(tmp_path):
    ws = _count_ws(tmp_path)
    (ws / "README.txt").write_text("Project Nimbus\nA tool.\n\n")
    q = "What is the first line of README.txt?"
    for a in ("Project Nimbus", "The first line of README.txt is 'Project Nimbus'."):
        assert W.counted(q, a, ws), a
    for a in ("Project", "Project Nimbus 2", "It is probably Project Nimbus", "A tool."):
        assert W.counted(q, a, ws) is None, a
    assert W.counted("What is the last line of README.txt?", "A tool.", ws)
    assert W.counted("What is the first line of README.txt and how long is it?", "Project Nimbus", ws) is None


def test_a_case_conversion_result_must_hold_the_source_converted(tmp_path):
    # the 1.5B executor ran tr into out.txt, then wrote its own sentence over out.txt (accepted)
    ws = _ws(tmp_path)
    (ws / "in.txt").write_text("make me loud\n")
    q = "Write the contents of in.txt converted to upper case into a new file out.txt."
    (ws / "out.txt").write_text("in.txt has been converted to upper case successfully")
    why, todo = W.contradiction(q, "done", ws)
    assert "out.txt does not hold in.txt in upper case" in why and "tr '[:lower:]' '[:upper:]'" in todo
    (ws / "out.txt").write_text("MAKE ME LOUD\n")
    assert W.contradiction(q, "done", ws) is None
    (ws / "low.txt").write_text("make me loud\n")
    assert W.contradiction("Convert in.txt to lower case into low.txt", "done", ws) is None


def test_code_grants_a_case_conversion_it_can_read(tmp_path):
    # the 1.5B meta-validator failed out.txt holding 'MAKE ME LOUD' for 'make me loud' (#13)
    ws = _ws(tmp_path)
    (ws / "in.txt").write_text("make me loud\n")
    (ws / "notes.txt").write_text("keep\n")
    q = "Write the contents of in.txt converted to upper case into a new file out.txt."
    low = "Convert in.txt to lower case into low.txt"

    def grant(request: str = q) -> str | None:
        return W.converted(request, ws, before, tree)

    before, tree = W.snapshot(q, ws), W.tree(ws)
    assert grant() is None  # no result yet
    (ws / "out.txt").write_text("MAKE ME LOUD")
    assert grant() == "checked by code: out.txt holds in.txt in upper case"
    assert W.converted(q, ws, before, None) is None and W.converted(q, ws, {}, tree) is None  # nothing seen before
    for wrong in ("MAKE ME LOUD!\n", "make me loud\n", "MAKE ME\n", "Done: MAKE ME LOUD\n", "",
                  "\n  MAKE ME LOUD\n"):  # leading white space: an outside tester (#13)
        (ws / "out.txt").write_text(wrong)
        assert grant() is None, wrong
    (ws / "out.txt").write_text("MAKE ME LOUD\n")
    for more in (q + " Then append 'x' to it.", "Is in.txt converted to upper case in out.txt?",
                 "Write in.txt converted to upper case into out.txt and tell me how many lines it has",
                 "Convert in.txt to upper case into out.txt and delete in.txt."):
        assert grant(more) is None, more
    # changes no command line names (an outside tester, #13: python one-liners)
    (ws / "junk.txt").write_text("")
    assert grant() is None  # another file made
    (ws / "junk.txt").unlink()
    assert grant()
    (ws / "notes.txt").unlink()
    assert grant() is None  # another file removed
    (ws / "notes.txt").write_text("keep\n")
    before, tree = W.snapshot(q, ws), W.tree(ws)
    (ws / "in.txt").write_text("MAKE ME LOUD\n")
    assert grant() is None  # the source written over, then copied
    (ws / "in.txt").write_text("make me loud\n")
    before, tree = W.snapshot(q, ws), W.tree(ws)
    (ws / "out.txt").unlink()
    (ws / "other.txt").write_text("MAKE ME LOUD\n")
    (ws / "out.txt").symlink_to(ws / "other.txt")
    assert grant() is None  # out.txt only links to another file
    (ws / "out.txt").unlink()
    (ws / "other.txt").unlink()
    # a folder the result goes into may be made; `mkdir -p` of one that is there changes nothing
    before, tree = W.snapshot(low, ws), W.tree(ws)
    (ws / "low.txt").write_text("make me loud\n")
    assert W.converted(low, ws, before, tree) == "checked by code: low.txt holds in.txt in lower case"
    sub = "Convert in.txt to upper case into docs/up.txt"
    before, tree = W.snapshot(sub, ws), W.tree(ws)
    (ws / "docs").mkdir()
    (ws / "docs" / "up.txt").write_text("MAKE ME LOUD\n")
    assert W.converted(sub, ws, before, tree) == "checked by code: docs/up.txt holds in.txt in upper case"
    (ws / "in.txt").write_text("")
    before, tree = W.snapshot(q, ws), W.tree(ws)
    (ws / "out.txt").write_text("")
    assert grant() is None  # an empty source shows no conversion


def test_code_grants_a_sort_it_can_read(tmp_path):
    # the 1.5B meta-validator failed sorted.txt holding alice, bob, mallory, trent (#13, sort-names)
    ws = _ws(tmp_path)
    (ws / "names.txt").write_text("mallory\nalice\ntrent\nbob\n")
    q = "Sort the lines of names.txt alphabetically and write the result to sorted.txt."
    before, tree = W.snapshot(q, ws), W.tree(ws)
    assert W.sorted_into(q, ws, before, tree) is None  # no result yet
    for right in ("alice\nbob\nmallory\ntrent\n", "alice\nbob\nmallory\ntrent"):
        (ws / "sorted.txt").write_text(right)
        assert W.sorted_into(q, ws, before, tree) == "checked by code: sorted.txt holds the lines of names.txt sorted"
    for other in ("Sort names.txt into sorted.txt", "sort the lines in names.txt to sorted.txt"):
        assert W.sorted_into(other, ws, W.snapshot(other, ws), tree)
    for wrong in ("alice\nbob\nmallory\n", "alice\nbob\ntrent\nmallory\n", "\nalice\nbob\nmallory\ntrent\n",
                  "alice\nbob\nbob\nmallory\ntrent\n", "ALICE\nBOB\nMALLORY\nTRENT\n", "",
                  "alice\nbob\nmallory\ntrent\n\n"):  # a blank line after the last: an outside tester
        (ws / "sorted.txt").write_text(wrong)
        assert W.sorted_into(q, ws, before, tree) is None, wrong
    (ws / "sorted.txt").write_text("alice\nbob\nmallory\ntrent\n")
    for more in ("Sort the lines of names.txt by length and write the result to sorted.txt.",
                 "Sort the lines of names.txt in reverse and write the result to sorted.txt.",
                 "Sort the lines of names.txt alphabetically and write the result to sorted.txt, then count them.",
                 "Remove bob, then sort the lines of names.txt and write the result to sorted.txt.",
                 "Sort the lines of names.txt alphabetically and write the result to sorted.txt?"):
        assert W.sorted_into(more, ws, W.snapshot(more, ws), tree) is None, more
    (ws / "junk.txt").write_text("")
    assert W.sorted_into(q, ws, before, tree) is None  # another file made
    (ws / "junk.txt").unlink()
    (ws / "names.txt").write_text("alice\nbob\nmallory\ntrent\n")
    assert W.sorted_into(q, ws, before, tree) is None  # the source sorted in place, then copied
    (ws / "names.txt").write_text("mallory\nalice\ntrent\nbob\n")
    into = "Sort names.txt into out/sorted.txt"  # a new folder for the result may be made
    before, tree = W.snapshot(into, ws), W.tree(ws)
    (ws / "out").mkdir()
    (ws / "out" / "sorted.txt").write_text("alice\nbob\nmallory\ntrent\n")
    assert W.sorted_into(into, ws, before, tree) == "checked by code: out/sorted.txt holds the lines of names.txt sorted"


def test_only_the_paths_a_request_names_may_change(tmp_path):
    ws = _ws(tmp_path)
    q = "Create src/app and tests, and an empty file src/app/__init__.py"
    tree = W.tree(ws)
    assert W.only_named_changed(q, ws, tree) and W.only_named_changed(q, ws, None)
    (ws / "src" / "app").mkdir(parents=True)
    (ws / "tests").mkdir()
    (ws / "src" / "app" / "__init__.py").write_text("")
    assert W.only_named_changed(q, ws, tree)
    (ws / "junk.txt").write_text("")  # a write no command line showed (an outside tester, #13)
    assert not W.only_named_changed(q, ws, tree)
    (ws / "junk.txt").unlink()
    (ws / "src" / "app" / "extra.py").write_text("")
    assert not W.only_named_changed(q, ws, tree)
    (ws / "src" / "app" / "extra.py").unlink()
    (ws / "a.txt").unlink()
    assert not W.only_named_changed(q, ws, tree)


def test_a_source_the_request_only_reads_must_not_change(tmp_path):
    ws = _ws(tmp_path)
    (ws / "names.txt").write_text("bob\nalice\n")
    sort = "Sort the lines of names.txt alphabetically and write the result to sorted.txt."
    assert "names.txt" in W.source_changed(sort, ["names.txt", "sorted.txt"], ws)
    assert W.source_changed(sort, ["sorted.txt"], ws) is None
    assert "a.txt" in W.source_changed("Copy a.txt to b.txt", ["a.txt", "b.txt"], ws)
    assert W.source_changed("Sort names.txt in place", ["names.txt"], ws) is None  # asked to change it
    assert W.source_changed("Sort names.txt and write the result to names.txt", ["names.txt"], ws) is None


def test_what_a_request_only_reads_is_read_only(tmp_path):
    # the executor refuses writes to these before they run (#13: the 1.5B executor wrote names.txt
    # over, without its last line end, before sorting it into sorted.txt)
    ws = _ws(tmp_path)
    (ws / "names.txt").write_text("bob\nalice\n")
    (ws / "in.txt").write_text("make me loud\n")
    (ws / "poem.txt").write_text("a b\n")
    sort = "Sort the lines of names.txt alphabetically and write the result to sorted.txt."
    assert W.read_only(sort, ws) == [ws.resolve() / "names.txt"]
    assert W.read_only("Copy names.txt to backup.txt", ws) == [ws.resolve() / "names.txt"]
    assert W.read_only("Write the contents of in.txt converted to upper case into a new file out.txt.", ws) \
        == [ws.resolve() / "in.txt"]
    assert W.read_only("How many words are in poem.txt?", ws) == [ws.resolve() / "poem.txt"]
    for changes_it in ("Sort names.txt in place", "Sort names.txt and write the result to names.txt",
                       "Sort names.txt into sorted.txt and remove names.txt", "Add a line to names.txt"):
        assert W.read_only(changes_it, ws) == [], changes_it
    assert W.read_only("Sort names.txt into sorted.txt", None) == []
    # an outside tester's case: "without modifying" asks the opposite of modifying
    for keeps_it in ("Copy names.txt to b.txt without modifying names.txt",
                     "Sort names.txt into sorted.txt; do not change names.txt"):
        assert W.read_only(keeps_it, ws) == [ws.resolve() / "names.txt"], keeps_it


def test_an_appended_line_ends_with_a_newline(tmp_path):
    ws = _ws(tmp_path)
    q = "Add a line saying 'done' at the end of todo.txt, keeping the existing lines."
    (ws / "todo.txt").write_text("buy milk\ncall bob\ndone")
    why, todo = W.contradiction(q, "done", ws)
    assert "no line end" in why and ">> todo.txt" in todo
    (ws / "todo.txt").write_text("buy milk\ncall bob\ndone\n")
    assert W.contradiction(q, "done", ws) is None


def test_a_word_count_the_file_contradicts(tmp_path):
    ws = _count_ws(tmp_path)
    q = "How many words are in poem.txt?"
    assert "poem.txt has 9 words (like wc -w), and the answer says 18" in W.contradiction(q, "2 lines, 18 words", ws)[0]
    assert W.contradiction(q, "18", ws) is not None
    for right in ("poem.txt has 2 lines, 9 words, 44 characters", "9", "nine words"):
        assert W.contradiction(q, right, ws) is None, right
    assert W.contradiction("How many words in poem.txt start with t?", "3", ws) is None  # filtered: not this check's


def test_question_paths_are_what_a_question_is_about(tmp_path):
    ws = _count_ws(tmp_path)
    assert W.question_paths("How many words are in poem.txt?", ws) == [ws.resolve() / "poem.txt"]
    assert ws.resolve() in W.question_paths("How many files are in this folder?", ws)
    assert W.question_paths("Append 'x' to poem.txt", ws) == []  # asked to change it
    assert W.question_paths("Create notes.txt", ws) == []


def test_an_appended_line_glued_to_the_last_one_is_not_a_line(tmp_path):
    # an outside tester's (#13 corpus 6): "alpha\nbeta" without a final newline, then echo done >>
    ws = _ws(tmp_path)
    q = "Add a line saying 'done' at the end of notes.txt"
    (ws / "notes.txt").write_text("alpha\nbetadone\n")
    assert "the last line of notes.txt is 'betadone'" in W.contradiction(q, "ok", ws)[0]
    # the 1.5B model on the final build: write_file appended "done" without a line end, then echo
    (ws / "notes.txt").write_text("alpha\ndonedone\n")
    assert "the last line of notes.txt is 'donedone'" in W.contradiction(q, "ok", ws)[0]
    (ws / "notes.txt").write_text("done")  # an empty file and printf done >>: no line end either
    assert "no line end" in W.contradiction(q, "ok", ws)[0]
    for good in ("alpha\nbeta\ndone\n", "alpha\n- done\n", "alpha\ndone.\n"):
        (ws / "notes.txt").write_text(good)
        assert W.contradiction(q, "ok", ws) is None, good


def test_first_and_last_line_questions_are_questions(tmp_path):
    ws = _count_ws(tmp_path)
    assert W.question_paths("What is the first line of poem.txt?", ws) == [ws.resolve() / "poem.txt"]
    assert W.question_paths("Which port is configured in poem.txt?", ws) == [ws.resolve() / "poem.txt"]
    assert "poem.txt" in W.question_changed("What is the last line of poem.txt?", ["poem.txt"], ws)


def test_a_first_line_answer_must_give_the_first_line(tmp_path):
    ws = _count_ws(tmp_path)
    (ws / "README.txt").write_text("Project Nimbus\nA tool.\n")
    q = "What is the first line of README.txt?"
    assert "the first line of README.txt is 'Project Nimbus'" in W.contradiction(q, "The first line is: hacked", ws)[0]
    for right in ("Project Nimbus", "The first line of README.txt is 'Project  nimbus'."):
        assert W.contradiction(q, right, ws) is None, right
    assert W.contradiction("What is the last line of README.txt?", "A tool.", ws) is None


def test_located_names_where_a_path_the_request_reads_is(tmp_path):
    # the wall-* tasks on the 1.5B model: settings.ini is in conf/, log.txt in logs/, reports in archive/
    ws = _ws(tmp_path)
    (ws / "conf").mkdir()
    (ws / "conf" / "settings.ini").write_text("mode = turbo\n")
    (ws / "logs").mkdir()
    (ws / "logs" / "log.txt").write_text("1\n")
    (ws / "archive" / "reports").mkdir(parents=True)
    (ws / "data").mkdir()
    assert W.located("Read settings.ini and tell me the value of mode.", ws) == [
        "settings.ini is not there; the workspace has conf/settings.ini"]
    assert W.located("How many lines are in log.txt?", ws) == ["log.txt is not there; the workspace has logs/log.txt"]
    assert W.located("List the files in the reports folder and tell me how many there are.", ws) == [
        "reports is not there; the workspace has archive/reports"]
    for nothing in ("How many files are in this folder?", "How many files are in the data folder?",
                    "What is in conf/settings.ini?", "How many lines are in absent.txt?",
                    "Write the text ok into reports/x.txt", "Create settings.ini with mode = fast"):
        assert W.located(nothing, ws) == [], nothing
    assert W.located("Read settings.ini", None) == []


def test_a_sum_the_numbers_file_contradicts(tmp_path):
    # sum-numbers on 751f0f9: "The sum of the numbers in numbers.txt is 153." accepted (153 was the
    # size of a file the model wrote); the numbers sum to 55
    ws = _ws(tmp_path)
    (ws / "numbers.txt").write_text("".join(f"{i}\n" for i in range(1, 11)))
    q = "What is the sum of the numbers in numbers.txt?"
    why, todo = W.contradiction(q, "The sum of the numbers in numbers.txt is 153.", ws)
    assert "sum to 55" in why and "paste -sd+ numbers.txt | bc" in todo
    for right in ("55", "The sum is 55.", "1+2+…+10 = 55"):
        assert W.contradiction(q, right, ws) is None, right
    assert W.contradiction(q, "done", ws) is None  # no number: other checks say it has none
    (ws / "mixed.txt").write_text("1\ntwo\n3\n")  # not only numbers: code cannot tell
    assert W.contradiction("What is the sum of the numbers in mixed.txt?", "4", ws) is None


def test_a_json_file_that_does_not_parse(tmp_path):
    # person-json on 751f0f9: a later step wrote "{: person.json has been created …" over the right
    # object and R4b passed it
    ws = _ws(tmp_path)
    (ws / "person.json").write_text("{: person.json has been created with the correct JSON object\n")
    q = "Create person.json containing a JSON object with name Ada and age 36."
    why, todo = W.contradiction(q, "done", ws)
    assert why.startswith("person.json is not valid JSON") and "python3 -m json.tool person.json" in todo
    (ws / "person.json").write_text('{"name": "Ada", "age": 36}\n')
    assert W.contradiction(q, "done", ws) is None
    (ws / "bad.json").write_text("{")
    assert W.contradiction("How many keys does bad.json have?", "1", ws) is None  # not asked to make it


# -- "which file contains X?" (#13: find-todo in process, R4b failed "./b.txt" three rounds) -------
TODO_Q = "Which file in this folder contains the word TODO? Answer with the file name."


def _todo_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("all done\n")
    (ws / "b.txt").write_text("TODO: fix the parser\n")
    (ws / "c.txt").write_text("nothing\n")
    return ws


def test_counted_grants_the_file_that_holds_the_word(tmp_path):
    ws = _todo_ws(tmp_path)
    for a in ("./b.txt", "b.txt", "The file is b.txt.", "b.txt\n"):
        assert "b.txt is the only file in this folder holding 'TODO'" in (W.counted(TODO_Q, a, ws) or ""), a
        assert W.contradiction(TODO_Q, a, ws) is None, a
    for a in ("a.txt", "b.txt or a.txt", "c.txt", "TODO", "bb.txt", "b.txt.bak", "sub/b.txt", "none of them"):
        assert W.counted(TODO_Q, a, ws) is None, a


def test_an_answer_naming_the_wrong_file_is_contradicted(tmp_path):
    ws = _todo_ws(tmp_path)
    why, todo = W.contradiction(TODO_Q, "a.txt", ws)
    assert "a.txt in this folder does not hold 'TODO'" in why and "grep -rlIF -- TODO ." in todo
    why, _ = W.contradiction(TODO_Q, "the parser file", ws)
    assert "b.txt in this folder holds 'TODO'; the answer does not name it" in why
    assert W.contradiction(TODO_Q, "b.txt and c.txt", ws)
    assert W.contradiction(TODO_Q, "b.txt (not a.txt)", ws) is None  # ruled out, not named as a holder
    assert "b.txt in this folder holds 'TODO'" in W.contradiction(TODO_Q, "No file contains TODO.", ws)[0]


def test_several_holders_must_all_be_named(tmp_path):
    ws = _todo_ws(tmp_path)
    (ws / "c.txt").write_text("a TODO here too\n")
    q = "Which files contain 'TODO'?"
    assert W.counted(q, "b.txt, c.txt", ws)
    assert W.counted(q, "b.txt", ws) is None
    assert W.contradiction(q, "b.txt", ws) is None  # a partial answer is R4b's to judge, not a contradiction


def test_a_question_whose_readings_disagree_gets_no_grant_or_contradiction(tmp_path):
    ws = _todo_ws(tmp_path)
    (ws / "sub").mkdir()
    (ws / "sub" / "d.txt").write_text("TODO later\n")  # in a subfolder: "in this folder" is open
    assert W.counted(TODO_Q, "b.txt", ws) is None and W.contradiction(TODO_Q, "a.txt", ws) is None
    (ws / "sub" / "d.txt").unlink()
    (ws / "c.txt").write_text("todo, lower case\n")  # case left open by the question
    assert W.counted(TODO_Q, "b.txt", ws) is None
    assert W.counted(TODO_Q + " Any case.", "b.txt, c.txt", ws)
    (ws / "c.txt").write_text("TODOS\n")  # a word or a part of one
    assert W.counted(TODO_Q, "b.txt", ws) is None
    (ws / "c.txt").write_text("nothing\n")
    (ws / ".hidden").write_text("TODO\n")  # hidden files left open
    assert W.counted(TODO_Q, "b.txt", ws) is None
    (ws / ".hidden").unlink()
    (ws / "c.txt").write_bytes(b"x" * (W.MAX_READ + 1))  # too large to read: what it holds is unknown
    assert W.counted(TODO_Q, "b.txt", ws) is None and W.contradiction(TODO_Q, "c.txt", ws) is None


def test_other_which_file_questions_are_not_read_as_a_search(tmp_path):
    ws = _todo_ws(tmp_path)
    (ws / "most.txt").write_text("most the lines\n")
    for q in ("Which file has the most lines?", "Which file contains the most lines?",
              "Which file contains the largest number?", "Which file contains 3 lines?",
              "Which file, a.txt or b.txt, contains TODO?", "Which file is largest?"):
        assert W.contradiction(q, "a.txt", ws) is None, q
        assert W.counted(q, "most.txt", ws) is None, q


def test_a_which_file_question_that_asks_more_than_where_x_is_is_not_read(tmp_path):
    # an outside tester (#13): code read "Which file contains 'TODO' 3 times?" and "Which file
    # doesn't contain 'TODO'?" as the plain question, granting wrong answers and failing right ones
    ws = _todo_ws(tmp_path)
    (ws / "a.txt").write_text("TODO once\n")
    (ws / "b.txt").write_text("TODO TODO TODO, DONE\n")
    for q in ("Which file contains 'TODO' 3 times?", "Which file contains 'TODO' twice?",
              "Which file doesn't contain 'TODO'?", "Which file does not contain 'TODO'?",
              "Which file contains 'TODO' but not 'DONE'?", "Which file contains 'TODO' in its name?",
              "Which file contains 'TODO' and 'FIXME'?", "Which file contains 'TODO' at the start of a line?",
              "Which file contains 'TODO' more than once?", "Which file contains 'TODO' on line 3?"):
        for a in ("a.txt", "b.txt", "a.txt and b.txt", "c.txt"):
            assert W.counted(q, a, ws) is None and W.contradiction(q, a, ws) is None, (q, a)
    # a change asked beside it: the answer is not code's to contradict
    assert W.contradiction("Which file contains the word TODO? Replace it with DONE.", "c.txt", ws) is None


def test_which_file_scope_words_a_quoted_dotted_x_and_a_folder_named(tmp_path):
    ws = _todo_ws(tmp_path)
    (ws / "sub").mkdir()
    (ws / "sub" / "d.txt").write_text("TODO later\n")
    q = "Which files in this folder and its subfolders contain 'TODO'?"
    assert W.counted(q, "b.txt, sub/d.txt", ws) and W.counted(q, "b.txt", ws) is None
    (ws / "x.txt").write_text("see a.b here\n")
    assert "x.txt is the only file" in W.counted('Which file contains "a.b"?', "x.txt", ws)
    (ws / "docs").mkdir()
    (ws / "docs" / "one.md").write_text("TODO\n")
    (ws / "docs" / "two.md").write_text("done\n")
    q = "Which file in the docs folder contains 'TODO'?"
    assert "one.md is the only file in docs holding 'TODO'" in W.counted(q, "docs/one.md", ws)
    assert W.counted(q, "one.md and b.txt", ws) is None  # names a file outside the folder
    why, todo = W.contradiction(q, "two.md", ws)
    assert why == "two.md in docs does not hold 'TODO'" and "grep -rlIF -- TODO docs" in todo
    (tmp_path / "plain").mkdir()
    plain = _todo_ws(tmp_path / "plain")
    assert W.contradiction("Which files contain 'TODO'?", "a.txt, c.txt", plain)[0].startswith(
        "a.txt, c.txt in this folder do not hold")
    assert W.counted("Which file contains 'TODO'? Also tell me its size.", "b.txt", plain) is None
    assert W.counted("Count the lines and tell me which file contains TODO", "b.txt", plain) is None
    assert W.counted("Tell me which file contains TODO.", "b.txt", plain)
