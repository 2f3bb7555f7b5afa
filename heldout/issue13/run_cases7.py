#!/usr/bin/env python3
"""Black-box cases, part 7: missing-folder note (shell), write_file line ends, name-search text fallback,
read-only source refusal at the executor.

usage: python3 run_cases7.py /path/to/agentui [case-name-substring ...]

Behaviour under test (developers' description, paraphrased):
 1. shell: a command failing with "No such file or directory" while WRITING into a missing folder gets the note
    "(the folder out does not exist: mkdir -p creates it with any missing parent folders and skips folders that
    exist, e.g. mkdir -p out)". A command that only READS a missing path gets no such note. The note never names a
    folder outside the workspace. With a namesake of the missing file elsewhere in the workspace, the older
    "X is not there; the workspace has Y" note is given instead.
 2. write_file: several lines without a final line end get one added; a line appended to a file ending with a line
    end gets one too. A single line alone, a piece appended to a file not ending with a line end, an append to an
    empty/new file, text already ending with \\n or \\r\\n: written exactly. Never hangs/crashes on special files
    (FIFO, directory, symlink out of the workspace).
 3. file_search / glob of a plain word: no NAME match but files hold the word -> those files (<= 3) one per line,
    then "(no files matching 'W' under . by name; the files above hold 'W' in their text. To search text yourself
    use shell: grep -l 'W' <files>)". Never a secret, binary or out-of-folder file. Nothing holds the word ->
    "no files matching 'W' under ." (glob: "no paths match 'W'"). A real glob pattern never text-searches.
 4. "Copy A to B" / "Sort the lines of A into/to B" / "Write A converted to upper/lower case into B": a write_file
    to A or a shell command writing A is refused before it runs: "REFUSED: the request only reads A; do not change
    it. ..." Not with in place/itself/overwrite/replace/edit/modify/append/add/remove/delete/move, nor when B is A.
    Questions keep their rule with the same text.
 5. Honest work for a question / copy / sort still succeeds.

Tool-level cases (t_*) script executor tool calls and read the tool result the executor is sent next, plus the
files on disk. ctl_* = honest/allowed behaviour that must hold; atk_* = must not happen. Docstrings marked
UNCERTAIN assert beyond the description's letter.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, passes, meta_pass, tool_quote  # noqa: E402

CASES = []
TMP = []
NOTES = []


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def case(fn):
    CASES.append(fn)
    return fn


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def wf(path, content, append=None):
    a = {"path": path, "content": content}
    if append is not None:
        a["append"] = append
    return {"tool": "write_file", "args": a}


def fs(query, path=None):
    a = {"query": query}
    if path is not None:
        a["path"] = path
    return {"tool": "file_search", "args": a}


def gl(pattern):
    return {"tool": "glob", "args": {"pattern": pattern}}


def fin(o):
    return {"tool": "finish", "output": o}


def q(s, n=300):
    return json.dumps((s or "")[:n])


def mkfiles(root, files):
    """files: {relpath: str | bytes | None (dir) | ('link', target) | ('fifo',)}"""
    for rel, c in (files or {}).items():
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(c, tuple) and c[0] == "link":
            os.symlink(c[1], p)
        elif isinstance(c, tuple) and c[0] == "fifo":
            os.mkfifo(p)
        elif c is None:
            os.makedirs(p, exist_ok=True)
        elif isinstance(c, bytes):
            with open(p, "wb") as f:
                f.write(c)
        else:
            with open(p, "w", newline="", encoding="utf-8") as f:
                f.write(c)


def newbase():
    b = tempfile.mkdtemp(prefix="i13c7_")
    TMP.append(b)
    return b


def readb(path):
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        return f.read()


# ============================================================ tool-level driver
def tool_results(acts, ws_files=None, outside=None, extra=(), timeout=60):
    """Workspace base/ws; `outside` files made under base. Executor makes `acts` then finishes.
    Returns (run, [tool result text per act], base, ws)."""
    base = newbase()
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    mkfiles(base, outside)
    mkfiles(ws, ws_files)
    p = plan(["done"], [{"intent": "Do the steps", "tools": ["shell", "read_file", "glob", "file_search", "write_file"],
                         "criteria": ["done"]}])
    first = seq(list(acts) + [fin("done")])

    def ex(body, ctx):
        # act only in the first attempt of the first plan: a retry must not repeat an append
        if ctx["round"] <= 1 and ctx["attempt"] == "Attempt 1":
            return first(body, ctx)
        return {"tool": "infeasible", "output": "stop (test harness)"}
    s = Script("do the steps", p, executor=ex,
               validator=passes("done"), meta=meta_pass("done", "done"))
    r = run_agent(s, "do the steps", keep_ws=ws, extra_args=list(extra), timeout=timeout)
    TMP.append(r.dd)
    check(r.rc != "timeout", "agentui run timed out (hang?) after %.0fs" % r.wall)
    ex = r.reqs("ExecutorAction")
    outs = [H.FakeLLM.last_user(b) for b in ex[1:len(acts) + 1]]
    check(len(outs) == len(acts), "executor saw only %d of %d results: %s" % (len(outs), len(acts), r.brief()))
    if os.environ.get("I13_VERBOSE"):
        for x in outs:
            print("    tool result:", q(x, 500), flush=True)
    return r, outs, base, ws


NOTE_RE = re.compile(r"\(the folder (.+?) does not exist")
MK = "mkdir -p creates it with any missing parent folders and skips folders that exist"


def note_of(o):
    m = NOTE_RE.search(o)
    return m.group(1) if m else None


def mkdir_note(o):
    i = o.find("(the folder ")
    if i < 0:
        return None
    j = o.find(")", o.find("e.g. mkdir -p", i))
    return o[i:j + 1]


# ============================================================ 1. shell: missing folder note
@case
def ctl_sh_redirect_missing_folder():
    """1: `echo ok > out/status.txt` -> the exact note naming out, with e.g. mkdir -p out."""
    r, o, b, ws = tool_results([sh("echo ok > out/status.txt")])
    want = "(the folder out does not exist: %s, e.g. mkdir -p out)" % MK
    check(want in o[0], "note missing/different: " + q(o[0]))


@case
def ctl_sh_append_redirect_missing_folder():
    """1: `echo x >> logs/run.log` (append redirect is a write) -> note names logs."""
    r, o, b, ws = tool_results([sh("echo x >> logs/run.log")])
    check(note_of(o[0]) == "logs" and "mkdir -p logs" in o[0], "no note for logs: " + q(o[0]))


@case
def ctl_sh_mkdir_without_parent():
    """1: `mkdir src/app tests` with no src -> note names src (mkdir -p example)."""
    r, o, b, ws = tool_results([sh("mkdir src/app tests")])
    n = note_of(o[0])
    check(n is not None and n.startswith("src") and "mkdir -p src" in o[0], "no note for src: " + q(o[0]))


@case
def ctl_sh_touch_deep():
    """1: `touch a/b/c.txt` -> a note whose mkdir -p example makes a/b (so the retry works)."""
    r, o, b, ws = tool_results([sh("touch a/b/c.txt")])
    n = note_of(o[0])
    check(n is not None, "no note: " + q(o[0]))
    check("mkdir -p a/b" in o[0], "example does not create a/b (retry would fail again): " + q(mkdir_note(o[0])))


@case
def atk_sh_cat_missing_no_note():
    """1: `cat logs/x.txt` only reads -> no mkdir note."""
    r, o, b, ws = tool_results([sh("cat logs/x.txt")])
    check("No such file" in o[0], "harness: unexpected result " + q(o[0]))
    check("mkdir -p" not in o[0] and note_of(o[0]) is None, "read got a mkdir note: " + q(o[0]))


@case
def atk_sh_input_redirect_missing_no_note():
    """1: `wc -l < logs/x.txt` -- '<' reads; a missing input gets no mkdir note."""
    r, o, b, ws = tool_results([sh("wc -l < logs/x.txt")])
    check("No such file" in o[0], "harness: unexpected result " + q(o[0]))
    check("mkdir -p" not in o[0], "input redirect got a mkdir note: " + q(o[0]))


@case
def atk_sh_read_missing_write_existing():
    """1: `grep foo logs/x.txt > found.txt` -- the write target's folder exists; only the READ path is missing ->
    no mkdir note (logs is read, not written)."""
    r, o, b, ws = tool_results([sh("grep foo logs/x.txt > found.txt")])
    check("mkdir -p" not in o[0], "read of missing logs/x.txt got a mkdir note: " + q(o[0]))


@case
def atk_sh_cp_missing_source_no_note():
    """1: `cp data/in.txt copy.txt` -- data/ is missing but only read -> no mkdir note for data."""
    r, o, b, ws = tool_results([sh("cp data/in.txt copy.txt")], extra=["--yes"])
    check("No such file" in o[0], "harness: unexpected result " + q(o[0]))
    check("mkdir -p data" not in o[0], "read source got a mkdir note: " + q(o[0]))


@case
def atk_sh_ls_missing_no_note():
    """1: `ls reports/` only reads -> no mkdir note."""
    r, o, b, ws = tool_results([sh("ls reports/")])
    check("mkdir -p" not in o[0], "ls got a mkdir note: " + q(o[0]))


@case
def ctl_sh_cp_into_missing_folder():
    """1: `cp a.txt backup/copy.txt` -- writing into missing backup/ -> note names backup. UNCERTAIN: cp's own error
    text ('cannot create regular file') rather than a shell redirect."""
    r, o, b, ws = tool_results([sh("cp a.txt backup/copy.txt")], {"a.txt": "x\n"}, extra=["--yes"])
    check(note_of(o[0]) == "backup", "no note for backup: " + q(o[0]))


@case
def ctl_sh_space_in_folder():
    """1: `echo ok > "my out/s.txt"` -> note names 'my out'; UNCERTAIN: its mkdir -p example is shell-quoted so
    the suggested command works when copied."""
    r, o, b, ws = tool_results([sh('echo ok > "my out/s.txt"')])
    n = note_of(o[0])
    check(n is not None and "my out" in n, "no note naming 'my out': " + q(o[0]))
    m = re.search(r"e\.g\. (mkdir -p .*?)\)\s*$", mkdir_note(o[0]) or "")
    check(m and ("'my out'" in m.group(1) or '"my out"' in m.group(1) or "my\\ out" in m.group(1)),
          "example not quoted, would create two folders: " + q(mkdir_note(o[0])))


@case
def ctl_sh_namesake_older_note():
    """1: `echo ok > out/status.txt` while logs/status.txt exists -> the older 'is not there; the workspace has'
    note instead of the mkdir note."""
    r, o, b, ws = tool_results([sh("echo ok > out/status.txt")], {"logs/status.txt": "old\n"})
    check("is not there" in o[0] and "logs/status.txt" in o[0], "no namesake note: " + q(o[0]))
    check("mkdir -p" not in o[0], "mkdir note given as well as (not instead of) the namesake note: " + q(o[0]))


@case
def atk_sh_dotdot_outside():
    """1: `echo ok > ../gone/x.txt` (outside the workspace) -> the note must not name ../gone (outside)."""
    r, o, b, ws = tool_results([sh("echo ok > ../gone/x.txt")], extra=["--yes"])
    n = mkdir_note(o[0])
    check(n is None or ("gone" not in n and ".." not in n), "note names an outside folder: " + q(n))


@case
def atk_sh_absolute_outside():
    """1: `echo ok > <base>/nowhere/x.txt` (absolute, outside) -> the note must not name the outside folder."""
    base_hint = []

    r, o, b, ws = tool_results([sh("echo ok > \"$(dirname \"$PWD\")\"/nowhere7/x.txt")], extra=["--yes"])
    n = mkdir_note(o[0])
    check(n is None or "nowhere7" not in n, "note names an outside folder: " + q(n))
    del base_hint


@case
def atk_sh_cd_outside_then_write():
    """1: `cd /tmp && echo ok > i13c7_nowhere/x.txt` -- the relative folder is /tmp/i13c7_nowhere (outside) -> the
    note must not name it. UNCERTAIN: needs the tool to follow the cd."""
    r, o, b, ws = tool_results([sh("cd /tmp && echo ok > i13c7_nowhere/x.txt")], extra=["--yes"])
    n = mkdir_note(o[0])
    check(n is None or "i13c7_nowhere" not in n, "note names a folder outside the workspace: " + q(n))


@case
def atk_sh_symlink_dangling_outside():
    """1: ws/lnk -> <base>/target_gone (missing, outside); `echo ok > lnk/x.txt` -> the note must not name the
    outside folder (target_gone). UNCERTAIN: also should not advise `mkdir -p lnk` (it exists as a link) -- only
    the outside name is asserted."""
    r, o, b, ws = tool_results([sh("echo ok > lnk/x.txt")], {"lnk": ("link", "../target_gone")}, extra=["--yes"])
    n = mkdir_note(o[0])
    check(n is None or "target_gone" not in n, "note names the outside target: " + q(n))


@case
def ctl_sh_absolute_inside():
    """1: `echo ok > <ws>/out/x.txt` (absolute path inside the workspace) -> a note naming out. UNCERTAIN: the
    description's examples are relative."""
    r, o, b, ws = tool_results([sh('echo ok > "$PWD/out/x.txt"')])
    n = note_of(o[0])
    check(n is not None and n.rstrip("/").endswith("out"), "no note for an inside absolute path: " + q(o[0]))


@case
def ctl_sh_python_write_missing():
    """1: python open('out/x.txt','w') fails with No such file or directory -> note names out. UNCERTAIN: not a
    shell redirect/mkdir/touch form."""
    r, o, b, ws = tool_results([sh("python3 -c \"open('out/x.txt','w').write('x')\"")], extra=["--yes"])
    check("No such file" in o[0], "harness: unexpected " + q(o[0]))
    check(note_of(o[0]) == "out", "no note for out: " + q(o[0]))


# ============================================================ 2. write_file line ends
def wf_case(name, files, acts, path, want, doc, extra=()):
    def f():
        r, o, b, ws = tool_results(acts, files, extra=extra)
        got = readb(os.path.join(ws, path))
        for x in o:
            check(not x.startswith("ERROR") and "REFUSED" not in x, "write_file failed: " + q(x))
        check(got == want, "%s holds %r, expected %r (tool said %s)" % (path, (got or b"")[:80], want[:80],
                                                                         q(o[-1], 120)))
    f.__name__ = name
    f.__doc__ = doc
    CASES.append(f)


wf_case("ctl_wf_multiline_gets_newline", None, [wf("names.txt", "alice\nbob")], "names.txt", b"alice\nbob\n",
        "2: 'alice\\nbob' -> 'alice\\nbob\\n'.")
wf_case("ctl_wf_append_line_after_newline", {"log.txt": "a\nb\n"}, [wf("log.txt", "done", True)], "log.txt",
        b"a\nb\ndone\n", "2: 'done' appended to 'a\\nb\\n' -> 'a\\nb\\ndone\\n'.")
wf_case("ctl_wf_single_line_exact", None, [wf("s.txt", "ok")], "s.txt", b"ok", "2: a single line 'ok' alone -> 'ok'.")
wf_case("ctl_wf_append_piece_no_newline", {"g.txt": "hi"}, [wf("g.txt", " there", True)], "g.txt", b"hi there",
        "2: 'hi' + ' there' -> 'hi there'.")
wf_case("ctl_wf_append_empty_file", {"e.txt": ""}, [wf("e.txt", "x", True)], "e.txt", b"x",
        "2: append to an empty file is exact.")
wf_case("ctl_wf_append_new_file", None, [wf("new.txt", "x", True)], "new.txt", b"x",
        "2: append to a new file is exact.")
wf_case("ctl_wf_crlf_exact", None, [wf("w.txt", "a\r\nb\r\n")], "w.txt", b"a\r\nb\r\n",
        "2: text already ending with \\r\\n is exact (no \\n added, no conversion).")
wf_case("ctl_wf_trailing_blank_exact", None, [wf("t.txt", "a\nb\n\n")], "t.txt", b"a\nb\n\n",
        "2: text already ending with \\n (even a blank line) is exact.")
wf_case("ctl_wf_unicode_multiline", None, [wf("u.txt", "café\nnaïve ☃")], "u.txt", "café\nnaïve ☃\n".encode(),
        "2: unicode multi-line text gets one \\n, UTF-8 bytes intact.")
wf_case("ctl_wf_crlf_multiline_no_end", None, [wf("c.txt", "a\r\nb")], "c.txt", b"a\r\nb\r\n",
        "2: 'a\\r\\nb' -> a line end added. UNCERTAIN: expects the text's own \\r\\n style, not a bare \\n.")
wf_case("ctl_wf_append_after_crlf", {"c.txt": "a\r\n"}, [wf("c.txt", "done", True)], "c.txt", b"a\r\ndone\r\n",
        "2: 'done' appended to a CRLF file -> gets a line end. UNCERTAIN: expects \\r\\n (the file's style).")
wf_case("ctl_wf_append_two_then_piece", {"l.txt": "a\n"}, [wf("l.txt", "b", True), wf("l.txt", "c", True)],
        "l.txt", b"a\nb\nc\n", "2: two appends of a line each, both after a line end -> 'a\\nb\\nc\\n'.")
LONG = "\n".join("l%02d %s" % (i, "x" * 20) for i in range(40))
wf_case("ctl_wf_long_multiline", None, [wf("long.txt", LONG)], "long.txt", (LONG + "\n").encode(),
        "2: ~1 KB (40 lines) without a final line end -> exactly one \\n added, nothing cut. (A 210 KB write_file is "
        "impossible: the executor's reply is cut off at its token budget.)")
wf_case("ctl_wf_subfolder_path_spaces", None, [wf("my dir/a b.txt", "x\ny")], "my dir/a b.txt", b"x\ny\n",
        "2: path with spaces and a new parent folder; several lines -> \\n added.")


def special_case(name, files, act, doc, outside=None, check_outside=None, maxwall=30):
    def f():
        t0 = time.time()
        r, o, b, ws = tool_results([act], files, outside=outside, timeout=20)
        check(time.time() - t0 < maxwall + 15 and r.wall < maxwall,
              "took %.0fs -- the write hung until some timeout (%s)" % (r.wall, q(o[0], 160)))
        check("Traceback" not in o[0] and "Traceback" not in (r.err or ""), "crash: " + q(o[0] + r.err[-300:]))
        check(r.j is not None, "no JSON result (crash?) rc=%s err=%s" % (r.rc, q(r.err[-300:])))
        if check_outside:
            check_outside(b, o[0])
    f.__name__ = name
    f.__doc__ = doc
    CASES.append(f)


special_case("ctl_wf_fifo_present_other_write", {"pipe": ("fifo",)}, wf("other.txt", "a\nb"),
             "2 (control for the FIFO cases): a FIFO merely present in the workspace; write_file to another file must "
             "not hang (separates a write_file hang from a workspace-scan hang).")
special_case("atk_wf_fifo_write", {"pipe": ("fifo",)}, wf("pipe", "a\nb"),
             "2: write_file onto a FIFO with no reader must not hang or crash.")
special_case("atk_wf_fifo_append", {"pipe": ("fifo",)}, wf("pipe", "done", True),
             "2: append onto a FIFO (checking its last byte would block) must not hang or crash.")
special_case("atk_wf_dir_append", {"d/x.txt": "x\n"}, wf("d", "done", True),
             "2: append onto a directory -> an error, no crash/hang.")


def _outside_unchanged(b, o):
    got = readb(os.path.join(b, "outside.txt"))
    check(got == b"secret\n", "file outside the workspace changed to %r (tool: %s)" % (got, q(o, 160)))


special_case("atk_wf_symlink_out_append", {"link.txt": ("link", "../outside.txt")}, wf("link.txt", "done", True),
             "2: append through a symlink leading out of the workspace (no --yes): no hang/crash and the outside "
             "file is unchanged. UNCERTAIN: unchanged assumes an outside write is denied without approval.",
             outside={"outside.txt": "secret\n"}, check_outside=_outside_unchanged)
special_case("atk_wf_symlink_devzero_append", {"z": ("link", "/dev/zero")}, wf("z", "done", True),
             "2: append through a symlink to /dev/zero (reading 'the last byte' never ends) -> no hang/crash.")


# ============================================================ 3. file_search / glob text fallback
def fs_note(w, under="."):
    return ("(no files matching '%s' under %s by name; the files above hold '%s' in their text. To search text "
            "yourself use shell: grep -l '%s' <files>)" % (w, under, w, w))


def body_of(o):
    """Tool result without the RESULT header line."""
    lines = o.split("\n")
    if lines and lines[0].startswith(("RESULT", "ERROR")):
        lines = lines[1:]
    return "\n".join(lines).strip("\n")


@case
def ctl_fs_text_fallback_exact():
    """3: no name matches TODO; src/m.py holds it -> 'src/m.py' then the exact note line."""
    r, o, b, ws = tool_results([fs("TODO")], {"src/m.py": "# TODO fix\n", "README.md": "hello\n"})
    check(body_of(o[0]) == "src/m.py\n" + fs_note("TODO"), "unexpected result: " + q(o[0], 400))


@case
def ctl_glob_word_text_fallback():
    """3: glob 'TODO' (a plain word) -> the holding file listed, then a note that it holds 'TODO' in its text."""
    r, o, b, ws = tool_results([gl("TODO")], {"src/m.py": "# TODO fix\n"})
    bd = body_of(o[0]).split("\n")
    check(bd[0] == "src/m.py" and "hold 'TODO' in their text" in bd[-1] and "grep -l 'TODO'" in bd[-1],
          "unexpected: " + q(o[0], 400))


@case
def ctl_fs_nothing_holds():
    """3: nothing holds the word -> just "no files matching 'XYZZY' under ."."""
    r, o, b, ws = tool_results([fs("XYZZY")], {"a.txt": "hello\n"})
    check(body_of(o[0]) == "no files matching 'XYZZY' under .", "unexpected: " + q(o[0]))


@case
def ctl_glob_nothing_holds():
    """3: glob of a plain word nothing holds -> just "no paths match 'XYZZY'"."""
    r, o, b, ws = tool_results([gl("XYZZY")], {"a.txt": "hello\n"})
    check(body_of(o[0]) == "no paths match 'XYZZY'", "unexpected: " + q(o[0]))


@case
def ctl_fs_name_match_no_text_note():
    """3: a file NAME matches 'notes' -> the normal name result, no text note (even though other.md holds it)."""
    r, o, b, ws = tool_results([fs("notes")], {"notes.txt": "x\n", "other.md": "see notes\n"})
    check("notes.txt" in o[0] and "in their text" not in o[0] and "other.md" not in o[0], "unexpected: " + q(o[0]))


@case
def atk_fs_at_most_three():
    """3: six files hold the word -> at most 3 names before the note."""
    files = {"f%d.txt" % i: "TODO %d\n" % i for i in range(6)}
    r, o, b, ws = tool_results([fs("TODO")], files)
    bd = body_of(o[0]).split("\n")
    names = [x for x in bd if x and not x.startswith("(")]
    check("in their text" in o[0], "no text note: " + q(o[0]))
    check(1 <= len(names) <= 3, "%d names listed: %s" % (len(names), q(o[0], 400)))


@case
def atk_fs_secrets_not_named():
    """3: .env, id_rsa, server.key, .aws/credentials hold the word; notes.md too -> only notes.md listed."""
    files = {".env": "TOKEN=1 # TODO\n", "id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\nTODO\n",
             "server.key": "-----BEGIN PRIVATE KEY-----\nTODO\n", ".aws/credentials": "[default]\n# TODO\n",
             "notes.md": "TODO: write\n"}
    r, o, b, ws = tool_results([fs("TODO"), gl("TODO")], files)
    for x in o:
        for s in (".env", "id_rsa", "server.key", "credentials"):
            check(s not in x, "secret %s named: %s" % (s, q(x, 400)))
        check("notes.md" in x, "notes.md not listed: " + q(x, 400))


@case
def atk_fs_only_secret_holds():
    """3: only .env holds the word -> plain "no files matching 'hunter2' under ." (nothing hinting at .env)."""
    r, o, b, ws = tool_results([fs("hunter2")], {".env": "PASSWORD=hunter2\n", "a.txt": "x\n"})
    check(body_of(o[0]) == "no files matching 'hunter2' under .", "unexpected: " + q(o[0]))


@case
def atk_fs_binary_not_named():
    """3: only a binary file (NUL bytes) holds the word -> not listed."""
    r, o, b, ws = tool_results([fs("TODO")], {"data.bin": b"\x00\x01TODO\x00\xff\xfe", "a.txt": "x\n"})
    check("data.bin" not in o[0], "binary file named: " + q(o[0]))
    check(body_of(o[0]) == "no files matching 'TODO' under .", "unexpected: " + q(o[0]))


@case
def atk_fs_outside_searched_folder():
    """3: file_search TODO under sub; only top.txt (outside sub) holds it -> not listed."""
    r, o, b, ws = tool_results([fs("TODO", "sub")], {"sub/a.txt": "x\n", "top.txt": "TODO\n"})
    check("top.txt" not in o[0], "file outside the searched folder named: " + q(o[0]))


@case
def atk_fs_symlink_out_of_workspace():
    """3: ws/ext -> <base>/outdir (holds TODO), ws/l.txt -> <base>/out.txt (holds TODO) -> neither listed."""
    r, o, b, ws = tool_results([fs("TODO"), gl("TODO")], {"ext": ("link", "../outdir"), "l.txt": ("link", "../out.txt"),
                                                          "a.txt": "x\n"},
                               outside={"outdir/s.txt": "TODO\n", "out.txt": "TODO\n"})
    for x in o:
        check("s.txt" not in x and "l.txt" not in x, "file outside the workspace named via a link: " + q(x))


@case
def atk_fs_dotdot_path():
    """3: file_search TODO with path '..' (no --yes) -> never names a file outside the workspace."""
    r, o, b, ws = tool_results([fs("TODO", "..")], {"a.txt": "x\n"}, outside={"secret_out.txt": "TODO\n"})
    check("secret_out" not in o[0], "outside file named: " + q(o[0]))


@case
def atk_glob_pattern_no_text_search():
    """3: glob '*.zip' (a real pattern) where files hold '*.zip' / 'zip' -> "no paths match '*.zip'", no text
    search."""
    r, o, b, ws = tool_results([gl("*.zip")], {"readme.txt": "download *.zip files\n", "b.txt": "zip\n"})
    check("in their text" not in o[0] and "readme.txt" not in o[0], "text search for a pattern: " + q(o[0]))
    check("no paths match '*.zip'" in o[0], "unexpected: " + q(o[0]))


@case
def atk_fs_excludes_git_dir():
    """3: only .git/config and node_modules/x/i.js hold the word -> not listed. UNCERTAIN: the description does not
    list .git/node_modules (the older hint search skips them)."""
    r, o, b, ws = tool_results([fs("XTODOX")], {".git/config": "XTODOX\n", "node_modules/x/i.js": "// XTODOX\n",
                                                "a.txt": "x\n"})
    check(".git" not in o[0] and "node_modules" not in o[0], "vendored/VCS file named: " + q(o[0]))


@case
def ctl_fs_query_with_quote():
    """3: query "it's" held by a.txt -> listed; UNCERTAIN: the suggested grep command is valid shell (not
    grep -l 'it's')."""
    r, o, b, ws = tool_results([fs("it's")], {"a.txt": "it's here\n"})
    check("a.txt" in o[0], "holder not listed: " + q(o[0]))
    check("grep -l 'it's'" not in o[0], "suggested command is broken shell quoting: " + q(o[0], 400))


@case
def ctl_fs_text_fallback_under_sub():
    """3: file_search TODO under sub; sub/deep/x.md holds it -> listed, note says 'under sub'."""
    r, o, b, ws = tool_results([fs("TODO", "sub")], {"sub/deep/x.md": "TODO\n", "sub/y.txt": "no\n"})
    check(body_of(o[0]) == "sub/deep/x.md\n" + fs_note("TODO", "sub"), "unexpected: " + q(o[0], 400))


@case
def atk_fs_symlink_to_secret():
    """3: alias.txt -> .env (inside the workspace); only .env holds the word -> alias.txt not listed (its text is a
    secret's). UNCERTAIN: the link's own name is not a secret's name."""
    r, o, b, ws = tool_results([fs("hunter2")], {".env": "PASSWORD=hunter2\n", "alias.txt": ("link", ".env")})
    check("alias.txt" not in o[0] and ".env" not in o[0], "secret's text surfaced via a link: " + q(o[0]))


@case
def atk_fs_query_dollar_quote():
    """3: query "it's $(id)" held by a.txt -> the suggested grep must not be double-quoted with a live $( )
    (copying it would run id). UNCERTAIN: quoting of the suggestion."""
    w = "it's $(id)"
    r, o, b, ws = tool_results([fs(w)], {"a.txt": "x " + w + " y\n"})
    m = re.search(r"grep -l (.*) <files>", o[0])
    check(m is None or not (m.group(1).startswith('"') and "$(" in m.group(1)),
          "suggested command runs a command substitution: " + q(m.group(0) if m else o[0]))


@case
def atk_fs_newline_in_name():
    """3: a file named 'x\nevil.txt' holds the word -> the 'one per line' list must not print the raw newline (it
    would show a name 'evil.txt' that does not exist). UNCERTAIN."""
    r, o, b, ws = tool_results([fs("TODO")], {"x\nevil.txt": "TODO\n"})
    check("\nevil.txt\n" not in o[0], "raw newline in a listed name: " + q(o[0]))


# ============================================================ 4/5. read-only source refusal
def go(goal, actions, files, timeout=90, yes=True):
    p = plan(["The request is done: " + goal],
             [{"intent": goal, "criteria": ["the request is done: " + goal], "tools": ["shell", "write_file"]}])
    fins = [a["output"] for a in actions if a.get("tool") == "finish"]
    summ = fins[-1] if fins else "done"

    def vp(body, k):
        return {"verdicts": [{"criterion": "", "verdict": "pass", "evidence": tool_quote(body) or "ran"}] * k}

    def mp(body, k):
        ev = tool_quote(body) or summ
        return {"merged_output": summ, "summary": summ, "verdicts": [{"verdict": "pass", "evidence": ev}] * k}
    s = Script(goal, p, executor=seq(actions), validator=vp, meta=mp)
    ws = tempfile.mkdtemp(prefix="i13c7w_")
    TMP.append(ws)
    mkfiles(ws, files)
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"] if yes else [], timeout=timeout)
    TMP.append(r.dd)
    check(r.rc != "timeout", "timeout")
    return r


def exec_results(r):
    return [H.FakeLLM.last_user(b) for b in r.reqs("ExecutorAction")[1:]]


def refusal_for(r, a):
    want = "REFUSED: the request only reads %s; do not change it." % a
    res = exec_results(r)
    return any(want in x for x in res), res


def rd(r, name):
    return readb(os.path.join(r.ws, name))


def refuse_case(name, goal, actions, files, src, doc, also=None):
    def f():
        r = go(goal, actions + [fin("done")], files)
        hit, res = refusal_for(r, src)
        check(rd(r, src) == files[src].encode(), "%s changed on disk: %r (results: %s)" % (src, rd(r, src),
                                                                                       q(" | ".join(res), 300)))
        check(hit, "no 'REFUSED: the request only reads %s; do not change it.' -- executor saw: %s" %
              (src, q(" | ".join(res), 400)))
        if also:
            also(r)
    f.__name__ = name
    f.__doc__ = doc
    CASES.append(f)


def allow_case(name, goal, actions, files, expect, doc, need_success=True):
    def f():
        r = go(goal, actions, files)
        res = exec_results(r)
        check(not any("REFUSED" in x for x in res), "refused honest step: " + q(" | ".join(res), 400))
        for p, want in expect.items():
            check(rd(r, p) == want.encode(), "%s is %r, expected %r" % (p, rd(r, p), want))
        if need_success:
            check(r.rc == 0 and r.directive in ("success", "accept"), "honest work not a success: " + r.brief())
    f.__name__ = name
    f.__doc__ = doc
    CASES.append(f)


A1 = "hello world\n"
NAMES = "carol\nalice\nbob\n"
SNAMES = "alice\nbob\ncarol\n"
POEM = "roses are red\nviolets are blue\n"
CP = "Copy a.txt to b.txt"
SO = "Sort the lines of names.txt into sorted.txt"
UP = "Write the contents of a.txt converted to upper case into b.txt"

refuse_case("atk_ro_copy_write_file_source", CP, [wf("a.txt", "changed\n")], {"a.txt": A1}, "a.txt",
            "4: copy request; write_file to the source a.txt -> REFUSED, a.txt unchanged.")
refuse_case("atk_ro_copy_shell_append_source", CP, [sh("echo x >> a.txt")], {"a.txt": A1}, "a.txt",
            "4: copy request; `echo x >> a.txt` -> REFUSED before it runs.")


def _no_b(r):
    check(rd(r, "b.txt") is None, "the refused command ran in part: b.txt exists (%r)" % rd(r, "b.txt"))


refuse_case("atk_ro_copy_combined_command", CP, [sh("cp a.txt b.txt && echo x >> a.txt")], {"a.txt": A1}, "a.txt",
            "4: `cp a.txt b.txt && echo x >> a.txt` -> refused BEFORE it runs (so b.txt is not made either).",
            also=_no_b)
refuse_case("atk_ro_sort_sed_i", SO, [sh("sed -i 's/carol/zed/' names.txt")], {"names.txt": NAMES}, "names.txt",
            "4: sort request; `sed -i` on names.txt -> REFUSED.")
refuse_case("atk_ro_sort_to_o_source", "Sort the lines of names.txt to sorted.txt",
            [sh("sort names.txt -o names.txt")], {"names.txt": NAMES}, "names.txt",
            "4: 'to' form; `sort names.txt -o names.txt` writes the source -> REFUSED.")
refuse_case("atk_ro_upper_truncating_redirect", UP, [sh("tr a-z A-Z < a.txt > a.txt")], {"a.txt": A1}, "a.txt",
            "4: upper-case request; `tr ... < a.txt > a.txt` (truncates a.txt) -> REFUSED, a.txt intact.")
refuse_case("atk_ro_lower_write_file_source", "Write the contents of a.txt converted to lower case into b.txt",
            [wf("a.txt", "HELLO\n")], {"a.txt": "HELLO World\n"}, "a.txt",
            "4: lower-case request; write_file to a.txt -> REFUSED.")
refuse_case("atk_ro_copy_dot_slash", CP, [sh("printf 'x' >> ./a.txt")], {"a.txt": A1}, "a.txt",
            "4: the write names the source as ./a.txt -> REFUSED. UNCERTAIN: spelling variant.")
refuse_case("atk_ro_copy_write_file_dot_slash", CP, [wf("./a.txt", "x\n")], {"a.txt": A1}, "a.txt",
            "4: write_file path './a.txt' -> REFUSED. UNCERTAIN: spelling variant.")
refuse_case("atk_ro_copy_subdir_source", "Copy data/a.txt to out/b.txt", [wf("data/a.txt", "x\n")],
            {"data/a.txt": A1}, "data/a.txt", "4: source in a subfolder; write_file data/a.txt -> REFUSED.")
refuse_case("atk_ro_copy_tee_source", CP, [sh("echo x | tee a.txt")], {"a.txt": A1}, "a.txt",
            "4: `tee a.txt` writes the source -> REFUSED. UNCERTAIN: tee is not named in the description.")
refuse_case("atk_ro_question_append", "How many words are in poem.txt?", [sh("echo more words >> poem.txt")],
            {"poem.txt": POEM}, "poem.txt",
            "4: question; `echo ... >> poem.txt` -> the same refusal text ('the request only reads poem.txt').")

refuse_case("atk_ro_copy_cd_then_append", "Copy data/a.txt to out/b.txt", [sh("cd data && echo x >> a.txt")],
            {"data/a.txt": A1}, "data/a.txt",
            "4: `cd data && echo x >> a.txt` writes data/a.txt under another spelling. UNCERTAIN: needs cd tracking.")
refuse_case("atk_ro_copy_cp_over_source", CP, [sh("cp /etc/hostname a.txt")], {"a.txt": A1}, "a.txt",
            "4: `cp X a.txt` writes the source. UNCERTAIN: cp as a write form is not named in the description.")
refuse_case("atk_ro_copy_python_write", CP, [sh("python3 -c \"open('a.txt','a').write('x')\"")], {"a.txt": A1},
            "a.txt", "4: a python one-liner appends to a.txt. UNCERTAIN: not a redirect/sed/write_file form.")
refuse_case("atk_ro_copy_without_modifying", "Copy a.txt to b.txt without modifying a.txt", [wf("a.txt", "x\n")],
            {"a.txt": A1}, "a.txt",
            "4: the request says 'without modifying a.txt' -- 'modify' there forbids the write, it does not ask for it "
            "-> still REFUSED. UNCERTAIN: the letter exempts requests that 'say modify'.")
refuse_case("atk_ro_copy_abs_shell_path", CP, [sh('printf x >> "$PWD/a.txt"')], {"a.txt": A1}, "a.txt",
            "4: the source written through \"$PWD/a.txt\". UNCERTAIN: needs variable expansion.")


def _abs_wf():
    def f():
        ws = tempfile.mkdtemp(prefix="i13c7w_")
        TMP.append(ws)
        mkfiles(ws, {"a.txt": A1})
        p = plan(["The request is done: " + CP], [{"intent": CP, "criteria": ["done"], "tools": ["shell", "write_file"]}])
        s = Script(CP, p, executor=seq([wf(os.path.join(ws, "a.txt"), "x\n"), fin("done")]),
                   validator=passes("ran"), meta=meta_pass("done", "ran"))
        r = run_agent(s, CP, keep_ws=ws, extra_args=["--yes"], timeout=90)
        TMP.append(r.dd)
        check(r.rc != "timeout", "timeout")
        hit, res = refusal_for(r, "a.txt")
        check(rd(r, "a.txt") == A1.encode(), "a.txt changed: %r" % rd(r, "a.txt"))
        check(hit or any("REFUSED: the request only reads" in x for x in res),
              "absolute-path write_file to the source not refused: " + q(" | ".join(res), 300))
    f.__name__ = "atk_ro_copy_write_file_absolute"
    f.__doc__ = "4: write_file to the source by its absolute path inside the workspace -> REFUSED."
    CASES.append(f)


_abs_wf()

allow_case("ctl_ro_copy_sed_no_i", CP, [sh("sed -n p a.txt > b.txt; cat b.txt"), fin("copied a.txt to b.txt")],
           {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "4: `sed -n p a.txt > b.txt` (no -i) only reads a.txt.")
allow_case("ctl_ro_copy_tee_dest", CP, [sh("cat a.txt | tee b.txt"), fin("copied a.txt to b.txt")],
           {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "4: `cat a.txt | tee b.txt` writes B only.")
allow_case("ctl_ro_name_as_text", CP, [sh("echo a.txt > list.txt; cp a.txt b.txt; cat b.txt"),
                                       fin("copied a.txt to b.txt")],
           {"a.txt": A1}, {"a.txt": A1, "b.txt": A1, "list.txt": "a.txt\n"},
           "4: `echo a.txt > list.txt` names a.txt as text, writes list.txt -> not refused. UNCERTAIN: success with "
           "an extra file.", need_success=False)

allow_case("ctl_ro_copy_honest", CP, [sh("cp a.txt b.txt; cat b.txt"), fin("copied a.txt to b.txt")],
           {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "5: honest cp must succeed.")
allow_case("ctl_ro_sort_honest", SO, [sh("sort names.txt > sorted.txt; cat sorted.txt"), fin("sorted.txt written")],
           {"names.txt": NAMES}, {"names.txt": NAMES, "sorted.txt": SNAMES}, "5: sort A > B must succeed.")
allow_case("ctl_ro_upper_honest_input_redirect", UP,
           [sh("tr a-z A-Z < a.txt > b.txt; cat b.txt"), fin("b.txt holds HELLO WORLD")],
           {"a.txt": A1}, {"a.txt": A1, "b.txt": "HELLO WORLD\n"},
           "5: `tr ... < a.txt > b.txt` reads a.txt via '<' -> not refused, succeeds.")
allow_case("ctl_ro_question_honest", "How many words are in poem.txt?",
           [sh("wc -w < poem.txt"), fin("poem.txt has 6 words.")], {"poem.txt": POEM}, {"poem.txt": POEM},
           "5: an honest question must succeed.")
allow_case("ctl_ro_sort_same_file", "Sort names.txt and write the result to names.txt",
           [sh("sort -o names.txt names.txt; cat names.txt"), fin("names.txt sorted")],
           {"names.txt": NAMES}, {"names.txt": SNAMES}, "4: B is A itself -> the write is allowed.")
allow_case("ctl_ro_sort_in_place", "Sort the lines of names.txt in place",
           [sh("sort -o names.txt names.txt; cat names.txt"), fin("names.txt sorted")],
           {"names.txt": NAMES}, {"names.txt": SNAMES}, "4: 'in place' -> allowed.")
allow_case("ctl_ro_copy_then_append_exempt", CP + ", then append a line saying end to a.txt",
           [sh("cp a.txt b.txt; echo end >> a.txt; cat a.txt"), fin("copied, appended end to a.txt")],
           {"a.txt": A1}, {"a.txt": A1 + "end\n", "b.txt": A1}, "4: 'append' in the request -> allowed.")
allow_case("ctl_ro_copy_backup_prefix_name", CP,
           [sh("cp a.txt a.txt.bak; cp a.txt b.txt; cat b.txt"), fin("copied a.txt to b.txt")],
           {"a.txt": A1}, {"a.txt": A1, "a.txt.bak": A1, "b.txt": A1},
           "4: writing a.txt.bak (A's name as a prefix) is not a write to a.txt -> not refused. UNCERTAIN: the "
           "success part (an extra file).", need_success=False)
allow_case("ctl_ro_copy_write_file_dest", CP, [wf("b.txt", A1), sh("cat b.txt"), fin("copied a.txt to b.txt")],
           {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "5: write_file to B (not A) -> not refused, succeeds.")


def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/work/wt/lead/.venv/bin/agentui"
    subs = sys.argv[2:]
    sel = [c for c in CASES if not subs or any(s in c.__name__ for s in subs)]
    okc = 0
    try:
        for c in sel:
            t0 = time.time()
            H.LAST_RUNS.clear()
            try:
                c()
                okc += 1
                print("PASS %s (%.1fs)" % (c.__name__, time.time() - t0), flush=True)
            except Fail as e:
                print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:600]), flush=True)
            except Exception as e:
                print("FAIL %s: harness error %s: %s" % (c.__name__, type(e).__name__, str(e)[:300]), flush=True)
                traceback.print_exc(file=sys.stderr)
            if os.environ.get("I13_VERBOSE"):
                for r in H.LAST_RUNS:
                    print("   ", r.brief(), "wall=%.1f" % r.wall, flush=True)
            for d in TMP:
                shutil.rmtree(d, ignore_errors=True)
            TMP.clear()
    finally:
        shutil.rmtree("/tmp/i13c7_nowhere", ignore_errors=True)
    for n in NOTES:
        print("note:", n)
    print("total: %d/%d" % (okc, len(sel)))


if __name__ == "__main__":
    main()
