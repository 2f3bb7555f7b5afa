"""Every subcommand against a table of bad inputs, as a user types them (#15): no "Traceback" in
the output, one line on stderr naming the problem, the documented exit code, and the memory
store's Megram count unchanged. Real subprocesses, a real LevelDB store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentui.clock import SystemClock
from agentui.ids import UuidIds
from agentui.memory import LevelDBMemory

SEEDED = 20
BAD_UTF8 = b"caf\xe9 \xff"  # Latin-1 bytes in a UTF-8 world


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad")
    data = root / "data"
    store = LevelDBMemory(data / "memory.leveldb", SystemClock(), UuidIds())
    for i in range(SEEDED):
        store.remember(f"rule {i}")
    store.close_sync()
    (root / "afile").write_text("I am a file, not a directory\n")
    (root / "confdir").mkdir()
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "binary.toml").write_bytes(bytes(range(256)) * 4)
    (root / "notheme.toml").write_text('name = "x"\n')
    (root / "suite_dir").mkdir()
    (root / "suite_bad.json").write_text("{not json")
    (root / "suite.json").write_text('[{"id": "a", "description": "x", "init": "true", "check": "true"}]')
    (root / "bin.jsonl").write_bytes(bytes(range(256)))
    (root / "empty.jsonl").write_text('{"a": 1}\n')
    (root / "suite_empty.json").write_text("[]")
    (root / "inf.toml").write_text("[ggs]\nalpha = inf\n")
    (root / "float_int.toml").write_text("[llm]\nmax_tokens = 1e12\n")
    os.mkfifo(root / "fifo.toml")
    (root / "filestore").mkdir()
    (root / "filestore" / "memory.leveldb").write_text("x")
    (root / "foreign" / "memory.leveldb").mkdir(parents=True)
    (root / "foreign" / "memory.leveldb" / "README").write_text("not a store\n")
    damaged = root / "damaged"
    store = LevelDBMemory(damaged / "memory.leveldb", SystemClock(), UuidIds())
    store.remember("kept")
    store.close_sync()
    (damaged / "memory.leveldb" / "CURRENT").unlink()
    return {"root": root, "data": data, "damaged": damaged}


def _count(data: Path) -> int:
    store = LevelDBMemory(data / "memory.leveldb", SystemClock(), UuidIds())
    try:
        return store.stats()["total"]
    finally:
        store.close_sync()


NO_LLM = "http://127.0.0.1:9/v1"  # a closed port: the preflight fails fast

# (id, argv, extra env, stdin bytes, exit code, text the one stderr line must contain)
CASES: list[tuple[str, list, dict, bytes | None, int, str]] = [
    # endpoints
    ("run url no host", ["run", "--json", "--base-url", "http://", "--model", "m", "x"], {}, None, 2, "has no host"),
    ("run url bad port", ["run", "--json", "--base-url", "http://127.0.0.1:99999/v1", "--model", "m", "x"],
     {}, None, 2, "invalid port"),
    ("run url port 0", ["run", "--base-url", "http://127.0.0.1:0/v1", "x"], {}, None, 2, "port 0"),
    ("run url bad host", ["run", "--base-url", "http://%zz/v1", "x"], {}, None, 2, "invalid host"),
    ("run url ftp", ["run", "--base-url", "ftp://host/v1", "x"], {}, None, 2, "not an http(s) URL"),
    ("run url env blank", ["run", "x"], {"AGENTUI_BASE_URL": " "}, None, 2, "empty"),
    ("run endpoint down", ["run", "--base-url", NO_LLM, "--model", "m", "x"], {}, None, 2, "cannot connect"),
    ("doctor url no host", ["doctor", "--base-url", "http://", "--model", "m"], {}, None, 2, "has no host"),
    ("doctor url bad port", ["doctor", "--base-url", "http://127.0.0.1:99999/v1"], {}, None, 2, "invalid port"),
    ("ui url bad port", ["ui", "--base-url", "http://127.0.0.1:99999/v1"], {}, None, 2, "invalid port"),
    ("tui url no host", ["--base-url", "http://"], {}, None, 2, "has no host"),
    ("memory url env blank", ["memory", "stats"], {"AGENTUI_BASE_URL": " "}, None, 2, "empty"),
    ("run gguf missing", ["run", "x"],
     {"AGENTUI_PROVIDER": "local", "AGENTUI_GGUF": "{root}/nope.gguf"}, None, 2, "GGUF not found"),
    ("run api key newline", ["run", "--base-url", NO_LLM, "x"],
     {"AGENTUI_API_KEY": "k\r\nX-Injected: 1"}, None, 2, "control character"),
    # data dir that is a file (or under one), or a broken link
    ("audit dangling link", ["--data-dir", "{root}/dangling", "audit"], {}, None, 2, "broken symbolic link"),
    ("memory dangling link", ["--data-dir", "{root}/dangling", "memory", "stats"], {}, None, 2, "broken symbolic link"),
    ("memory stats file", ["--data-dir", "{root}/afile", "memory", "stats"], {}, None, 2, "is not a directory"),
    ("memory list under file", ["--data-dir", "{root}/afile/sub", "memory", "list"], {}, None, 2, "is not a directory"),
    ("memory env file", ["memory", "stats"], {"AGENTUI_DATA_DIR": "{root}/afile"}, None, 2, "is not a directory"),
    ("audit file", ["--data-dir", "{root}/afile", "audit"], {}, None, 2, "is not a directory"),
    ("run file", ["--data-dir", "{root}/afile", "run", "--base-url", NO_LLM, "x"], {}, None, 2, "is not a directory"),
    ("ui file", ["--data-dir", "{root}/afile", "ui"], {}, None, 2, "is not a directory"),
    ("tui file", ["--data-dir", "{root}/afile"], {}, None, 2, "is not a directory"),
    ("doctor file", ["--data-dir", "{root}/afile", "doctor"], {}, None, 2, ""),
    # a damaged store: never opened, never recreated
    ("memory stats damaged", ["--data-dir", "{damaged}", "memory", "stats"], {}, None, 2, "memory repair"),
    ("memory list damaged", ["--data-dir", "{damaged}", "memory", "list"], {}, None, 2, "memory repair"),
    ("memory remember damaged", ["--data-dir", "{damaged}", "memory", "remember", "x"], {}, None, 2, "memory repair"),
    ("memory dream damaged", ["--data-dir", "{damaged}", "memory", "dream"], {}, None, 2, "memory repair"),
    ("memory export damaged", ["--data-dir", "{damaged}", "memory", "export"], {}, None, 2, "memory repair"),
    ("ui damaged", ["--data-dir", "{damaged}", "--base-url", NO_LLM, "ui"], {}, None, 2, "memory repair"),
    ("doctor damaged", ["--data-dir", "{damaged}", "doctor"], {}, None, 2, ""),
    # task text
    ("run empty task", ["run", "--base-url", NO_LLM, "  "], {}, None, 2, "give a task"),
    ("run bad utf8 argv", ["run", "--base-url", NO_LLM, BAD_UTF8], {}, None, 2, "not valid UTF-8"),
    ("run bad utf8 stdin", ["run", "--base-url", NO_LLM, "-"], {}, BAD_UTF8, 2, "not valid UTF-8"),
    ("run empty stdin", ["run", "--base-url", NO_LLM, "-"], {}, b"", 2, "give a task"),
    ("run workspace missing", ["run", "--workspace", "{root}/nope", "--base-url", NO_LLM, "x"],
     {}, None, 2, "not a directory"),
    ("run workspace file", ["run", "--workspace", "{root}/afile", "--base-url", NO_LLM, "x"],
     {}, None, 2, "not a directory"),
    # bad flags and numbers
    ("run timeout negative", ["run", "--timeout", "-1", "x"], {}, None, 2, "positive"),
    ("run timeout zero", ["run", "--timeout", "0", "x"], {}, None, 2, "positive"),
    ("run timeout nan", ["run", "--timeout", "nan", "x"], {}, None, 2, "positive"),
    ("run timeout words", ["run", "--timeout", "soon", "x"], {}, None, 2, "not a number"),
    ("run unknown flag", ["run", "--frobnicate", "x"], {}, None, 2, "unrecognized"),
    ("unknown command", ["frobnicate"], {}, None, 2, "invalid choice"),
    ("memory list negative", ["memory", "list", "--limit", "-5"], {}, None, 2, "0 or more"),
    ("memory list level", ["memory", "list", "--level", "X"], {}, None, 2, "invalid choice"),
    ("memory unknown action", ["memory", "lst"], {}, None, 2, "invalid choice"),
    ("audit events negative", ["audit", "--events", "-1"], {}, None, 2, "0 or more"),
    ("audit events words", ["audit", "--events", "many"], {}, None, 2, "not a whole number"),
    ("bench timeout negative", ["bench", "{root}/suite.json", "--timeout", "-3"], {}, None, 2, "positive"),
    ("doctor timeout words", ["doctor", "--timeout", "x"], {}, None, 2, "not a number"),
    ("replay speed negative", ["replay", "--speed", "-1", "{root}/bin.jsonl"], {}, None, 2, "speed"),
    # unknown ids
    ("memory show unknown", ["memory", "show", "zzzz"], {}, None, 2, "no megram"),
    ("memory forget unknown", ["memory", "forget", "--yes", "zzzz"], {}, None, 2, "no megram"),
    ("memory show empty id", ["memory", "show", ""], {}, None, 2, "empty id"),
    ("memory remember blank", ["memory", "remember", " "], {}, None, 2, "give the text"),
    ("bench unknown id", ["bench", "{root}/suite.json", "--ids", "nope"], {}, None, 2, "unknown task id"),
    # files that are not what they should be
    ("config is a dir", ["--config", "{root}/confdir", "memory", "stats"], {}, None, 2, "is a directory"),
    ("config binary", ["--config", "{root}/binary.toml", "memory", "stats"], {}, None, 2, "cannot read"),
    ("config missing", ["--config", "{root}/nope.toml", "memory", "stats"], {}, None, 2, "file not found"),
    ("config env dir", ["memory", "stats"], {"AGENTUI_CONFIG": "{root}/confdir"}, None, 2, "is a directory"),
    ("theme unknown", ["--theme", "neon"], {}, None, 2, "unknown theme"),
    ("theme unknown ui", ["ui", "--theme", "neon"], {}, None, 2, "unknown theme"),
    ("theme binary", ["--theme", "{root}/binary.toml"], {}, None, 2, "not UTF-8"),
    ("theme no primary", ["--theme", "{root}/notheme.toml"], {}, None, 2, "primary"),
    ("theme missing file", ["--theme", "{root}/gone.toml"], {}, None, 2, "does not exist"),
    ("replay binary", ["replay", "{root}/bin.jsonl"], {}, None, 2, "not a text recording"),
    ("replay no envelopes", ["replay", "{root}/empty.jsonl"], {}, None, 2, "no bus envelopes"),
    ("replay missing", ["replay", "{root}/nope.jsonl"], {}, None, 2, "not found"),
    ("replay dir", ["replay", "{root}/confdir"], {}, None, 2, "is a directory"),
    ("bench missing suite", ["bench", "{root}/nope.json"], {}, None, 2, ""),
    ("bench suite dir", ["bench", "{root}/suite_dir"], {}, None, 2, ""),
    ("bench suite not json", ["bench", "{root}/suite_bad.json"], {}, None, 2, ""),
    ("export out dir", ["memory", "export", "--out", "{root}/confdir"], {}, None, 2, "is a directory"),
    # found by the held-out corpus (/work/adversarial/15)
    ("doctor endpoint down", ["--base-url", NO_LLM, "--model", "m", "doctor"], {}, None, 2, ""),
    ("doctor timeout negative", ["doctor", "--timeout", "-1"], {}, None, 2, "positive"),
    ("doctor timeout nan", ["doctor", "--timeout", "nan"], {}, None, 2, "positive"),
    ("bench ids only commas", ["bench", "{root}/suite.json", "--ids", ","], {}, None, 2, "names no task"),
    ("bench empty suite", ["bench", "{root}/suite_empty.json"], {}, None, 2, "no tasks"),
    ("theme empty", ["--theme", ""], {}, None, 2, "unknown theme"),
    ("theme empty ui", ["ui", "--theme", ""], {}, None, 2, "unknown theme"),
    ("config inf", ["--config", "{root}/inf.toml", "memory", "stats"], {}, None, 2, "ggs.alpha"),
    ("config float for int", ["--config", "{root}/float_int.toml", "memory", "stats"], {}, None, 2, "whole number"),
    ("config env fifo", ["memory", "stats"], {"AGENTUI_CONFIG": "{root}/fifo.toml"}, None, 2, "not a regular file"),
    ("memory data-dir after action", ["memory", "stats", "--data-dir", "{root}/afile"],
     {}, None, 2, "is not a directory"),
    ("memory json and data-dir after action", ["memory", "list", "--json", "--data-dir", "{root}/afile"],
     {}, None, 2, "is not a directory"),
    ("audit data dir missing", ["--data-dir", "{root}/nope", "audit"], {}, None, 2, "does not exist"),
    ("memory remember empty space", ["memory", "remember", "--space", "", "x"], {}, None, 2, "--space is empty"),
    ("memory foreign dir", ["--data-dir", "{root}/foreign", "memory", "stats"], {}, None, 2, "not a LevelDB store"),
    ("export out no parent", ["memory", "export", "--out", "{root}/no/such/x.jsonl"], {}, None, 2, "does not exist"),
    # an empty path flag (`--data-dir "$UNSET"`) used the default store / reported the default config missing
    ("data-dir empty", ["--data-dir", "", "memory", "stats"], {}, None, 2, "--data-dir: is empty"),
    ("data-dir blank after action", ["memory", "list", "--data-dir", " "], {}, None, 2, "--data-dir: is empty"),
    ("config empty", ["--config", "", "memory", "stats"], {}, None, 2, "--config: is empty"),
    ("run workspace empty", ["run", "--workspace", "", "x"], {}, None, 2, "--workspace/-w: is empty"),
    ("memory repair store is a file", ["--data-dir", "{root}/filestore", "memory", "repair"], {}, None, 2,
     "is a file, not a LevelDB store"),
    ("memory repair foreign dir", ["--data-dir", "{root}/foreign", "memory", "repair"], {}, None, 2,
     "is not a LevelDB store"),
]


def _fill(arg, world: dict[str, Path]):
    if isinstance(arg, bytes):
        return arg
    return arg.format(root=world["root"], damaged=world["damaged"])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_and_exit_code(world, case) -> None:
    name, argv, extra, stdin, code, needle = case
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTUI_", "OPENAI_"))}
    env.update(AGENTUI_DATA_DIR=str(world["data"]), AGENTUI_NO_AUTODETECT="1", COLUMNS="200",
               AGENTUI_CONFIG=str(world["root"] / "none.toml"))
    env.update({k: _fill(v, world) for k, v in extra.items()})
    args = [_fill(a, world) for a in argv]
    r = subprocess.run([sys.executable, "-m", "agentui.cli", *args], input=stdin if stdin is not None else b"",
                       capture_output=True, env=env, timeout=60)
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err, err
    assert r.returncode == code, (r.returncode, out[-500:], err[-800:])
    if code == 2 and args[-1] != "doctor":  # doctor prints its table of checks
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1, err
        assert needle in lines[0], lines[0]
    assert _count(world["data"]) == SEEDED
    assert sorted(os.listdir(world["root"] / "foreign" / "memory.leveldb")) == ["README"], \
        "a store was made in a foreign dir"
    assert not (world["damaged"] / "memory.leveldb" / "CURRENT").exists(), "a damaged store was recreated"


def test_run_on_a_workspace_this_user_cannot_read_is_bad_input(tmp_path):
    """Found by an outside tester: as another user, a 0700 workspace ran the task (every tool
    failed) and ended exit 1 "abandon"; a missing workspace was already exit 2 (#15)."""
    import shutil
    import tempfile

    prefix: list[str] = []
    if os.geteuid() == 0:  # root reads everything: run as nobody, where this checkout allows it
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        if shutil.which("setpriv") is None or subprocess.run(
                [*prefix, sys.executable, "-c", "import agentui.cli"], capture_output=True, cwd="/").returncode:
            pytest.skip("cannot run agentui as another user here (setpriv, or a checkout only root can read)")
    base = Path(tempfile.mkdtemp(prefix="agentui-ws-"))  # not under pytest's 0700 temp root
    try:
        base.chmod(0o777)
        ws = base / "private"
        ws.mkdir()
        ws.chmod(0o700 if prefix else 0)
        home = base / "home"
        home.mkdir()
        home.chmod(0o777)
        env = {**os.environ, "HOME": str(home), "AGENTUI_CONFIG": str(home / "config.toml"),
               "XDG_CONFIG_HOME": str(home), "XDG_DATA_HOME": str(home), "XDG_CACHE_HOME": str(home)}
        r = subprocess.run([*prefix, sys.executable, "-m", "agentui.cli", "run", "--data-dir", str(home / "d"),
                            "--workspace", str(ws), "--base-url", "http://127.0.0.1:9/v1", "count the files"],
                           capture_output=True, text=True, timeout=60, env=env, cwd=home)
    finally:
        (base / "private").chmod(0o700)
        shutil.rmtree(base, ignore_errors=True)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert "cannot be read by this user" in r.stderr, r.stderr
