"""Issue #13 items 10–12: the executor's action shapes, tool order and rolling prompt window."""

from __future__ import annotations

import json

from agentui.roles.actions import Window, action_model, order_tools, suggested_call

REQ = {"shell": "command", "read_file": "path", "glob": "pattern"}
Action = action_model(["shell", "read_file", "glob"], REQ)


def test_common_small_model_shapes_are_accepted():
    cases = [
        ({"tool": "shell", "command": "ls"}, ("shell", {"command": "ls"})),  # top-level argument
        ({"name": "shell", "arguments": json.dumps({"command": "ls -la"})}, ("shell", {"command": "ls -la"})),
        ({"tool": "shell", "args": "wc -l < a.txt"}, ("shell", {"command": "wc -l < a.txt"})),  # bare string
        ({"function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}, ("read_file", {"path": "a.txt"})),
        ({"shell": "echo hi"}, ("shell", {"command": "echo hi"})),
        ({"tool": "shell", "args": {"cmd": "pwd"}}, ("shell", {"command": "pwd"})),  # one string, wrong key
        ({"tool": "glob", "args": {"pattern": "*.py"}}, ("glob", {"pattern": "*.py"})),  # the canonical shape
    ]
    for raw, (tool, args) in cases:
        a = Action.model_validate(raw)
        assert (a.tool, a.args) == (tool, args), raw


def test_finish_takes_its_answer_from_wherever_it_was_put():
    assert Action.model_validate({"tool": "finish", "answer": "3"}).output == "3"
    assert Action.model_validate({"tool": "finish", "output": 42}).output == "42"
    a = Action.model_validate({"tool": "shell", "args": {"command": "ls"}, "output": "the answer is 4"})
    assert a.output == "the answer is 4" and a.args == {"command": "ls"}


def test_intent_command_puts_shell_first_and_is_suggested():
    specs = [{"name": n, "parameters": {}} for n in ("file_search", "glob", "read_file", "shell")]
    intent = "Count the ERROR lines with: grep ERROR stock.log | wc -l"
    assert order_tools(specs, intent)[0]["name"] == "shell"
    assert order_tools(specs, "read_file config.ini and report the port")[0]["name"] == "read_file"
    first = json.loads(suggested_call(intent, ["shell", "read_file"]))
    assert first == {"tool": "shell", "args": {"command": "grep ERROR stock.log | wc -l"}}
    assert suggested_call("summarise the notes", ["shell"]) is None
    assert suggested_call(intent, ["read_file"]) is None


def test_window_keeps_one_line_per_earlier_step_and_the_last_in_full():
    w = Window("SYS", "TASK", last_cap=100)
    for i in range(8):
        w.step(f'{{"tool": "shell", "args": {{"command": "seq {i}"}}}}', "x" * 5000, f"shell 'seq {i}' → ok: 1")
    msgs = w.messages()
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[1]["content"].count("→ ok") == 7 and "seq 7" in msgs[2]["content"]
    assert len(msgs[3]["content"]) < 200  # the last result, capped


def test_brief_keeps_what_to_do_when_it_cuts() -> None:
    """A cut failure text keeps its fix (#13): the replan prompt needs the command, not the why."""
    from agentui.roles.actions import FIX, brief

    why = "contradicted by the workspace: data.csv has 6 lines in all and the task excludes header " * 3
    text = f"{why}{FIX}count data.csv again (e.g. tail -n +2 data.csv | wc -l), and report that number"
    out = brief(text, 240)
    assert len(out) <= 240 and out.endswith("report that number") and out.startswith("contradicted")
    assert brief("short", 240) == "short" and brief("x" * 300, 240) == "x" * 240
    long_fix = brief(f"why{FIX}{'y' * 400}", 240)
    assert len(long_fix) <= 240 and FIX in long_fix


def test_a_suggested_find_exec_without_its_end_is_ended():
    """#13 (find-todo over HTTP): JSON cannot hold `\\;` unescaped, so the grammar-constrained 1.5B
    planner's intent read `find . -type f -exec grep -l 'TODO' {}`; the executor started with it and
    find failed on the missing end. The first call suggested ends it with ` +`; an ended one stays."""
    def cmd(intent: str) -> str:
        return json.loads(suggested_call(intent, ["shell"]))["args"]["command"]

    assert cmd("Search the files with: find . -type f -exec grep -l 'TODO' {}") == \
        "find . -type f -exec grep -l 'TODO' {} +"
    assert cmd("List with: find . -name '*.txt' -exec wc -l {} | sort") == \
        "find . -name '*.txt' -exec wc -l {} + | sort"
    # r16 find-todo: the grammar turned `\\;` into `\\",` — the intent ended `{} ",`
    assert cmd("Search with: find . -type f -exec grep -l 'TODO' {} \", ") == "find . -type f -exec grep -l 'TODO' {} +"
    assert cmd("Search with: find . -exec grep -l TODO {} \\") == "find . -exec grep -l TODO {} +"
    for ended in ("find . -exec grep -l TODO {} \\;", "find . -exec grep -l TODO {} +",
                  "find . -exec sh -c 'grep TODO {}' \\;", 'find . -exec sh -c "grep TODO {}"'):
        assert cmd(f"Search with: {ended}") == ended


def test_prose_after_with_is_not_suggested_as_a_command():
    """#13 (sum-numbers over HTTP): the 1.5B planner's intent read "…with: read_file 'numbers.txt';
    Convert the content to integers with: map 'int' on … Write the sum to a file with: write_file …";
    "file" made it look like a command and the executor ran that prose four times, exit 127. A
    suggestion's first word is a program on PATH or a shell builtin."""
    prose = ("Calculate the sum of the numbers in numbers.txt with: read_file 'numbers.txt'; Convert the "
             "content to integers with: map 'int' on read_file 'numbers.txt'; Write the sum to a file with: "
             "write_file 'sum.txt'")
    assert suggested_call(prose, ["shell", "read_file"]) is None
    assert suggested_call("Tally them with: frobnicate-9 data.txt | wc -l", ["shell"]) is None
    for cmd in ("wc -l notes.txt", "LC_ALL=C sort names.txt | uniq", "[ -f a.txt ] && cat a.txt",
                "echo ok > out.txt", "cd docs && ls *.md | wc -l"):
        assert json.loads(suggested_call(f"Do it with: {cmd}", ["shell"]))["args"]["command"] == cmd


def test_prose_after_the_command_is_left_out_of_the_suggestion():
    # an outside tester (#13): "Run script.py with: python3 script.py and report the number it
    # prints" suggested `python3 script.py and report the number it prints`
    for intent in ("Run script.py with: python3 script.py and report the number it prints",
                   "Run it with: python3 script.py, then report what it prints.",
                   "Count with: wc -l < notes.txt and then tell the user"):
        cmd = json.loads(suggested_call(intent, ["shell"]))["args"]["command"]
        assert "report" not in cmd and "tell" not in cmd and cmd.startswith(("python3 script.py", "wc -l")), cmd
    kept = "grep -c ERROR app.log && echo done"  # a command's own `&&` stays
    assert json.loads(suggested_call(f"Do it with: {kept}", ["shell"]))["args"]["command"] == kept
