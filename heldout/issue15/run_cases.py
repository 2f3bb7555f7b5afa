#!/usr/bin/env python3
"""Adversarial cases for agentui issue #15 (no traceback, no silent loss, signals).

usage: python3 run_cases.py /path/to/agentui [name-substring ...]
Black-box: only the issue text, README and --help were used to write these.
"""
import concurrent.futures as cf
import glob
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "agentui"
FILTERS = sys.argv[2:]
VPY = os.path.join(os.path.dirname(AGENTUI), "python")
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fakellm.py")
DEAD = "http://127.0.0.1:9/v1"
CASE_TIMEOUT = 60
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
ROOT = tempfile.mkdtemp(prefix="adv15-")
os.chmod(ROOT, 0o755)
N_TPL = 6


class Fail(Exception):
    pass


def clean_env(base):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AGENTUI_", "OPENAI_"))}
    env.update(HOME=os.path.join(base, "home"), XDG_CONFIG_HOME=os.path.join(base, "cfg"),
               XDG_DATA_HOME=os.path.join(base, "xdgdata"), XDG_CACHE_HOME=os.path.join(base, "cache"),
               TERM="xterm-256color", LC_ALL="C.UTF-8", PYTHONDONTWRITEBYTECODE="1")
    return env


class Ctx:
    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="c-", dir=ROOT)
        os.chmod(self.dir, 0o755)
        for d in ("home", "cfg", "xdgdata", "cache", "ws"):
            os.makedirs(os.path.join(self.dir, d))
        os.chmod(os.path.join(self.dir, "home"), 0o777)
        os.chmod(os.path.join(self.dir, "ws"), 0o777)
        self.env = clean_env(self.dir)
        self.deadline = time.time() + CASE_TIMEOUT
        self.procs = []

    def p(self, *parts):
        return os.path.join(self.dir, *parts)

    @property
    def dd(self):
        return self.p("d")

    def run(self, args, env=None, stdin=None, timeout=None, prefix=None, raw=False, cwd=None):
        e = dict(self.env)
        if env:
            for k, v in env.items():
                if v is None:
                    e.pop(k, None)
                else:
                    e[k] = v
        cmd = (prefix or []) + ([AGENTUI] if not raw else []) + list(args)
        t = min(timeout or 45, max(1, self.deadline - time.time()))
        pr = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e,
                              cwd=cwd or self.p("ws"), start_new_session=True)
        try:
            out, err = pr.communicate(stdin if isinstance(stdin, (bytes, type(None))) else stdin.encode(),
                                      timeout=t)
        except subprocess.TimeoutExpired:
            os.killpg(pr.pid, signal.SIGKILL)
            out, err = pr.communicate()
            raise Fail(f"timed out after {t:.0f}s: {cmd[-4:]} stderr={err[-300:]!r}")
        return pr.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    def fake(self, command="sleep 100", mode="normal"):
        port = self.p("port")
        log = self.p("llm.log")
        pr = subprocess.Popen([sys.executable, FAKE, port, log, command, mode],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(pr)
        for _ in range(100):
            if os.path.exists(port):
                break
            time.sleep(0.05)
        return f"http://127.0.0.1:{open(port).read()}/v1"

    def llm_log(self):
        try:
            return [json.loads(x) for x in open(self.p("llm.log"))]
        except FileNotFoundError:
            return []

    def close(self):
        for pr in self.procs:
            try:
                os.killpg(pr.pid, signal.SIGKILL)
            except Exception:
                pass
            pr.wait()


# ---------------------------------------------------------------- assertions
def no_tb(rc, out, err):
    if "Traceback" in out or "Traceback" in err:
        i = (out + err).find("Traceback")
        raise Fail(f"Traceback in output (rc={rc}): {(out + err)[i:i + 300]!r}")


def bad(res, code=2, kw=None, one_line=True, where="err"):
    rc, out, err = res
    no_tb(rc, out, err)
    codes = code if isinstance(code, (tuple, list, set)) else (code,)
    if rc not in codes:
        raise Fail(f"exit {rc}, expected {codes}; stderr={err.strip()[-300:]!r} stdout={out.strip()[-200:]!r}")
    text = err if where == "err" else out + err
    lines = [x for x in text.strip().splitlines() if x.strip()]
    if not lines:
        raise Fail(f"exit {rc} but no message on {where}")
    if one_line and where == "err" and len(lines) != 1:
        raise Fail(f"expected one line on stderr, got {len(lines)}: {err.strip()[:300]!r}")
    if kw:
        kws = kw if isinstance(kw, (list, tuple)) else [kw]
        low = text.lower()
        if not any(k.lower() in low for k in kws):
            raise Fail(f"message does not name the problem ({kws}): {text.strip()[:300]!r}")
    return res


def ok(res, code=0):
    rc, out, err = res
    no_tb(rc, out, err)
    if rc != code:
        raise Fail(f"exit {rc}, expected {code}; stderr={err.strip()[-300:]!r}")
    return res


def count(ctx, dd=None):
    rc, out, err = ctx.run(["memory", "stats", "--json", "--data-dir", dd or ctx.dd])
    if rc != 0:
        raise Fail(f"memory stats failed rc={rc}: {err.strip()[:200]!r}")
    return json.loads(out)["total"]


def snap(d, skip=("LOG", "LOG.old", "LOCK")):
    res = {}
    for root, _, files in os.walk(d):
        for f in files:
            if f in skip:
                continue
            fp = os.path.join(root, f)
            with open(fp, "rb") as fh:
                res[os.path.relpath(fp, d)] = hashlib.sha256(fh.read()).hexdigest()
    return res


def same_store(before, d, what):
    after = snap(d)
    if after != before:
        gone = sorted(set(before) - set(after))
        new = sorted(set(after) - set(before))
        chg = sorted(k for k in set(before) & set(after) if before[k] != after[k])
        raise Fail(f"{what} changed the damaged store: removed={gone} added={new} changed={chg}")


def live_procs(marker_args):
    """pids of live (non-zombie) processes whose argv == marker_args."""
    found = []
    for pd in glob.glob("/proc/[0-9]*"):
        try:
            argv = open(pd + "/cmdline", "rb").read().split(b"\0")[:-1]
            if [a.decode("utf-8", "replace") for a in argv] != marker_args:
                continue
            st = open(pd + "/stat").read().rsplit(")", 1)[1].split()[0]
            if st != "Z":
                found.append(int(pd.split("/")[-1]))
        except Exception:
            pass
    return found


# ---------------------------------------------------------------- templates
TPL = {}


def build_templates():
    base = tempfile.mkdtemp(prefix="tpl-", dir=ROOT)
    os.chmod(base, 0o755)
    env = clean_env(base)
    os.makedirs(env["HOME"], exist_ok=True)

    def a(*args):
        r = subprocess.run([AGENTUI] + list(args), env=env, capture_output=True, timeout=60)
        if r.returncode:
            raise RuntimeError(f"template: {args}: {r.stderr.decode()}")
        return r.stdout.decode()
    dd = os.path.join(base, "store")
    for i in range(N_TPL):
        a("memory", "remember", "--data-dir", dd, f"template rule {i}: keep the tests green {i}")
    TPL["store"] = dd
    # a store whose newest batch lives only in the write-ahead log
    other = os.path.join(base, "other")
    for i in range(3):
        a("memory", "remember", "--data-dir", other, "--space", "tool:shell", f"never: rm{i} -rf")
    logd = os.path.join(base, "logstore")
    shutil.copytree(dd, logd)
    code = (
        "import plyvel,sys\n"
        "src=plyvel.DB(sys.argv[1]+'/memory.leveldb')\n"
        "dst=plyvel.DB(sys.argv[2]+'/memory.leveldb')\n"
        "wb=dst.write_batch(sync=True)\n"
        "n=0\n"
        "for k,v in src:\n"
        "    wb.put(k,v); n+=1\n"
        "wb.write(); src.close(); dst.close(); print(n)\n")
    subprocess.run([VPY, "-c", code, other, logd], check=True, capture_output=True, timeout=60)
    logs = glob.glob(logd + "/memory.leveldb/*.log")
    if not logs or max(os.path.getsize(x) for x in logs) == 0:
        raise RuntimeError("log store has no log data")
    chk = os.path.join(base, "logcheck")
    shutil.copytree(logd, chk)
    r = subprocess.run([AGENTUI, "memory", "stats", "--json", "--data-dir", chk], env=env,
                       capture_output=True, timeout=60)
    TPL["logstore"] = logd
    TPL["log_n"] = json.loads(r.stdout)["total"] if r.returncode == 0 else None


def store(ctx, kind="store"):
    shutil.copytree(TPL[kind], ctx.dd)
    return os.path.join(ctx.dd, "memory.leveldb")


def damage(sd, kind):
    def one(pat):
        fs = sorted(glob.glob(os.path.join(sd, pat)), key=lambda f: (-os.path.getsize(f), f))
        if not fs:
            raise Fail(f"setup: no {pat} in store")
        return fs[0]
    if kind == "no_current":
        os.remove(os.path.join(sd, "CURRENT"))
    elif kind == "garbled_current":
        open(os.path.join(sd, "CURRENT"), "wb").write(b"\x00\xff\xfegarbage\n")
    elif kind == "empty_current":
        open(os.path.join(sd, "CURRENT"), "wb").close()
    elif kind == "current_missing_target":
        open(os.path.join(sd, "CURRENT"), "w").write("MANIFEST-999999\n")
    elif kind == "no_manifest":
        os.remove(one("MANIFEST-*"))
    elif kind == "trunc_manifest":
        f = one("MANIFEST-*")
        os.truncate(f, os.path.getsize(f) // 2)
    elif kind == "zero_manifest":
        os.truncate(one("MANIFEST-*"), 0)
    elif kind == "no_ldb":
        os.remove(one("*.ldb"))
    elif kind == "trunc_ldb":
        f = one("*.ldb")
        os.truncate(f, os.path.getsize(f) // 2)
    elif kind == "zero_ldb":
        os.truncate(one("*.ldb"), 0)
    elif kind == "flip_ldb":
        for f in glob.glob(os.path.join(sd, "*.ldb")):
            b = bytearray(open(f, "rb").read())
            for i in range(len(b) // 4, len(b) // 4 + 8):
                b[i] ^= 0xFF
            open(f, "wb").write(b)
    elif kind == "log_corrupt":
        f = one("*.log")
        b = bytearray(open(f, "rb").read())
        mid = len(b) // 2
        for i in range(mid, min(len(b), mid + 16)):
            b[i] ^= 0x5A
        open(f, "wb").write(b)
    elif kind == "log_trunc":
        f = one("*.log")
        os.truncate(f, os.path.getsize(f) - 7)
    elif kind == "log_garbage":
        f = one("*.log")
        with open(f, "ab") as fh:
            fh.write(bytes(random.Random(7).randrange(256) for _ in range(200)))
    else:
        raise ValueError(kind)


# ---------------------------------------------------------------- case table
CASES = []


def case(name):
    def deco(fn):
        CASES.append((name, fn))
        return fn
    return deco


R = ["run", "--data-dir"]


def runargs(ctx, *extra, url=DEAD, task="count the files"):
    a = ["run", "--data-dir", ctx.dd, "--base-url", url, "--model", "m", "-w", ctx.p("ws")] + list(extra)
    if task is not None:
        a.append(task)
    return a


# ---- A. endpoint URLs
URLS = {
    "no_host": ("http://", ["host"]),
    "port_99999": ("http://127.0.0.1:99999/v1", ["port"]),
    "port_0": ("http://127.0.0.1:0/v1", ["port"]),
    "port_neg": ("http://127.0.0.1:-1/v1", ["port"]),
    "port_alpha": ("http://127.0.0.1:abc/v1", ["port"]),
    "port_huge": ("http://127.0.0.1:" + "9" * 40 + "/v1", ["port"]),
    "empty": ("", ["empty", "url"]),
    "spaces": ("   ", ["empty", "url"]),
    "ftp_scheme": ("ftp://127.0.0.1/v1", ["http", "url", "scheme"]),
    "no_scheme_garbage": ("not a url", ["url", "host", "http"]),
    "bad_ipv6": ("http://[::1/v1", ["url", "host", "ipv6", "invalid"]),
    "long_label": ("http://" + "a" * 300 + ".com/v1", ["url", "host", "invalid", "label"]),
    "space_in_host": ("http://ex ample.com/v1", ["url", "host", "invalid"]),
    "newline": ("http://127.0.0.1:9/v1\nx", ["url", "host", "invalid", "character"]),
    "userinfo_only": ("http://user:pw@/v1", ["host"]),
}
for _k, (_u, _kw) in URLS.items():
    def _mk(u=_u, kw=_kw):
        def run_case(ctx):
            bad(ctx.run(runargs(ctx, url=u)), 2, kw + ["base_url"])
        def doc_case(ctx):
            bad(ctx.run(["doctor", "--data-dir", ctx.dd, "--base-url", u, "--model", "m"]), 2,
                kw + ["base_url"], one_line=False, where="all")
        return run_case, doc_case
    _r, _d = _mk()
    case(f"run_url_{_k}")(_r)
    if _k in ("no_host", "port_99999", "port_0", "spaces", "long_label", "ftp_scheme", "bad_ipv6"):
        case(f"doctor_url_{_k}")(_d)


@case("run_env_base_url_blank")
def _(ctx):
    a = runargs(ctx)
    i = a.index("--base-url")
    del a[i:i + 2]
    bad(ctx.run(a, env={"AGENTUI_BASE_URL": " "}), 2, ["empty", "AGENTUI_BASE_URL"])


@case("run_env_openai_base_url_no_host")
def _(ctx):
    a = runargs(ctx)
    i = a.index("--base-url")
    del a[i:i + 2]
    bad(ctx.run(a, env={"OPENAI_BASE_URL": "http://:80/v1"}), 2, ["host", "url"])


@case("run_env_brain_port_out_of_range")
def _(ctx):
    bad(ctx.run(runargs(ctx), env={"AGENTUI_BRAIN_BASE_URL": "http://127.0.0.1:70000/v1"}), 2,
        ["port", "brain"])


@case("run_env_tool_base_url_no_host")
def _(ctx):
    bad(ctx.run(runargs(ctx), env={"AGENTUI_TOOL_BASE_URL": "http://"}), 2, ["host", "tool"])


@case("doctor_env_base_url_blank")
def _(ctx):
    bad(ctx.run(["doctor", "--data-dir", ctx.dd], env={"AGENTUI_BASE_URL": " "}), 2,
        ["empty", "base_url"], one_line=False, where="all")


@case("config_base_url_no_host_names_file")
def _(ctx):
    cfg = ctx.p("c.toml")
    open(cfg, "w").write('[llm]\nbase_url = "http://"\nmodel = "m"\n')
    bad(ctx.run(["run", "--config", cfg, "--data-dir", ctx.dd, "x"]), 2, ["c.toml"])


@case("config_brain_port_zero")
def _(ctx):
    cfg = ctx.p("c.toml")
    open(cfg, "w").write('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n[llm.brain]\nbase_url = "http://127.0.0.1:0/v1"\n')
    bad(ctx.run(["run", "--config", cfg, "--data-dir", ctx.dd, "x"]), 2, ["port"])


@case("memory_stats_bad_base_url_no_tb")
def _(ctx):
    rc, out, err = ctx.run(["memory", "stats", "--data-dir", ctx.dd, "--base-url", "http://127.0.0.1:99999"])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("audit_bad_base_url_no_tb")
def _(ctx):
    os.makedirs(ctx.dd)
    rc, out, err = ctx.run(["audit", "--data-dir", ctx.dd, "--base-url", "http://"])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("run_json_unreachable_infra_failure")
def _(ctx):
    rc, out, err = ctx.run(runargs(ctx, "--json"))
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}")
    try:
        j = json.loads(out)
    except Exception:
        raise Fail(f"stdout is not JSON: {out[:200]!r}")
    if j.get("final") is not None or not j.get("infra_failure"):
        raise Fail(f"expected final null + infra_failure: {out[:300]!r}")


# ---- B. data dir
def datadir_file(ctx):
    f = ctx.p("dfile")
    open(f, "w").write("i am a file\n")
    return f


DD_CMDS = {
    "run": lambda ctx, d: runargs(ctx)[:2] + [d] + runargs(ctx)[3:],
    "doctor": lambda ctx, d: ["doctor", "--data-dir", d, "--base-url", DEAD, "--model", "m"],
    "memory_stats": lambda ctx, d: ["memory", "stats", "--data-dir", d],
    "memory_list": lambda ctx, d: ["memory", "list", "--data-dir", d],
    "memory_remember": lambda ctx, d: ["memory", "remember", "--data-dir", d, "a rule"],
    "memory_export": lambda ctx, d: ["memory", "export", "--data-dir", d],
    "memory_dream": lambda ctx, d: ["memory", "dream", "--data-dir", d, "--base-url", DEAD],
    "memory_repair": lambda ctx, d: ["memory", "repair", "--data-dir", d],
    "memory_show": lambda ctx, d: ["memory", "show", "--data-dir", d, "abc"],
    "memory_forget": lambda ctx, d: ["memory", "forget", "--yes", "--data-dir", d, "abc"],
    "audit": lambda ctx, d: ["audit", "--data-dir", d],
}
for _c, _f in DD_CMDS.items():
    def _mk(f=_f, c=_c):
        def file_case(ctx):
            d = datadir_file(ctx)
            bad(ctx.run(f(ctx, d)), 2, ["data dir", "not a directory", "file", "dfile"],
                one_line=(c != "doctor"), where="err" if c != "doctor" else "all")
            if open(d).read() != "i am a file\n":
                raise Fail("the file was modified")
        def parent_file_case(ctx):
            d = os.path.join(datadir_file(ctx), "sub", "dir")
            bad(ctx.run(f(ctx, d)), 2, ["data dir", "not a directory", "file", "dfile"],
                one_line=(c != "doctor"), where="err" if c != "doctor" else "all")
        def nobody_case(ctx):
            parent = ctx.p("rootonly")
            os.makedirs(parent)
            os.chmod(parent, 0o755)
            d = os.path.join(parent, "data")
            bad(ctx.run(f(ctx, d), prefix=NOBODY), 2,
                ["permission", "cannot be created", "cannot create", "not writable", "read-only", "data dir"],
                one_line=(c != "doctor"), where="err" if c != "doctor" else "all")
        return file_case, parent_file_case, nobody_case
    _a, _b, _n = _mk()
    case(f"datadir_is_file_{_c}")(_a)
    if _c in ("run", "doctor", "memory_stats", "memory_remember", "audit"):
        case(f"datadir_parent_is_file_{_c}")(_b)
    if _c in ("run", "doctor", "memory_stats", "memory_remember", "memory_list", "audit"):
        case(f"datadir_cannot_create_{_c}")(_n)


@case("datadir_unwritable_existing_store_remember")
def _(ctx):
    store(ctx)
    for root, dirs, files in os.walk(ctx.dd):
        os.chmod(root, 0o755)
        for f in files:
            os.chmod(os.path.join(root, f), 0o644)
    before = snap(ctx.dd)
    rc, out, err = bad(ctx.run(["memory", "remember", "--data-dir", ctx.dd, "x"], prefix=NOBODY), 2,
                       ["permission", "read-only", "not writable", "cannot write"])
    if "in use" in err.lower():
        raise Fail(f"permission problem reported as a held lock: {err.strip()!r}")
    same_store(before, ctx.dd, "remember as another user")


@case("datadir_unwritable_store_stats_not_lock")
def _(ctx):
    store(ctx)
    rc, out, err = ctx.run(["memory", "stats", "--data-dir", ctx.dd], prefix=NOBODY)
    no_tb(rc, out, err)
    if "in use by" in (out + err).lower():
        raise Fail(f"permission problem reported as a held lock: {err.strip()!r}")
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")
    if rc == 2 and not err.strip():
        raise Fail("exit 2 without a message")


@case("datadir_unwritable_run")
def _(ctx):
    store(ctx)
    rc, out, err = bad(ctx.run(runargs(ctx), prefix=NOBODY), 2,
                       ["permission", "read-only", "not writable", "data dir"])
    if "in use" in err.lower():
        raise Fail(f"permission problem reported as lock: {err.strip()!r}")


@case("datadir_unwritable_doctor")
def _(ctx):
    store(ctx)
    rc, out, err = bad(ctx.run(["doctor", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"], prefix=NOBODY),
                       2, ["permission", "read-only", "not writable"], one_line=False, where="all")
    if "in use by" in (out + err).lower():
        raise Fail("permission problem reported as held lock")


def unshare_script(ctx, body, size="1m"):
    m = ctx.p("mnt")
    os.makedirs(m, exist_ok=True)
    sh = f"""set -e
mount -t tmpfs -o size={size} tmpfs {m}
M={m}
A={AGENTUI}
O={ctx.dir}
{body}
"""
    return ctx.run(["unshare", "-m", "sh", "-c", sh], raw=True)


def read_o(ctx, name):
    try:
        return open(ctx.p(name), encoding="utf-8", errors="replace").read()
    except FileNotFoundError:
        return ""


@case("readonly_fs_store_stats")
def _(ctx):
    store(ctx)
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
mount -o remount,ro $M
set +e
$A memory stats --data-dir $M/d""")
    rc, out, err = r
    no_tb(*r)
    if "in use by" in (out + err).lower():
        raise Fail(f"read-only store reported as lock held: {err.strip()!r}")
    if rc == 0 and str(N_TPL) not in out:
        raise Fail(f"read-only store opened but wrong count: {out!r}")
    if rc not in (0, 2):
        raise Fail(f"exit {rc}: {err!r}")
    if rc == 2 and len(err.strip().splitlines()) != 1:
        raise Fail(f"not one line: {err!r}")


@case("readonly_fs_run")
def _(ctx):
    store(ctx)
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
mount -o remount,ro $M
set +e
$A run --data-dir $M/d --base-url {DEAD} --model m -w {ctx.p('ws')} hello""")
    rc, out, err = bad(r, 2, ["read-only", "permission", "not writable", "data dir"])
    if "in use" in err.lower():
        raise Fail(f"read-only reported as lock: {err!r}")


@case("readonly_fs_remember")
def _(ctx):
    store(ctx)
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
mount -o remount,ro $M
set +e
$A memory remember --data-dir $M/d newrule""")
    rc, out, err = bad(r, 2, ["read-only", "permission", "not writable"])
    if "in use" in err.lower():
        raise Fail(f"read-only reported as lock: {err!r}")


@case("readonly_fs_doctor")
def _(ctx):
    store(ctx)
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
mount -o remount,ro $M
set +e
$A doctor --data-dir $M/d --base-url {DEAD} --model m""")
    rc, out, err = bad(r, 2, ["read-only", "permission", "not writable"], one_line=False, where="all")
    if "in use by" in (out + err).lower():
        raise Fail("read-only store reported as lock held")


@case("disk_full_new_store_remember")
def _(ctx):
    r = unshare_script(ctx, """dd if=/dev/zero of=$M/fill bs=4k 2>/dev/null || true
set +e
$A memory remember --data-dir $M/d newrule""", size="256k")
    bad(r, 2, ["disk", "space", "full"])


@case("disk_full_existing_store_remember_keeps_count")
def _(ctx):
    store(ctx)
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
dd if=/dev/zero of=$M/fill bs=1k 2>/dev/null || true
set +e
$A memory remember --data-dir $M/d newrule >$O/o1 2>$O/e1; echo $? >$O/rc1
rm -f $M/fill
$A memory stats --json --data-dir $M/d >$O/o2 2>$O/e2; echo $? >$O/rc2""", size="2m")
    no_tb(*r)
    rc1 = int(read_o(ctx, "rc1") or -1)
    e1 = read_o(ctx, "e1")
    no_tb(rc1, read_o(ctx, "o1"), e1)
    if rc1 != 2:
        raise Fail(f"remember on a full disk exit {rc1}: {e1.strip()[:200]!r}")
    if read_o(ctx, "rc2").strip() != "0":
        raise Fail(f"store unusable after disk freed: {read_o(ctx, 'e2')[:200]!r}")
    n = json.loads(read_o(ctx, "o2"))["total"]
    if n != N_TPL:
        raise Fail(f"count {N_TPL} -> {n} after a full-disk remember")


@case("disk_full_run")
def _(ctx):
    r = unshare_script(ctx, f"""dd if=/dev/zero of=$M/fill bs=4k 2>/dev/null || true
set +e
$A run --data-dir $M/d --base-url {DEAD} --model m -w {ctx.p('ws')} hello""", size="256k")
    bad(r, 2, ["disk", "space", "full"])


@case("disk_filling_during_run_not_exit0")
def _(ctx):
    url = ctx.fake(command="true")
    r = unshare_script(ctx, f"""$A memory remember --data-dir $M/d seed >/dev/null 2>&1
dd if=/dev/zero of=$M/reserve bs=1k count=24 2>/dev/null
dd if=/dev/zero of=$M/fill bs=1k 2>/dev/null || true
rm -f $M/reserve
set +e
$A run --json --data-dir $M/d --base-url {url} --model fake -w {ctx.p('ws')} 'count the files here'""",
                       size="3m")
    rc, out, err = r
    no_tb(*r)
    if rc == 0:
        raise Fail(f"run exited 0 though the disk filled: {err.strip()[-300:]!r}")
    if rc not in (1, 2):
        raise Fail(f"exit {rc}: {err.strip()[-300:]!r}")


@case("memory_leveldb_is_file")
def _(ctx):
    os.makedirs(ctx.dd)
    open(os.path.join(ctx.dd, "memory.leveldb"), "w").write("x")
    bad(ctx.run(["memory", "stats", "--data-dir", ctx.dd]), 2, ["memory.leveldb", "not a directory", "file"])


@case("memory_leveldb_foreign_dir_not_turned_into_store")
def _(ctx):
    sd = os.path.join(ctx.dd, "memory.leveldb")
    os.makedirs(sd)
    open(os.path.join(sd, "notes.txt"), "w").write("my notes")
    before = snap(sd)
    bad(ctx.run(["memory", "remember", "--data-dir", ctx.dd, "x"]), 2, ["memory.leveldb", "store", "repair"])
    same_store(before, sd, "remember")


@case("memory_leveldb_foreign_dir_doctor")
def _(ctx):
    sd = os.path.join(ctx.dd, "memory.leveldb")
    os.makedirs(sd)
    open(os.path.join(sd, "notes.txt"), "w").write("my notes")
    before = snap(sd)
    bad(ctx.run(["doctor", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"]), 2, None,
        one_line=False, where="all")
    same_store(before, sd, "doctor")


@case("datadir_non_utf8_path_works")
def _(ctx):
    d = os.fsencode(ctx.dir) + b"/d\xff\xfe"
    e = dict(ctx.env)
    r = subprocess.run([AGENTUI.encode(), b"memory", b"remember", b"--data-dir", d, b"rule"], env=e,
                       capture_output=True, timeout=45)
    no_tb(r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"))
    if r.returncode not in (0, 2):
        raise Fail(f"exit {r.returncode}")


@case("audit_subdir_is_file_no_tb")
def _(ctx):
    os.makedirs(ctx.dd)
    open(os.path.join(ctx.dd, "audit"), "w").write("x")
    rc, out, err = ctx.run(["audit", "--data-dir", ctx.dd])
    no_tb(rc, out, err)
    if rc not in (1, 2):
        raise Fail(f"exit {rc} (audit dir is a file, reported as fine?) out={out[:200]!r}")


@case("audit_garbage_log_no_tb")
def _(ctx):
    os.makedirs(os.path.join(ctx.dd, "audit"))
    open(os.path.join(ctx.dd, "audit", "approvals.jsonl"), "wb").write(b"\xff\xfe{not json\n\x00\x01\n{\"a\":1}\n")
    rc, out, err = ctx.run(["audit", "--data-dir", ctx.dd])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("tasks_dir_is_file_run_no_tb")
def _(ctx):
    url = ctx.fake(command="true")
    os.makedirs(ctx.dd)
    open(os.path.join(ctx.dd, "tasks"), "w").write("x")
    rc, out, err = ctx.run(runargs(ctx, url=url, task="say hi"))
    no_tb(rc, out, err)
    if rc == 0:
        raise Fail("task log cannot be written but run exited 0")


# ---- C. config file
CFG_BAD = {
    "dir": None,
    "binary": bytes(range(256)) * 4,
    "invalid_toml": b"[llm\nbase_url = = 'x'\n",
    "base_url_int": b"[llm]\nbase_url = 5\n",
    "bad_utf8": b"[llm]\nmodel = \"\xff\xfe\"\n",
    "timeout_neg": b"[tools]\ntimeout_s = -5\n",
    "max_parallel_zero": b"[llm]\nmax_parallel = 0\n",
    "max_task_chars_neg": b"[pipeline]\nmax_task_chars = -1\n",
    "max_task_chars_str": b"[pipeline]\nmax_task_chars = \"abc\"\n",
    "read_timeout_nan": b"[llm]\nread_timeout_s = nan\n",
    "read_timeout_inf": b"[llm]\nread_timeout_s = inf\n",
    "data_dir_int": b"data_dir = 5\n",
    "role_tier_unknown": b"[roles]\nexecutor = \"nosuch\"\n",
    "provider_unknown": b"[llm]\nprovider = \"telepathy\"\n",
    "llm_not_table": b"llm = 3\n",
}


def mkcfg(ctx, kind):
    p = ctx.p("config.toml")
    if kind == "dir":
        os.makedirs(p)
    else:
        open(p, "wb").write(CFG_BAD[kind])
    return p


CFG_CMDS = {
    "run": lambda ctx, c: ["run", "--config", c, "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m", "x"],
    "doctor": lambda ctx, c: ["doctor", "--config", c, "--data-dir", ctx.dd],
    "memory_stats": lambda ctx, c: ["memory", "stats", "--config", c, "--data-dir", ctx.dd],
    "audit": lambda ctx, c: ["audit", "--config", c, "--data-dir", ctx.dd],
    "mcp_list": lambda ctx, c: ["mcp", "list", "--no-connect", "--config", c],
    "mcp_add": lambda ctx, c: ["mcp", "add", "--config", c, "srv", "echo"],
}
for _k in CFG_BAD:
    cmds = CFG_CMDS if _k in ("dir", "binary", "invalid_toml") else {"run": CFG_CMDS["run"]}
    for _c, _f in cmds.items():
        def _mk(k=_k, f=_f, c=_c):
            def fn(ctx):
                p = mkcfg(ctx, k)
                before = None if k == "dir" else open(p, "rb").read()
                bad(ctx.run(f(ctx, p)), 2, ["config.toml"], one_line=(c != "doctor"),
                    where="err" if c != "doctor" else "all")
                if before is not None and open(p, "rb").read() != before:
                    raise Fail("the bad config file was rewritten")
            return fn
        case(f"config_{_k}_{_c}")(_mk())


@case("config_env_AGENTUI_CONFIG_dir")
def _(ctx):
    p = mkcfg(ctx, "dir")
    bad(ctx.run(["memory", "stats", "--data-dir", ctx.dd], env={"AGENTUI_CONFIG": p}), 2, ["config.toml"])


@case("config_unreadable_by_user")
def _(ctx):
    p = ctx.p("config.toml")
    open(p, "w").write("[llm]\nmodel = 'm'\n")
    os.chmod(p, 0o600)
    bad(ctx.run(["memory", "stats", "--config", p, "--data-dir", ctx.p("home", "d")], prefix=NOBODY), 2,
        ["config.toml"])


@case("config_missing_explicit_no_tb")
def _(ctx):
    rc, out, err = ctx.run(["memory", "stats", "--config", ctx.p("nope.toml"), "--data-dir", ctx.dd])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


# ---- D. themes / TUI
def tui(ctx, args, env=None, wait_start=None, sig=None, timeout=40):
    """Run the TUI under script(1) with a fixed 100x30 pty. If sig: wait wait_start s, then send sig to agentui."""
    inner = "stty rows 30 cols 100; exec " + " ".join(_q(a) for a in [AGENTUI] + args)
    e = dict(ctx.env)
    e.update(env or {})
    pr = subprocess.Popen(["script", "-qfec", inner, "/dev/null"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, start_new_session=True,
                          cwd=ctx.p("ws"))
    chunks = []
    th = threading.Thread(target=lambda: chunks.append(pr.stdout.read()), daemon=True)
    th.start()
    if sig:
        time.sleep(wait_start)
        if pr.poll() is not None:
            th.join(5)
            raise Fail(f"TUI exited early rc={pr.returncode}: {_tail(chunks)}")
        pids = [p for p in _find_agentui(ctx.dd)]
        if not pids:
            raise Fail("could not find the agentui process")
        for p in pids:
            os.kill(p, sig)
    try:
        pr.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(pr.pid, signal.SIGKILL)
        pr.wait()
        th.join(5)
        raise Fail(f"TUI still running after {timeout}s (started instead of failing?): {_tail(chunks)}")
    th.join(5)
    out = b"".join(chunks).decode("utf-8", "replace")
    return pr.returncode, out, pr.stderr.read().decode("utf-8", "replace")


def _tail(chunks):
    import re
    t = b"".join(chunks).decode("utf-8", "replace")
    t = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", t)
    return repr(t[-300:])


def _q(s):
    return "'" + s.replace("'", "'\\''") + "'"


def _find_agentui(marker):
    res = []
    for pd in glob.glob("/proc/[0-9]*"):
        try:
            argv = open(pd + "/cmdline", "rb").read().split(b"\0")
            s = [a.decode("utf-8", "replace") for a in argv]
            if any(marker == a for a in s) and any("agentui" in a for a in s[:2]) and "script" not in s[0]:
                res.append(int(pd.split("/")[-1]))
        except Exception:
            pass
    return res


def tui_bad(ctx, args, kw=None, code=None):
    rc, out, err = tui(ctx, args + ["--data-dir", ctx.dd] if "--data-dir" not in args else args)
    no_tb(rc, out, err)
    if rc == 0:
        raise Fail(f"TUI exited 0 on bad input: {out[-300:]!r}")
    if code is not None and rc != code:
        raise Fail(f"TUI exit {rc}, expected {code}: {out[-300:]!r}")
    if kw and not any(k.lower() in (out + err).lower() for k in kw):
        raise Fail(f"TUI message does not name the problem {kw}: {out[-300:]!r}")


@case("tui_theme_unknown")
def _(ctx):
    tui_bad(ctx, ["ui", "--theme", "nosuchtheme"], ["theme", "nosuchtheme"], 2)


@case("tui_theme_unknown_toplevel")
def _(ctx):
    tui_bad(ctx, ["--theme", "nosuchtheme"], ["theme", "nosuchtheme"], 2)


@case("tui_theme_binary_file")
def _(ctx):
    t = ctx.p("bin.toml")
    open(t, "wb").write(bytes(range(256)) * 8)
    tui_bad(ctx, ["ui", "--theme", t], ["theme", "bin.toml"], 2)


@case("tui_theme_invalid_toml")
def _(ctx):
    t = ctx.p("bad.toml")
    open(t, "w").write("[colors\nx==")
    tui_bad(ctx, ["ui", "--theme", t], ["theme", "bad.toml"], 2)


@case("tui_theme_missing_file")
def _(ctx):
    tui_bad(ctx, ["ui", "--theme", ctx.p("missing.toml")], ["theme", "missing.toml"], 2)


@case("tui_theme_directory")
def _(ctx):
    d = ctx.p("dir.toml")
    os.makedirs(d)
    tui_bad(ctx, ["ui", "--theme", d], ["theme", "dir.toml"], 2)


@case("tui_theme_empty_string")
def _(ctx):
    tui_bad(ctx, ["ui", "--theme", ""], ["theme"], 2)


@case("tui_config_theme_unknown")
def _(ctx):
    c = ctx.p("c.toml")
    open(c, "w").write('[ui]\ntheme = "ultraviolet"\n')
    tui_bad(ctx, ["ui", "--config", c], ["theme", "ultraviolet"], 2)


@case("tui_base_url_no_host")
def _(ctx):
    tui_bad(ctx, ["ui", "--base-url", "http://"], ["host", "base_url"], 2)


@case("tui_base_url_port_99999")
def _(ctx):
    tui_bad(ctx, ["ui", "--base-url", "http://127.0.0.1:99999/v1"], ["port"], 2)


@case("tui_datadir_is_file")
def _(ctx):
    f = datadir_file(ctx)
    tui_bad(ctx, ["ui", "--data-dir", f, "--base-url", DEAD], ["data dir", "file", "not a directory"])


@case("tui_config_is_dir")
def _(ctx):
    p = mkcfg(ctx, "dir")
    tui_bad(ctx, ["ui", "--config", p], ["config.toml"], 2)


@case("tui_damaged_store_no_current")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    before = snap(sd)
    tui_bad(ctx, ["ui", "--base-url", DEAD], ["repair"])
    same_store(before, sd, "the TUI")


@case("tui_workspace_missing")
def _(ctx):
    tui_bad(ctx, ["ui", "--base-url", DEAD, "-w", ctx.p("no", "such", "ws")], ["workspace", "no/such/ws", "directory"])


@case("tui_theme_light_starts_and_sigterm_143")
def _(ctx):
    rc, out, err = tui(ctx, ["--theme", "light", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"],
                       wait_start=8, sig=signal.SIGTERM)
    no_tb(rc, out, err)
    if rc != 143:
        raise Fail(f"TUI SIGTERM exit {rc}, expected 143")


@case("tui_sighup_129")
def _(ctx):
    rc, out, err = tui(ctx, ["ui", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"],
                       wait_start=8, sig=signal.SIGHUP)
    no_tb(rc, out, err)
    if rc != 129:
        raise Fail(f"TUI SIGHUP exit {rc}, expected 129")


@case("replay_theme_unknown")
def _(ctx):
    f = ctx.p("rec.jsonl")
    open(f, "w").write("")
    tui_bad(ctx, ["replay", "--theme", "nosuch", f], ["theme", "nosuch"], 2)


# ---- E. task text
@case("run_invalid_utf8_argv")
def _(ctx):
    url = ctx.fake(command="true")
    a = [x.encode() for x in runargs(ctx, url=url, task=None)] + [b"count \xff\xfe files"]
    r = subprocess.run([AGENTUI.encode()] + a, env=ctx.env, capture_output=True, timeout=45, cwd=ctx.p("ws"))
    bad((r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")), 2,
        ["utf-8", "utf8"])
    roles = [b["messages"][0]["content"][:30] for b in ctx.llm_log() if b.get("response_format")]
    if roles:
        raise Fail(f"LLM roles were called with the invalid task: {roles}")


@case("run_invalid_utf8_encoded_surrogate_argv")
def _(ctx):
    a = [x.encode() for x in runargs(ctx, task=None)] + [b"x \xed\xa0\x80 y"]
    r = subprocess.run([AGENTUI.encode()] + a, env=ctx.env, capture_output=True, timeout=45, cwd=ctx.p("ws"))
    bad((r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")), 2,
        ["utf-8", "utf8"])


@case("run_invalid_utf8_stdin")
def _(ctx):
    bad(ctx.run(runargs(ctx, task="-"), stdin=b"count the \xc3\x28 files\n"), 2, ["utf-8", "utf8"])


@case("run_invalid_utf8_stdin_json")
def _(ctx):
    rc, out, err = ctx.run(runargs(ctx, "--json", task="-"), stdin=b"\x80\x81\x82")
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}")
    if "utf" not in (out + err).lower():
        raise Fail(f"no message naming UTF-8: {err!r} {out[:200]!r}")


@case("run_empty_task")
def _(ctx):
    bad(ctx.run(runargs(ctx, task="")), 2, ["task", "empty"], one_line=False)


@case("run_whitespace_task")
def _(ctx):
    bad(ctx.run(runargs(ctx, task="   \n\t ")), 2, ["task", "empty"], one_line=False)


@case("run_empty_stdin")
def _(ctx):
    bad(ctx.run(runargs(ctx, task="-"), stdin=b""), 2, ["task", "empty", "stdin"], one_line=False)


@case("run_huge_stdin_10MB_no_tb")
def _(ctx):
    rc, out, err = ctx.run(runargs(ctx, task="-"), stdin=b"count the files. " * 620000)
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc} (endpoint is unreachable)")


@case("run_nul_and_escapes_in_task_no_tb")
def _(ctx):
    rc, out, err = ctx.run(runargs(ctx, task="-"), stdin=b"count\x00 the \x1b[2J files \xe2\x80\xae")
    no_tb(rc, out, err)
    if rc not in (0, 1, 2):
        raise Fail(f"exit {rc}")


def _truncation_case(ctx, task, cap=None):
    url = ctx.fake(command="true")
    extra = []
    if cap:
        c = ctx.p("c.toml")
        open(c, "w").write(f"[pipeline]\nmax_task_chars = {cap}\n")
        extra = ["--config", c]
    rc, out, err = ctx.run(runargs(ctx, "--json", *extra, url=url, task="-"), stdin=task.encode())
    no_tb(rc, out, err)
    if rc not in (0, 1):
        raise Fail(f"exit {rc}: {err.strip()[-300:]!r}")
    try:
        j = json.loads(out)
    except Exception:
        raise Fail(f"stdout not JSON: {out[:200]!r}")
    if "task_truncated" not in j:
        raise Fail(f"no task_truncated in --json keys {sorted(j)}")
    if not any(k in err.lower() for k in ("trunc", "max_task_chars", "cut")):
        raise Fail("no truncation warning on stderr")
    limit = cap or 16000
    for b in ctx.llm_log():
        body = "".join(m.get("content") or "" for m in b["messages"])
        if body.count("Z") > limit:
            raise Fail(f"a prompt carries {body.count('Z')} task chars > cap {limit}")
    logs = glob.glob(os.path.join(ctx.dd, "tasks", "*.jsonl"))
    if not logs:
        raise Fail("no task log")
    if not any(task in json.dumps(json.loads(line), ensure_ascii=False) for line in open(logs[0]) if line.strip()):
        if task not in open(logs[0], encoding="utf-8").read():
            raise Fail("task log lacks the verbatim task text")


@case("run_100kB_task_truncated_default")
def _(ctx):
    _truncation_case(ctx, "count the files " + "Z" * 100000)


@case("run_task_truncated_configured_cap")
def _(ctx):
    # max_task_chars has a floor of 1000 (config validation says so); use it
    _truncation_case(ctx, "count the files " + "Z" * 3000, cap=1000)


# ---- F. numbers
NUMS = [
    ("run_timeout_neg", lambda c: runargs(c, "--timeout", "-1"), ["timeout"]),
    ("run_timeout_zero", lambda c: runargs(c, "--timeout", "0"), ["timeout"]),
    ("run_timeout_alpha", lambda c: runargs(c, "--timeout", "abc"), ["timeout"]),
    ("run_timeout_nan", lambda c: runargs(c, "--timeout", "nan"), ["timeout"]),
    ("run_timeout_inf", lambda c: runargs(c, "--timeout", "inf"), ["timeout"]),
    ("run_timeout_1e400", lambda c: runargs(c, "--timeout", "1e400"), ["timeout"]),
    ("doctor_timeout_neg", lambda c: ["doctor", "--data-dir", c.dd, "--timeout", "-5"], ["timeout"]),
    ("doctor_timeout_zero", lambda c: ["doctor", "--data-dir", c.dd, "--timeout", "0"], ["timeout"]),
    ("doctor_timeout_nan", lambda c: ["doctor", "--data-dir", c.dd, "--timeout", "nan"], ["timeout"]),
    ("audit_events_neg", lambda c: ["audit", "--data-dir", c.dd, "--events", "-1"], ["events"]),
    ("audit_approvals_neg", lambda c: ["audit", "--data-dir", c.dd, "--approvals", "-3"], ["approvals"]),
    ("audit_events_alpha", lambda c: ["audit", "--data-dir", c.dd, "--events", "x"], ["events"]),
    ("audit_events_float", lambda c: ["audit", "--data-dir", c.dd, "--events", "1.5"], ["events"]),
    ("memory_list_limit_neg", lambda c: ["memory", "list", "--data-dir", c.dd, "--limit", "-1"], ["limit"]),
    ("memory_list_limit_alpha", lambda c: ["memory", "list", "--data-dir", c.dd, "--limit", "ten"], ["limit"]),
    ("memory_list_level_bad", lambda c: ["memory", "list", "--data-dir", c.dd, "--level", "Q"], ["level"]),
    ("bench_timeout_neg", lambda c: ["bench", "--data-dir", c.dd, "--timeout", "-1", _suite(c)], ["timeout"]),
    ("bench_timeout_zero", lambda c: ["bench", "--data-dir", c.dd, "--timeout", "0", _suite(c)], ["timeout"]),
    ("replay_speed_neg", lambda c: ["replay", "--speed", "-1", _rec(c)], ["speed"]),
    ("replay_speed_nan", lambda c: ["replay", "--speed", "nan", _rec(c)], ["speed"]),
    ("mcp_add_timeout_neg", lambda c: ["mcp", "add", "--config", c.p("c.toml"), "--timeout", "-1", "srv", "echo"], ["timeout"]),
    ("mcp_add_timeout_zero", lambda c: ["mcp", "add", "--config", c.p("c.toml"), "--timeout", "0", "srv", "echo"], ["timeout"]),
    ("mcp_add_timeout_nan", lambda c: ["mcp", "add", "--config", c.p("c.toml"), "--timeout", "nan", "srv", "echo"], ["timeout"]),
]


def _suite(ctx, tasks=None):
    p = ctx.p("suite.json")
    json.dump(tasks if tasks is not None else [{"id": "t1", "description": "say hi", "init": "true", "check": "true"}],
              open(p, "w"))
    return p


def _rec(ctx):
    p = ctx.p("rec.jsonl")
    open(p, "w").write("")
    return p


for _n, _f, _kw in NUMS:
    def _mk(f=_f, kw=_kw, n=_n):
        def fn(ctx):
            os.makedirs(ctx.dd, exist_ok=True)
            res = ctx.run(f(ctx))
            # argparse errors print usage + error: not one line, but must be exit 2 without traceback
            bad(res, 2, kw, one_line=False)
            if n.startswith("mcp_add") and os.path.exists(ctx.p("c.toml")) and "srv" in open(ctx.p("c.toml")).read():
                raise Fail("the invalid server was written to the config")
        return fn
    case(_n)(_mk())


@case("memory_list_limit_huge_ok")
def _(ctx):
    store(ctx)
    rc, out, err = ok(ctx.run(["memory", "list", "--json", "--data-dir", ctx.dd, "--limit", "9" * 30]))
    if len(json.loads(out)) != N_TPL:
        raise Fail("wrong number listed")


@case("audit_events_huge_ok")
def _(ctx):
    os.makedirs(ctx.dd)
    ok(ctx.run(["audit", "--data-dir", ctx.dd, "--events", "9" * 30]))


@case("tree_init_max_attempts_neg")
def _(ctx):
    _git(ctx)
    rc, out, err = ctx.run(["tree", "--repo", ctx.p("ws"), "init", "--max-attempts", "-1", "goal"])
    no_tb(rc, out, err)
    if rc == 0:
        raise Fail("negative --max-attempts accepted")


@case("tree_init_max_attempts_zero")
def _(ctx):
    _git(ctx)
    rc, out, err = ctx.run(["tree", "--repo", ctx.p("ws"), "init", "--max-attempts", "0", "goal"])
    no_tb(rc, out, err)
    if rc == 0:
        raise Fail("--max-attempts 0 accepted")


@case("tree_run_max_iterations_neg")
def _(ctx):
    _git(ctx, init_tree=True)
    rc, out, err = ctx.run(["tree", "--repo", ctx.p("ws"), "run", "--max-iterations", "-5", "--data-dir", ctx.dd,
                            "--base-url", DEAD, "--model", "m"])
    no_tb(rc, out, err)
    if rc == 0:
        raise Fail("negative --max-iterations accepted")


def _git(ctx, init_tree=False):
    ws = ctx.p("ws")
    g = ["git", "-C", ws, "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", "-b", "main", ws], check=True, env=ctx.env)
    open(os.path.join(ws, "README"), "w").write("x\n")
    subprocess.run(g + ["add", "."], check=True, env=ctx.env)
    subprocess.run(g + ["commit", "-qm", "init"], check=True, env=ctx.env)
    if init_tree:
        rc, out, err = ctx.run(["tree", "--repo", ws, "init", "--guard", "true", "a goal"])
        if rc != 0:
            raise Fail(f"setup tree init failed: {err!r}")


@case("tree_step_bad_url_exit2")
def _(ctx):
    _git(ctx, init_tree=True)
    e = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    rc, out, err = ctx.run(["tree", "--repo", ctx.p("ws"), "start"], env=e)
    if rc != 0:
        raise Fail(f"setup tree start: {err!r}")
    bad(ctx.run(["tree", "--repo", ctx.p("ws"), "step", "--data-dir", ctx.dd, "--base-url", "http://127.0.0.1:99999/v1",
                 "--model", "m"], env=e), 2, ["port"])


@case("tree_step_datadir_file_exit2")
def _(ctx):
    _git(ctx, init_tree=True)
    e = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    ctx.run(["tree", "--repo", ctx.p("ws"), "start"], env=e)
    url = ctx.fake(command="true")
    f = datadir_file(ctx)
    bad(ctx.run(["tree", "--repo", ctx.p("ws"), "step", "--data-dir", f, "--base-url", url, "--model", "fake"], env=e),
        2, ["data dir", "file", "not a directory"])


@case("tree_status_not_a_repo")
def _(ctx):
    rc, out, err = ctx.run(["tree", "--repo", ctx.p("nope"), "status"])
    no_tb(rc, out, err)
    if rc != 1:
        raise Fail(f"exit {rc}, README: 1 invalid state or an error")


# ---- G. unknown ids / files
@case("memory_show_unknown_id")
def _(ctx):
    store(ctx)
    bad(ctx.run(["memory", "show", "--data-dir", ctx.dd, "ffffffffzz"]), 2, ["ffffffffzz", "no megram", "not found"])


@case("memory_show_empty_id")
def _(ctx):
    store(ctx)
    bad(ctx.run(["memory", "show", "--data-dir", ctx.dd, ""]), 2, None)


@case("memory_forget_unknown_id_keeps_count")
def _(ctx):
    store(ctx)
    bad(ctx.run(["memory", "forget", "--yes", "--data-dir", ctx.dd, "zzzz"]), 2, ["zzzz", "no megram", "not found"])
    if count(ctx) != N_TPL:
        raise Fail("count changed")


@case("memory_forget_empty_prefix_deletes_nothing")
def _(ctx):
    store(ctx)
    rc, out, err = ctx.run(["memory", "forget", "--yes", "--data-dir", ctx.dd, ""])
    no_tb(rc, out, err)
    n = count(ctx)
    if n != N_TPL:
        raise Fail(f"empty prefix deleted Megrams: {N_TPL} -> {n}")
    if rc != 2:
        raise Fail(f"exit {rc}")


@case("memory_forget_ambiguous_prefix_deletes_nothing")
def _(ctx):
    store(ctx)
    rc, out, err = ctx.run(["memory", "list", "--json", "--data-dir", ctx.dd])
    ids = [m["id"] for m in json.loads(out)]
    from collections import Counter
    c = Counter(i[0] for i in ids).most_common(1)
    k = 0
    while c[0][1] < 2 and k < 17:
        ctx.run(["memory", "remember", "--data-dir", ctx.dd, f"extra rule {k}"])
        ids = [m["id"] for m in json.loads(ctx.run(["memory", "list", "--json", "--data-dir", ctx.dd])[1])]
        c = Counter(i[0] for i in ids).most_common(1)
        k += 1
    n0 = len(ids)
    rc, out, err = ctx.run(["memory", "forget", "--yes", "--data-dir", ctx.dd, c[0][0]])
    no_tb(rc, out, err)
    n = count(ctx)
    if n != n0:
        raise Fail(f"ambiguous prefix {c[0][0]!r} deleted {n0 - n} Megram(s)")
    if rc != 2:
        raise Fail(f"exit {rc}")


@case("memory_forget_without_yes_noninteractive_keeps")
def _(ctx):
    store(ctx)
    ids = [m["id"] for m in json.loads(ctx.run(["memory", "list", "--json", "--data-dir", ctx.dd])[1])]
    rc, out, err = ctx.run(["memory", "forget", "--data-dir", ctx.dd, ids[0]], stdin=b"")
    no_tb(rc, out, err)
    if count(ctx) != N_TPL:
        raise Fail("forget without --yes and without a TTY deleted the Megram")


@case("memory_forget_path_like_id")
def _(ctx):
    store(ctx)
    bad(ctx.run(["memory", "forget", "--yes", "--data-dir", ctx.dd, "../../etc"]), 2, None)
    if count(ctx) != N_TPL:
        raise Fail("count changed")


@case("memory_remember_empty_text")
def _(ctx):
    store(ctx)
    bad(ctx.run(["memory", "remember", "--data-dir", ctx.dd, ""]), 2, ["empty", "text", "rule"])
    if count(ctx) != N_TPL:
        raise Fail("empty rule was stored")


@case("memory_remember_invalid_utf8")
def _(ctx):
    store(ctx)
    r = subprocess.run([AGENTUI.encode(), b"memory", b"remember", b"--data-dir", ctx.dd.encode(), b"rule \xff\xfe"],
                       env=ctx.env, capture_output=True, timeout=45)
    res = (r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace"))
    bad(res, 2, ["utf-8", "utf8"])
    if count(ctx) != N_TPL:
        raise Fail("count changed")


@case("memory_remember_space_bad")
def _(ctx):
    store(ctx)
    rc, out, err = ctx.run(["memory", "remember", "--data-dir", ctx.dd, "--space", "tool:", "x"])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("memory_remember_huge_text_no_tb")
def _(ctx):
    store(ctx)
    rc, out, err = ctx.run(["memory", "remember", "--data-dir", ctx.dd, "r" * 100000])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")
    if count(ctx) != N_TPL + (1 if rc == 0 else 0):
        raise Fail("count mismatch")


@case("memory_export_out_is_dir")
def _(ctx):
    store(ctx)
    os.makedirs(ctx.p("outdir"))
    bad(ctx.run(["memory", "export", "--data-dir", ctx.dd, "--out", ctx.p("outdir")]), 2, ["outdir"])


@case("memory_export_out_parent_missing")
def _(ctx):
    store(ctx)
    bad(ctx.run(["memory", "export", "--data-dir", ctx.dd, "--out", ctx.p("no", "such", "x.jsonl")]), 2, ["x.jsonl", "no such"])


@case("memory_export_ok_count")
def _(ctx):
    store(ctx)
    rc, out, err = ok(ctx.run(["memory", "export", "--data-dir", ctx.dd, "--out", ctx.p("m.jsonl")]))
    n = sum(1 for x in open(ctx.p("m.jsonl")) if x.strip())
    if n != N_TPL:
        raise Fail(f"export wrote {n} lines, store has {N_TPL}")


@case("memory_unknown_action")
def _(ctx):
    bad(ctx.run(["memory", "frobnicate", "--data-dir", ctx.dd]), 2, None, one_line=False)


@case("audit_task_unknown")
def _(ctx):
    os.makedirs(ctx.dd)
    bad(ctx.run(["audit", "--data-dir", ctx.dd, "--task", "nosuchtask"]), 2, ["nosuchtask", "task"])


@case("audit_task_empty")
def _(ctx):
    os.makedirs(ctx.dd)
    rc, out, err = ctx.run(["audit", "--data-dir", ctx.dd, "--task", ""])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("audit_datadir_missing_one_line")
def _(ctx):
    # not documented either way: exit 0, or exit 2 with one line (what this build does)
    bad(ctx.run(["audit", "--data-dir", ctx.p("fresh", "dd")]), (0, 2), None) if ctx.run(
        ["audit", "--data-dir", ctx.p("fresh", "dd")])[0] == 2 else ok(ctx.run(["audit", "--data-dir", ctx.p("fresh", "dd")]))


REPLAY = {
    "missing": lambda c: c.p("nope.jsonl"),
    "directory": lambda c: (os.makedirs(c.p("rdir")), c.p("rdir"))[1],
    "binary": lambda c: (open(c.p("b.jsonl"), "wb").write(bytes(range(256)) * 4), c.p("b.jsonl"))[1],
    "not_json": lambda c: (open(c.p("t.jsonl"), "w").write("hello\nworld\n"), c.p("t.jsonl"))[1],
    "json_not_envelope": lambda c: (open(c.p("e.jsonl"), "w").write('[1,2]\n{"a":1}\n'), c.p("e.jsonl"))[1],
}
for _k, _f in REPLAY.items():
    def _mk(f=_f):
        def fn(ctx):
            p = f(ctx)
            rc, out, err = tui(ctx, ["replay", "--speed", "0", p])
            no_tb(rc, out, err)
            if rc != 2:
                raise Fail(f"replay exit {rc}, expected 2: {out[-200:]!r}")
        return fn
    case(f"replay_{_k}")(_mk())


BENCH = {
    "missing": lambda c: c.p("nope.json"),
    "directory": lambda c: (os.makedirs(c.p("sdir")), c.p("sdir"))[1],
    "invalid_json": lambda c: (open(c.p("s.json"), "w").write("[{"), c.p("s.json"))[1],
    "binary": lambda c: (open(c.p("s.json"), "wb").write(b"\xff\xfe\x00" * 50), c.p("s.json"))[1],
    "not_a_list": lambda c: _suite(c, {"id": "x"}),
    "entry_missing_fields": lambda c: _suite(c, [{"id": "x"}]),
    "entry_not_object": lambda c: _suite(c, [1, "two"]),
    "duplicate_ids": lambda c: _suite(c, [{"id": "a", "description": "d", "init": "true", "check": "true"}] * 2),
}
for _k, _f in BENCH.items():
    def _mk(f=_f):
        def fn(ctx):
            bad(ctx.run(["bench", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m", f(ctx)]), 2, None,
                one_line=False)
        return fn
    case(f"bench_suite_{_k}")(_mk())


@case("bench_ids_unknown")
def _(ctx):
    bad(ctx.run(["bench", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m", "--ids", "nosuch", _suite(ctx)]),
        2, ["nosuch"], one_line=False)


@case("bench_out_is_dir")
def _(ctx):
    os.makedirs(ctx.p("odir"))
    bad(ctx.run(["bench", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m", "--out", ctx.p("odir"), _suite(ctx)]),
        2, ["odir"], one_line=False)


@case("bench_bad_url")
def _(ctx):
    bad(ctx.run(["bench", "--data-dir", ctx.dd, "--base-url", "http://", "--model", "m", _suite(ctx)]), 2, ["host"],
        one_line=False)


MCP = {
    "name_space": ["a b", "echo"],
    "name_dot": ["a.b", "echo"],
    "name_empty": ["", "echo"],
    "no_command": ["srv"],
    "url_no_host": ["--url", "http://", "srv"],
    "url_ftp": ["--url", "ftp://x/mcp", "srv"],
    "url_port_bad": ["--url", "http://127.0.0.1:99999/mcp", "srv"],
    "env_no_equals": ["--env", "NOEQUALS", "srv", "echo"],
    "header_no_colon": ["--url", "http://127.0.0.1:8000/mcp", "--header", "nocolon", "srv"],
    "header_on_stdio": ["--header", "A: b", "srv", "echo"],
}
for _k, _a in MCP.items():
    def _mk(a=_a):
        def fn(ctx):
            c = ctx.p("c.toml")
            open(c, "w").write("# my config\n[llm]\nmodel = 'm'\n")
            before = open(c).read()
            bad(ctx.run(["mcp", "add", "--config", c] + a), 2, None, one_line=False)
            if open(c).read() != before:
                raise Fail("config file changed by a rejected mcp add")
        return fn
    case(f"mcp_add_{_k}")(_mk())


@case("mcp_remove_unknown")
def _(ctx):
    c = ctx.p("c.toml")
    open(c, "w").write("# keep\n[llm]\nmodel = 'm'\n")
    bad(ctx.run(["mcp", "remove", "--config", c, "nosuch"]), 2, ["nosuch"])
    if open(c).read() != "# keep\n[llm]\nmodel = 'm'\n":
        raise Fail("config changed")


@case("mcp_list_server_bad_command_exit1")
def _(ctx):
    c = ctx.p("c.toml")
    open(c, "w").write('[mcp.servers.bad]\ncommand = "/nonexistent/server"\nstartup_timeout_s = 5\n')
    rc, out, err = ctx.run(["mcp", "list", "--config", c])
    no_tb(rc, out, err)
    if rc != 1:
        raise Fail(f"exit {rc}, README: mcp list exits 1 if a server fails to start")


@case("mcp_list_server_table_wrong_type")
def _(ctx):
    c = ctx.p("c.toml")
    open(c, "w").write('[mcp.servers.bad]\ncommand = 5\nargs = "notalist"\n')
    bad(ctx.run(["mcp", "list", "--no-connect", "--config", c]), 2, ["c.toml"])


@case("unknown_subcommand")
def _(ctx):
    bad(ctx.run(["frobnicate"]), 2, None, one_line=False)


@case("run_unknown_flag")
def _(ctx):
    bad(ctx.run(["run", "--frobnicate", "x"]), 2, None, one_line=False)


@case("run_workspace_missing")
def _(ctx):
    bad(ctx.run(runargs(ctx)[:-1] + ["-w", ctx.p("no", "ws"), "x"]), 2, ["workspace", "no/ws"])


@case("run_workspace_is_file")
def _(ctx):
    f = ctx.p("wsfile")
    open(f, "w").write("x")
    bad(ctx.run(runargs(ctx)[:-1] + ["-w", f, "x"]), 2, ["workspace", "wsfile"])


@case("acp_garbage_stdin_stdout_protocol_only")
def _(ctx):
    rc, out, err = ctx.run(["acp", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"],
                           stdin=b"this is not json\n\xff\xfe\n{\"jsonrpc\":\"2.0\"\n", timeout=20)
    no_tb(rc, out, err)
    for line in out.splitlines():
        if line.strip():
            try:
                json.loads(line)
            except Exception:
                raise Fail(f"non-protocol line on stdout: {line[:200]!r}")


@case("acp_config_dir")
def _(ctx):
    p = mkcfg(ctx, "dir")
    rc, out, err = ctx.run(["acp", "--config", p], stdin=b"", timeout=20)
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}")


# ---- H. damaged stores
DAMAGES = ["no_current", "garbled_current", "empty_current", "current_missing_target", "no_manifest",
           "trunc_manifest", "zero_manifest", "no_ldb", "trunc_ldb", "zero_ldb"]
LOG_DAMAGES = ["log_corrupt", "log_trunc", "log_garbage"]

DMG_CMDS = {
    "stats": lambda c: ["memory", "stats", "--data-dir", c.dd],
    "doctor": lambda c: ["doctor", "--data-dir", c.dd, "--base-url", DEAD, "--model", "m"],
    "remember": lambda c: ["memory", "remember", "--data-dir", c.dd, "new rule"],
    "list": lambda c: ["memory", "list", "--data-dir", c.dd],
    "export": lambda c: ["memory", "export", "--data-dir", c.dd],
    "dream": lambda c: ["memory", "dream", "--data-dir", c.dd, "--base-url", DEAD, "--model", "m"],
    "forget": lambda c: ["memory", "forget", "--yes", "--data-dir", c.dd, "0"],
    "run": None,
}


def _dmg_case(kind, cmd, tpl="store"):
    def fn(ctx):
        sd = store(ctx, tpl)
        damage(sd, kind)
        before = snap(sd)
        if cmd == "run":
            url = ctx.fake(command="true")
            args = runargs(ctx, url=url, task="count the files")
        else:
            args = DMG_CMDS[cmd](ctx)
        isdoc = cmd == "doctor"
        bad(ctx.run(args), 2, ["memory repair"], one_line=not isdoc, where="all" if isdoc else "err")
        same_store(before, sd, cmd)
    return fn


for _d in DAMAGES:
    case(f"damaged_{_d}_stats")(_dmg_case(_d, "stats"))
for _c in ("doctor", "remember", "list", "export", "dream", "forget", "run"):
    case(f"damaged_no_current_{_c}")(_dmg_case("no_current", _c))
for _c in ("doctor", "remember", "run"):
    case(f"damaged_trunc_manifest_{_c}")(_dmg_case("trunc_manifest", _c))
    case(f"damaged_no_ldb_{_c}")(_dmg_case("no_ldb", _c))
for _d in LOG_DAMAGES:
    case(f"damaged_{_d}_stats")(_dmg_case(_d, "stats", "logstore"))
for _c in ("doctor", "remember", "export"):
    case(f"damaged_log_corrupt_{_c}")(_dmg_case("log_corrupt", _c, "logstore"))


@case("logstore_baseline_counts_all")
def _(ctx):
    if TPL.get("log_n") != N_TPL + 3:
        raise Fail(f"setup: log store reads {TPL.get('log_n')} Megrams, expected {N_TPL + 3}")


@case("damaged_flip_ldb_export_reports")
def _(ctx):
    sd = store(ctx)
    damage(sd, "flip_ldb")
    rc, out, err = ctx.run(["memory", "export", "--data-dir", ctx.dd])
    no_tb(rc, out, err)
    if rc == 0:
        n = sum(1 for x in out.splitlines() if x.strip())
        if n != N_TPL:
            raise Fail(f"flipped table bytes: export exit 0 with {n} of {N_TPL} Megrams")
    elif rc != 2:
        raise Fail(f"exit {rc}")


@case("damaged_flip_ldb_stats_no_silent_loss")
def _(ctx):
    sd = store(ctx)
    damage(sd, "flip_ldb")
    rc, out, err = ctx.run(["memory", "stats", "--json", "--data-dir", ctx.dd])
    no_tb(rc, out, err)
    if rc == 0 and json.loads(out)["total"] != N_TPL:
        raise Fail(f"stats exit 0 with {json.loads(out)['total']} of {N_TPL}")
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("lock_deleted_is_not_damage")
def _(ctx):
    sd = store(ctx)
    os.remove(os.path.join(sd, "LOCK"))
    if count(ctx) != N_TPL:
        raise Fail("count changed")


def _hold(ctx):
    sd = os.path.join(ctx.dd, "memory.leveldb")
    pr = subprocess.Popen([VPY, "-c", "import plyvel,sys,time\nd=plyvel.DB(sys.argv[1])\nprint('ok',flush=True)\ntime.sleep(120)", sd],
                          stdout=subprocess.PIPE, start_new_session=True)
    ctx.procs.append(pr)
    pr.stdout.readline()
    return pr.pid


@case("lock_held_stats_names_pid")
def _(ctx):
    store(ctx)
    pid = _hold(ctx)
    rc, out, err = bad(ctx.run(["memory", "stats", "--data-dir", ctx.dd]), 2, ["in use"])
    if str(pid) not in err:
        raise Fail(f"holder PID {pid} not named: {err.strip()!r}")


@case("lock_held_doctor_names_pid")
def _(ctx):
    store(ctx)
    pid = _hold(ctx)
    rc, out, err = bad(ctx.run(["doctor", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"]), 2,
                       ["in use"], one_line=False, where="all")
    if str(pid) not in out + err:
        raise Fail(f"holder PID {pid} not named")


@case("lock_held_remember_keeps_count")
def _(ctx):
    store(ctx)
    pid = _hold(ctx)
    bad(ctx.run(["memory", "remember", "--data-dir", ctx.dd, "x"]), 2, ["in use"])
    os.killpg(pid, signal.SIGKILL)
    time.sleep(0.3)
    if count(ctx) != N_TPL:
        raise Fail("count changed")


@case("lock_held_repair_refuses")
def _(ctx):
    store(ctx)
    pid = _hold(ctx)
    bad(ctx.run(["memory", "repair", "--data-dir", ctx.dd]), 2, ["in use"], one_line=False)


@case("lock_path_word_lock_not_confused")
def _(ctx):
    # a data dir whose path contains the word "lock", made unwritable: a permission problem, not a held lock
    d = ctx.p("lockbox", "d")
    shutil.copytree(TPL["store"], d)
    os.chmod(ctx.p("lockbox"), 0o755)
    rc, out, err = ctx.run(["memory", "remember", "--data-dir", d, "x"], prefix=NOBODY)
    no_tb(rc, out, err)
    if "in use" in err.lower():
        raise Fail(f"permission problem under a 'lock' path reported as held lock: {err.strip()!r}")
    if rc != 2:
        raise Fail(f"exit {rc}")


# ---- repair
def _repair_case(kind, tpl="store", expect_all=True):
    def fn(ctx):
        sd = store(ctx, tpl)
        n0 = N_TPL if tpl == "store" else N_TPL + 3
        if kind:
            damage(sd, kind)
        before = snap(sd)
        rc, out, err = ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
        backups = glob.glob(os.path.join(ctx.dd, "memory.leveldb.backup-*"))
        if len(backups) != 1:
            raise Fail(f"expected one backup dir, found {backups}")
        if snap(backups[0]) != before:
            raise Fail("backup differs from the store as it was before repair")
        n = count(ctx)
        if expect_all and n != n0:
            raise Fail(f"after repair {n} Megrams, expected {n0}")
        if str(n) not in out:
            raise Fail(f"repair output does not report the count after ({n}): {out.strip()[:300]!r}")
        if "before" not in out.lower() or "after" not in out.lower():
            raise Fail(f"repair output lacks before/after: {out.strip()[:300]!r}")
    return fn


case("repair_no_current")(_repair_case("no_current"))
case("repair_garbled_current")(_repair_case("garbled_current"))
case("repair_no_manifest")(_repair_case("no_manifest"))
case("repair_trunc_manifest")(_repair_case("trunc_manifest"))
case("repair_zero_manifest")(_repair_case("zero_manifest"))
case("repair_no_ldb_partial")(_repair_case("no_ldb", expect_all=False))
case("repair_trunc_ldb_partial")(_repair_case("trunc_ldb", expect_all=False))
case("repair_log_trunc")(_repair_case("log_trunc", "logstore", expect_all=False))
case("repair_log_corrupt")(_repair_case("log_corrupt", "logstore", expect_all=False))
case("repair_healthy_store_keeps_all")(_repair_case(None))


@case("repair_log_trunc_reports_bytes_dropped")
def _(ctx):
    sd = store(ctx, "logstore")
    damage(sd, "log_trunc")
    rc, out, err = ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
    if "byte" not in out.lower():
        raise Fail(f"repair does not say how many bytes it dropped: {out.strip()[:300]!r}")


@case("repair_json_parses")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    rc, out, err = ok(ctx.run(["memory", "repair", "--json", "--data-dir", ctx.dd]))
    try:
        json.loads(out)
    except Exception:
        raise Fail(f"--json output is not JSON: {out[:200]!r}")
    if count(ctx) != N_TPL:
        raise Fail("count after repair")


@case("repair_twice")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
    time.sleep(1.1)
    ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
    if count(ctx) != N_TPL:
        raise Fail("count after two repairs")


@case("repair_no_store_no_tb")
def _(ctx):
    rc, out, err = ctx.run(["memory", "repair", "--data-dir", ctx.dd])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("repair_readonly_data_dir_cannot_copy_aside")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
mount -o remount,ro $M
set +e
$A memory repair --data-dir $M/d""")
    rc, out, err = r
    no_tb(*r)
    if rc != 2:
        raise Fail(f"repair on a read-only data dir exit {rc}: {err.strip()[:200]!r}")


@case("repair_disk_full_cannot_copy_aside")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    r = unshare_script(ctx, f"""cp -a {ctx.dd} $M/d
dd if=/dev/zero of=$M/fill bs=1k 2>/dev/null || true
set +e
$A memory repair --data-dir $M/d >$O/o1 2>$O/e1; echo $? > $O/rc1
ls $M/d/memory.leveldb > $O/ls1""", size="2m")
    no_tb(*r)
    rc1 = read_o(ctx, "rc1").strip()
    no_tb(0, read_o(ctx, "o1"), read_o(ctx, "e1"))
    if rc1 != "2":
        raise Fail(f"repair with no space to copy aside exit {rc1}: {read_o(ctx, 'e1')[:200]!r}")
    files = set(read_o(ctx, "ls1").split())
    if not any(f.endswith(".ldb") for f in files):
        raise Fail(f"table files gone after a failed repair: {files}")


# ---- I. signals
def _sig_run(ctx, sig, expect, json_mode=True, mode="normal", wait_for="tool"):
    marker = f"{1000 + random.randrange(10**6)}.{random.randrange(10**4)}"
    url = ctx.fake(command=f"sleep {marker}", mode=mode)
    args = [AGENTUI] + runargs(ctx, *(["--json"] if json_mode else []), url=url, task="wait for a while")
    args[args.index("m")] = "fake"
    pr = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctx.env,
                          start_new_session=True, cwd=ctx.p("ws"))
    ctx.procs.append(pr)
    t0 = time.time()
    if wait_for == "tool":
        while time.time() - t0 < 25 and not live_procs(["sleep", marker]):
            time.sleep(0.2)
        if not live_procs(["sleep", marker]):
            pr.kill()
            o, e = pr.communicate()
            raise Fail(f"setup: the slow tool never started: {e.decode()[-300:]!r}")
    else:
        time.sleep(wait_for)
    pr.send_signal(sig)
    try:
        out, err = pr.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(pr.pid, signal.SIGKILL)
        raise Fail("agentui did not exit within 20 s of the signal")
    out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    no_tb(pr.returncode, out, err)
    time.sleep(1.0)
    left = live_procs(["sleep", marker])
    if left:
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except Exception:
                pass
        raise Fail(f"tool child still running after exit: pids {left}")
    if pr.returncode != expect:
        raise Fail(f"exit {pr.returncode}, expected {expect}")
    if json_mode:
        try:
            j = json.loads(out)
        except Exception:
            raise Fail(f"no JSON result on stdout: {out[:200]!r}")
        name = {signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP", signal.SIGINT: ""}[sig]
        if name not in str(j.get("cancelled", "")) or "interrupt" not in str(j.get("cancelled", "")):
            raise Fail(f"cancelled field {j.get('cancelled')!r}")
    else:
        if not out.strip() and not err.strip():
            raise Fail("nothing printed")


case("signal_run_sigterm_json_143")(lambda ctx: _sig_run(ctx, signal.SIGTERM, 143))
case("signal_run_sighup_json_129")(lambda ctx: _sig_run(ctx, signal.SIGHUP, 129))
case("signal_run_sigint_json_130")(lambda ctx: _sig_run(ctx, signal.SIGINT, 130))
case("signal_run_sigterm_text_143")(lambda ctx: _sig_run(ctx, signal.SIGTERM, 143, json_mode=False))
case("signal_run_sighup_text_129")(lambda ctx: _sig_run(ctx, signal.SIGHUP, 129, json_mode=False))
case("signal_run_sigterm_during_llm_hang_143")(
    lambda ctx: _sig_run(ctx, signal.SIGTERM, 143, mode="hang", wait_for=4))


@case("signal_run_double_sigterm")
def _(ctx):
    marker = f"{2000 + random.randrange(10**6)}.5"
    url = ctx.fake(command=f"sleep {marker}")
    args = [AGENTUI] + runargs(ctx, "--json", url=url, task="wait")
    pr = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctx.env, start_new_session=True)
    ctx.procs.append(pr)
    t0 = time.time()
    while time.time() - t0 < 25 and not live_procs(["sleep", marker]):
        time.sleep(0.2)
    pr.send_signal(signal.SIGTERM)
    time.sleep(0.05)
    pr.send_signal(signal.SIGTERM)
    out, err = pr.communicate(timeout=20)
    no_tb(pr.returncode, out.decode(errors="replace"), err.decode(errors="replace"))
    time.sleep(1)
    if live_procs(["sleep", marker]):
        raise Fail("tool child left running")
    if pr.returncode != 143:
        raise Fail(f"exit {pr.returncode}")


@case("signal_bench_sigterm_leaves_no_child")
def _(ctx):
    marker = f"{3000 + random.randrange(10**6)}.25"
    url = ctx.fake(command=f"sleep {marker}")
    suite = _suite(ctx, [{"id": "t1", "description": "wait a while", "init": "true", "check": "true"}])
    pr = subprocess.Popen([AGENTUI, "bench", "--data-dir", ctx.dd, "--base-url", url, "--model", "fake", suite],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctx.env, start_new_session=True,
                          cwd=ctx.p("ws"))
    ctx.procs.append(pr)
    t0 = time.time()
    while time.time() - t0 < 30 and not live_procs(["sleep", marker]):
        time.sleep(0.2)
    if not live_procs(["sleep", marker]):
        pr.kill()
        raise Fail(f"setup: tool never started: {pr.communicate()[1].decode()[-300:]!r}")
    pr.send_signal(signal.SIGTERM)
    try:
        out, err = pr.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(pr.pid, signal.SIGKILL)
        raise Fail("bench did not exit within 20 s of SIGTERM")
    no_tb(pr.returncode, out.decode(errors="replace"), err.decode(errors="replace"))
    time.sleep(1.5)
    left = live_procs(["sleep", marker])
    if left:
        for p in left:
            os.kill(p, signal.SIGKILL)
        raise Fail(f"bench child's tool still running: {left}")
    if pr.returncode != 143:
        raise Fail(f"bench exit {pr.returncode}, expected 143 like run")


# ---- J. more: damaged stores x commands, paths, output errors, timeouts, tree signals
for _c in ("doctor", "remember", "run", "list"):
    case(f"damaged_trunc_ldb_{_c}")(_dmg_case("trunc_ldb", _c))
for _c in ("remember", "doctor", "run"):
    case(f"damaged_log_trunc_{_c}")(_dmg_case("log_trunc", _c, "logstore"))
for _c in ("show", "repair_json_is_not_stats"):
    pass


@case("damaged_no_current_doctor_json")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    before = snap(sd)
    rc, out, err = ctx.run(["doctor", "--json", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m"])
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}")
    try:
        json.loads(out)
    except Exception:
        raise Fail(f"doctor --json output not JSON: {out[:200]!r}")
    if "repair" not in out:
        raise Fail("doctor --json does not name memory repair")
    same_store(before, sd, "doctor --json")


@case("datadir_file_doctor_json")
def _(ctx):
    f = datadir_file(ctx)
    rc, out, err = ctx.run(["doctor", "--json", "--data-dir", f, "--base-url", DEAD, "--model", "m"])
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}")
    try:
        json.loads(out)
    except Exception:
        raise Fail(f"doctor --json output not JSON: {out[:200]!r}")


@case("run_lock_held_warns_pid_temp_memory")
def _(ctx):
    # README: a second process gets "memory is in use by PID ..."; this build's run warns and uses a
    # temporary memory (as the tree section documents), so accept that, but the PID must be named
    store(ctx)
    pid = _hold(ctx)
    url = ctx.fake(command="true")
    rc, out, err = ctx.run(runargs(ctx, url=url))
    no_tb(rc, out, err)
    if f"in use by PID {pid}" not in err:
        raise Fail(f"holder PID {pid} not named: {err.strip()[:300]!r}")
    if rc not in (0, 1, 2):
        raise Fail(f"exit {rc}")
    os.killpg(pid, signal.SIGKILL)
    time.sleep(0.3)
    if count(ctx) != N_TPL:
        raise Fail("count changed")


@case("run_stdin_is_directory")
def _(ctx):
    a = [AGENTUI] + runargs(ctx, task="-")
    with open("/", "rb") if False else open(os.devnull, "rb") as _:
        pass
    fd = os.open(ctx.p("ws"), os.O_RDONLY | os.O_DIRECTORY)
    try:
        r = subprocess.run(a, stdin=fd, capture_output=True, env=ctx.env, timeout=45, cwd=ctx.p("ws"))
    finally:
        os.close(fd)
    # CPython itself refuses a directory as stdin before agentui's code runs ("Fatal Python error"):
    # only require no traceback and a non-zero exit
    no_tb(r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace"))
    if r.returncode == 0:
        raise Fail("exit 0")


@case("datadir_dev_null")
def _(ctx):
    bad(ctx.run(["memory", "stats", "--data-dir", "/dev/null"]), 2, ["/dev/null", "not a directory", "data dir"])


@case("datadir_symlink_to_file")
def _(ctx):
    f = datadir_file(ctx)
    os.symlink(f, ctx.p("link"))
    bad(ctx.run(["memory", "remember", "--data-dir", ctx.p("link"), "x"]), 2, ["not a directory", "file", "data dir"])
    if open(f).read() != "i am a file\n":
        raise Fail("target file modified")


@case("datadir_symlink_loop")
def _(ctx):
    os.symlink(ctx.p("loopb"), ctx.p("loopa"))
    os.symlink(ctx.p("loopa"), ctx.p("loopb"))
    bad(ctx.run(["memory", "stats", "--data-dir", ctx.p("loopa")]), 2, ["symbolic", "symlink", "loop", "data dir"])


@case("datadir_dangling_symlink_no_tb")
def _(ctx):
    os.symlink(ctx.p("nowhere", "x"), ctx.p("dang"))
    rc, out, err = ctx.run(["memory", "stats", "--data-dir", ctx.p("dang")])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("memory_leveldb_symlink_loop")
def _(ctx):
    os.makedirs(ctx.dd)
    os.symlink(os.path.join(ctx.dd, "memory.leveldb"), os.path.join(ctx.dd, "memory.leveldb"))
    bad(ctx.run(["memory", "stats", "--data-dir", ctx.dd]), 2, ["memory.leveldb", "symbolic", "loop"])


@case("datadir_path_too_long")
def _(ctx):
    d = ctx.p(*(["x" * 200] * 25))
    bad(ctx.run(["memory", "stats", "--data-dir", d]), 2, ["too long", "data dir"])


@case("datadir_component_too_long")
def _(ctx):
    bad(ctx.run(runargs(ctx)[:2] + [ctx.p("y" * 300)] + runargs(ctx)[3:]), 2, ["too long", "data dir"])


@case("env_data_dir_is_file")
def _(ctx):
    f = datadir_file(ctx)
    bad(ctx.run(["memory", "stats"], env={"AGENTUI_DATA_DIR": f}), 2, ["AGENTUI_DATA_DIR", "not a directory", "file"])


@case("config_data_dir_is_file")
def _(ctx):
    f = datadir_file(ctx)
    c = ctx.p("c.toml")
    open(c, "w").write(f'data_dir = "{f}"\n')
    bad(ctx.run(["memory", "stats", "--config", c]), 2, ["not a directory", "file", "data dir"])


@case("run_workspace_unreadable")
def _(ctx):
    w = ctx.p("privws")
    os.makedirs(w)
    os.chmod(w, 0o700)
    os.makedirs(ctx.p("home", "d"), exist_ok=True)
    os.chmod(ctx.p("home", "d"), 0o777)
    url = ctx.fake(command="true")
    a = ["run", "--data-dir", ctx.p("home", "d"), "--base-url", url, "--model", "m", "-w", w, "x"]
    bad(ctx.run(a, prefix=NOBODY), 2, ["workspace", "privws", "permission"])


@case("bench_keep_is_file")
def _(ctx):
    f = ctx.p("keepfile")
    open(f, "w").write("x")
    bad(ctx.run(["bench", "--data-dir", ctx.dd, "--base-url", DEAD, "--model", "m", "--keep", f, _suite(ctx)]), 2,
        ["keepfile"], one_line=False)


@case("memory_export_out_dev_full")
def _(ctx):
    store(ctx)
    rc, out, err = ctx.run(["memory", "export", "--data-dir", ctx.dd, "--out", "/dev/full"])
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc} writing to a full device: {err.strip()[:200]!r}")


@case("memory_stats_stdout_dev_full")
def _(ctx):
    store(ctx)
    with open("/dev/full", "wb") as full:
        r = subprocess.run([AGENTUI, "memory", "stats", "--json", "--data-dir", ctx.dd], stdout=full,
                           stderr=subprocess.PIPE, env=ctx.env, timeout=45)
    err = r.stderr.decode(errors="replace")
    no_tb(r.returncode, "", err)
    if r.returncode == 0:
        raise Fail("exit 0 although stdout could not be written")


@case("memory_export_broken_pipe")
def _(ctx):
    store(ctx)
    sh = f"{_q(AGENTUI)} memory export --data-dir {_q(ctx.dd)} | head -c 1 >/dev/null; exit ${{PIPESTATUS[0]}}"
    for i in range(1):
        pass
    # make the export large enough to overflow the pipe buffer
    os.environ.get("X")
    r = subprocess.run(["bash", "-c", f"for i in $(seq 1 40); do {_q(AGENTUI)} memory remember --data-dir {_q(ctx.dd)} "
                        f"\"rule $i $(head -c 3000 /dev/zero | tr '\\0' a)\" >/dev/null; done"], env=ctx.env, timeout=55)
    r = subprocess.run(["bash", "-c", sh], capture_output=True, env=ctx.env, timeout=30)
    err = r.stderr.decode(errors="replace")
    no_tb(r.returncode, "", err)


@case("run_timeout_1s_kills_slow_tool_exit1")
def _(ctx):
    marker = f"{4000 + random.randrange(10**6)}.75"
    url = ctx.fake(command=f"sleep {marker}")
    rc, out, err = ctx.run(runargs(ctx, "--json", "--timeout", "3", url=url, task="wait for a while"))
    no_tb(rc, out, err)
    time.sleep(1)
    left = live_procs(["sleep", marker])
    if left:
        for p in left:
            os.kill(p, signal.SIGKILL)
        raise Fail(f"tool child left after --timeout: {left}")
    if rc != 1:
        raise Fail(f"exit {rc}, README: 1 abandon or timeout")
    try:
        json.loads(out)
    except Exception:
        raise Fail(f"no JSON: {out[:200]!r}")


@case("repair_twice_same_second")
def _(ctx):
    sd = store(ctx)
    damage(sd, "no_current")
    ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
    ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
    b = glob.glob(os.path.join(ctx.dd, "memory.leveldb.backup-*"))
    if len(b) != 2:
        raise Fail(f"expected two distinct backups, found {len(b)}")
    if count(ctx) != N_TPL:
        raise Fail("count")


@case("repair_then_remember_then_count")
def _(ctx):
    sd = store(ctx, "logstore")
    damage(sd, "log_garbage")
    ok(ctx.run(["memory", "repair", "--data-dir", ctx.dd]))
    n = count(ctx)
    ok(ctx.run(["memory", "remember", "--data-dir", ctx.dd, "after repair"]))
    if count(ctx) != n + 1:
        raise Fail("store not usable after repair")
    if n != N_TPL + 3:
        raise Fail(f"garbage after the last log record: repair kept {n} of {N_TPL + 3}")


def _tree_sig(ctx, sig, expect):
    _git(ctx, init_tree=True)
    e = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    rc, out, err = ctx.run(["tree", "--repo", ctx.p("ws"), "start"], env=e)
    if rc != 0:
        raise Fail(f"setup tree start: {err!r}")
    marker = f"{5000 + random.randrange(10**6)}.125"
    url = ctx.fake(command=f"sleep {marker}")
    env = dict(ctx.env)
    env.update(e)
    pr = subprocess.Popen([AGENTUI, "tree", "--repo", ctx.p("ws"), "step", "--data-dir", ctx.dd, "--base-url", url,
                           "--model", "fake"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          start_new_session=True, cwd=ctx.p("ws"))
    ctx.procs.append(pr)
    t0 = time.time()
    while time.time() - t0 < 30 and not live_procs(["sleep", marker]):
        time.sleep(0.2)
    if not live_procs(["sleep", marker]):
        pr.kill()
        raise Fail(f"setup: tool never started: {pr.communicate()[1].decode()[-300:]!r}")
    pr.send_signal(sig)
    try:
        out, err = pr.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(pr.pid, signal.SIGKILL)
        raise Fail("tree step did not exit within 20 s")
    out, err = out.decode(errors="replace"), err.decode(errors="replace")
    no_tb(pr.returncode, out, err)
    time.sleep(1)
    left = live_procs(["sleep", marker])
    if left:
        for p in left:
            os.kill(p, signal.SIGKILL)
        raise Fail(f"tool child still running: {left}")
    if pr.returncode != expect:
        raise Fail(f"exit {pr.returncode}, expected {expect}: {err.strip()[-200:]!r}")
    subj = subprocess.run(["git", "-C", ctx.p("ws"), "log", "-1", "--format=%s"], capture_output=True, text=True).stdout
    if "runner error" not in subj:
        raise Fail(f"last commit is {subj.strip()!r}, README: the interrupted iteration is committed as a runner error")


def _tui_task_sig(ctx, sig, expect):
    marker = f"{6000 + random.randrange(10**6)}.5"
    url = ctx.fake(command=f"sleep {marker}")
    inner = "stty rows 30 cols 100; exec " + " ".join(_q(a) for a in [AGENTUI, "ui", "--data-dir", ctx.dd,
                                                                         "--base-url", url, "--model", "fake"])
    pr = subprocess.Popen(["script", "-qfec", inner, "/dev/null"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=ctx.env, start_new_session=True, cwd=ctx.p("ws"))
    ctx.procs.append(pr)
    chunks = []
    th = threading.Thread(target=lambda: chunks.append(pr.stdout.read()), daemon=True)
    th.start()
    time.sleep(8)
    for ch in "wait for a while":
        pr.stdin.write(ch.encode())
        pr.stdin.flush()
        time.sleep(0.03)
    pr.stdin.write(b"\r")
    pr.stdin.flush()
    t0 = time.time()
    while time.time() - t0 < 25 and not live_procs(["sleep", marker]):
        time.sleep(0.3)
    if not live_procs(["sleep", marker]):
        os.killpg(pr.pid, signal.SIGKILL)
        raise Fail("setup: the task's slow tool never started in the TUI")
    for p in _find_agentui(ctx.dd):
        os.kill(p, sig)
    try:
        pr.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(pr.pid, signal.SIGKILL)
        raise Fail("TUI did not exit within 20 s of the signal")
    th.join(5)
    out = b"".join(chunks).decode("utf-8", "replace")
    no_tb(pr.returncode, out, "")
    time.sleep(1)
    left = live_procs(["sleep", marker])
    if left:
        for p in left:
            os.kill(p, signal.SIGKILL)
        raise Fail(f"TUI left the task's tool running: {left}")
    if pr.returncode != expect:
        raise Fail(f"exit {pr.returncode}, expected {expect}")


case("signal_tui_task_running_sigterm_143")(lambda ctx: _tui_task_sig(ctx, signal.SIGTERM, 143))
case("signal_tui_task_running_sighup_129")(lambda ctx: _tui_task_sig(ctx, signal.SIGHUP, 129))
case("signal_tree_step_sigterm_143")(lambda ctx: _tree_sig(ctx, signal.SIGTERM, 143))
case("signal_tree_step_sighup_129")(lambda ctx: _tree_sig(ctx, signal.SIGHUP, 129))



# ---- K. bytes and odd strings in other arguments
def _bytes_run(ctx, argv):
    r = subprocess.run([AGENTUI.encode()] + [a if isinstance(a, bytes) else a.encode() for a in argv], env=ctx.env,
                       capture_output=True, timeout=45, cwd=ctx.p("ws"))
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


BYTES_CASES = {
    "remember_space_invalid_utf8": lambda c: ["memory", "remember", "--data-dir", c.dd, "--space", b"tool:\xff", "x"],
    "remember_entity_invalid_utf8": lambda c: ["memory", "remember", "--data-dir", c.dd, "--entity", b"e\xfe", "x"],
    "list_space_invalid_utf8": lambda c: ["memory", "list", "--data-dir", c.dd, "--space", b"\xff"],
    "show_id_invalid_utf8": lambda c: ["memory", "show", "--data-dir", c.dd, b"\xff\xfe"],
    "forget_id_invalid_utf8": lambda c: ["memory", "forget", "--yes", "--data-dir", c.dd, b"\xff"],
    "audit_task_invalid_utf8": lambda c: ["audit", "--data-dir", c.dd, "--task", b"\xff"],
    "mcp_add_name_invalid_utf8": lambda c: ["mcp", "add", "--config", c.p("c.toml"), b"s\xff", "echo"],
    "run_model_invalid_utf8": lambda c: ["run", "--data-dir", c.dd, "--base-url", c.fake(command="true"), "--model",
                                         b"m\xff", "-w", c.p("ws"), "count the files"],
    "doctor_model_invalid_utf8": lambda c: ["doctor", "--data-dir", c.dd, "--base-url", c.fake(command="true"),
                                            "--model", b"m\xff"],
    "run_base_url_invalid_utf8": lambda c: ["run", "--data-dir", c.dd, "--base-url", b"http://127.0.0.1:9/v\xff",
                                            "--model", "m", "x"],
}
for _k, _f in BYTES_CASES.items():
    def _mk(f=_f):
        def fn(ctx):
            store(ctx)
            open(ctx.p("c.toml"), "w").write("# c\n")
            rc, out, err = _bytes_run(ctx, f(ctx))
            no_tb(rc, out, err)
            if rc not in (0, 1, 2) or rc == 1:
                raise Fail(f"exit {rc}: {err.strip()[-300:]!r}")
            if rc == 2 and len([x for x in err.strip().splitlines() if x.strip()]) != 1:
                raise Fail(f"exit 2 but not one line: {err.strip()[:300]!r}")
            if count(ctx) not in (N_TPL, N_TPL + 1):
                raise Fail("count changed unexpectedly")
        return fn
    case(f"bytes_{_k}")(_mk())


@case("run_api_key_newline")
def _(ctx):
    url = ctx.fake(command="true")
    rc, out, err = ctx.run(runargs(ctx, "--api-key", "abc\r\nX-Evil: 1", url=url))
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}: {err.strip()[-300:]!r}")
    if len([x for x in err.strip().splitlines() if x.strip()]) != 1:
        raise Fail(f"not one line: {err.strip()[:300]!r}")


@case("run_api_key_non_ascii")
def _(ctx):
    url = ctx.fake(command="true")
    rc, out, err = ctx.run(runargs(ctx, "--api-key", "ключ-доступа", url=url))
    no_tb(rc, out, err)
    if rc not in (0, 1, 2):
        raise Fail(f"exit {rc}")
    if rc == 2 and len([x for x in err.strip().splitlines() if x.strip()]) != 1:
        raise Fail(f"not one line: {err.strip()[:300]!r}")


@case("doctor_api_key_non_ascii")
def _(ctx):
    url = ctx.fake(command="true")
    rc, out, err = ctx.run(["doctor", "--data-dir", ctx.dd, "--base-url", url, "--model", "m", "--api-key", "ключ"])
    no_tb(rc, out, err)
    if rc not in (0, 2):
        raise Fail(f"exit {rc}")


@case("run_env_api_key_newline")
def _(ctx):
    url = ctx.fake(command="true")
    rc, out, err = ctx.run(runargs(ctx, url=url), env={"AGENTUI_API_KEY": "a\nb"})
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}: {err.strip()[-200:]!r}")


@case("config_path_invalid_utf8_no_tb")
def _(ctx):
    p = os.fsencode(ctx.dir) + b"/c\xff.toml"
    open(p, "wb").write(b"[llm]\nmodel = 'm'\n")
    # not covered by the issue: a path that is not UTF-8 may work (0) or be refused in one line (2)
    res = _bytes_run(ctx, ["memory", "stats", "--config", p, "--data-dir", ctx.dd])
    if res[0] == 2:
        bad(res, 2, ["utf-8"])
    else:
        ok(res)


@case("tui_theme_path_invalid_utf8")
def _(ctx):
    t = ctx.p("th") + "\udcff.toml"
    rc, out, err = tui(ctx, ["ui", "--data-dir", ctx.dd, "--theme", os.fsencode(t).decode("latin-1")])
    no_tb(rc, out, err)
    if rc != 2:
        raise Fail(f"exit {rc}")



# ---------------------------------------------------------------- runner
def run_one(name, fn):
    ctx = Ctx(name)
    try:
        fn(ctx)
        return name, None
    except Fail as e:
        return name, str(e)
    except Exception as e:
        return name, f"harness error: {e!r} {traceback.format_exc(limit=2)[-300:]}"
    finally:
        ctx.close()


def main():
    build_templates()
    sel = [(n, f) for n, f in CASES if not FILTERS or any(x in n for x in FILTERS)]
    names = [n for n, _ in sel]
    assert len(names) == len(set(names)), "duplicate case names"
    passed = 0
    with cf.ThreadPoolExecutor(max_workers=2) as ex:
        futs = [ex.submit(run_one, n, f) for n, f in sel]
        for fu in cf.as_completed(futs):
            name, err = fu.result()
            if err is None:
                passed += 1
                print(f"PASS {name}", flush=True)
            else:
                print(f"FAIL {name}: {err}", flush=True)
    print(f"total: {passed}/{len(sel)}")
    shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
