"""Endpoint failures are not task failures (#12): `agentui run` as a user runs it, against the fake
server failing in each way mid-task — exit 2, one message naming endpoint, model, what the server
said and the fix; no replan, no Megram, no audit thrashing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from tests.fakellm import Reply
from tests.functional.pipeline import perceive


def _run(args, env, timeout=60):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "run", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _config(tmp_path, **llm):
    base = {"max_retries": 1, "backoff_base_s": 0.01, "backoff_max_s": 0.02, "read_timeout_s": 1.0,
            "connect_timeout_s": 1.0, **llm}
    cfg = tmp_path / "c.toml"
    cfg.write_text("[llm]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in base.items()))
    return cfg


def _recorded_types(data, tid):
    rec = data / "recordings" / f"{tid}.bus.jsonl"
    return [json.loads(line)["type"] for line in rec.read_text().splitlines()] if rec.is_file() else []


def _audit_kinds(data):
    out = []
    for f in (data / "audit").glob("*.jsonl") if (data / "audit").is_dir() else []:
        out += [json.loads(line).get("kind") for line in f.read_text().splitlines() if line.strip()]
    return out


FAULTS = {
    "refused_or_reset": ("drop", "fix: start the server"),
    "timeout_after_retries": ("hang", "no answer"),
    "unauthorized": ("http401", "AGENTUI_API_KEY"),
    "model_not_found": ("model_not_found", "ollama pull"),
    "server_error_after_retries": ("http500", "HTTP 500"),
    "not_openai": ("not_openai", "OpenAI-compatible"),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_endpoint_failure_mid_task_is_its_own_outcome(fakellm, tmp_path, name):
    fault, expect = FAULTS[name]
    fakellm.script("perceiver", [perceive("count files")])
    fakellm.responder("planner", lambda _r: Reply.fault(fault, delay_s=5.0) if fault == "hang"
                      else Reply.fault(fault))
    data = tmp_path / "d"
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url, "AGENTUI_MODEL": "qwen2.5-coder:1.5b"}
    r = _run(["--json", "--yes", "--config", str(_config(tmp_path)), "--workspace", str(tmp_path),
              "--data-dir", str(data), "count the files here"], env)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    msg = lines[0]
    assert fakellm.base_url in msg and "qwen2.5-coder:1.5b" in msg and expect in msg, msg
    doc = json.loads(r.stdout)
    assert doc["final"] is None and doc["infra_failure"]["endpoint"] == fakellm.base_url
    if fault == "model_not_found":
        assert "not found, try pulling it first" in doc["infra_failure"]["said"]
        assert "fake-model" in doc["infra_failure"]["fix"]  # the models the server does have
    types = _recorded_types(data, doc["task_id"])
    assert "TaskSpec" in types  # it did get as far as the planner
    assert not {"PlanDirective", "Megram", "FinalResult", "DispatchManifest"} & set(types), types
    assert "ggs_thrashing" not in _audit_kinds(data)
    # one logical planner call (its retries included): no replan, no re-plan attempt
    assert len(fakellm.calls("planner")) == (2 if fault in ("drop", "hang", "http500") else 1)


def test_preflight_is_a_real_completion_on_the_configured_model(fakellm, tmp_path):
    """/v1/models answers but the model was never pulled: the preflight's tiny completion catches
    it before the task starts (exit 2, `ollama pull`), not as a planning failure."""
    fakellm.responder("runtime", lambda _r: Reply.fault("model_not_found"))
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url, "AGENTUI_MODEL": "qwen2.5-coder:1.5b"}
    r = _run(["--json", "--config", str(_config(tmp_path)), "--workspace", str(tmp_path),
              "--data-dir", str(tmp_path / "d"), "count the files here"], env)
    assert r.returncode == 2, r.stderr
    assert "ollama pull qwen2.5-coder:1.5b" in r.stderr and "fake-model" in r.stderr, r.stderr
    assert not fakellm.calls("perceiver")


def test_refused_endpoint_fails_preflight_with_the_fix(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "AGENTUI_BASE_URL": f"http://127.0.0.1:{port}/v1", "AGENTUI_MODEL": "m"}
    r = _run(["--json", "--config", str(_config(tmp_path)), "--workspace", str(tmp_path),
              "--data-dir", str(tmp_path / "d"), "x"], env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"127.0.0.1:{port}" in r.stderr and "fix:" in r.stderr, r.stderr
    # --json: the same document as an endpoint failure inside the task (stdout was empty, #12/#15)
    doc = json.loads(r.stdout)
    assert doc["final"] is None and doc["task_id"] is None
    assert f"127.0.0.1:{port}" in doc["infra_failure"]["endpoint"] and doc["infra_failure"]["fix"]
    assert doc["infra_failure"]["role"] == "preflight"


@pytest.mark.parametrize("fault", ["http500", "drop"])
def test_preflight_retries_one_transient_failure(fakellm, tmp_path, fault):
    """One 500 or one dropped connection, then a working server: the preflight asks again (as every
    call does) instead of exiting 2 at once — found by an outside tester (#12)."""
    fakellm.script("runtime", [Reply.fault(fault)])
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "doctor", "--json", "--data-dir", str(tmp_path / "d"),
                        "--base-url", fakellm.base_url], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert len(fakellm.calls("runtime")) == 2


@pytest.mark.parametrize("fault", ["length", "runaway"])
async def test_unparseable_plan_is_a_model_output_failure_not_break_symmetry(fakellm, tmp_path, fault):
    """A planner reply cut off (at max_tokens, or as a runaway) is the model's output failing:
    one re-ask under the same directive with a tighter budget and a shorter prompt, counted as
    parse failures; then the task ends without a replan order built on it (no break_symmetry,
    no change_approach) and without a Megram."""
    from tests.functional.pipeline import run_task

    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("x")])
    fakellm.responder("planner", lambda _r: Reply.fault("length", {"task_criteria": ["a" * 200]})
                      if fault == "length" else Reply.stream('{"task_criteria": [', tail="loop"))
    r = await run_task(fakellm, tmp_path, "x", ggs={"max_replans": 2, "time_budget_ms": 10**9},
                       pipeline={"plan_reasks": 2})
    assert r.final.directive.value == "abandon" and "could not be used" in r.final.summary
    assert not r.of("PlanDirective") and not r.of("Megram")
    assert r.stats["parse_failures"] == 2 and r.stats["by_role"]["planner"]["parse_failures"] == 2
    assert r.stats["runaways_cut"] == (2 if fault == "runaway" else 0)
    calls = fakellm.calls("planner")
    assert len(calls) == 2 and calls[1]["max_tokens"] < calls[0]["max_tokens"]  # tighter
    assert "Example" in calls[0]["messages"][0]["content"]
    assert "Example" not in calls[1]["messages"][0]["content"]  # shorter
    assert len(json.dumps(calls[1]["messages"])) < len(json.dumps(calls[0]["messages"]))


@pytest.mark.parametrize("fault", ["length", "runaway"])
async def test_unusable_executor_replies_are_a_model_output_failure_not_an_approach(fakellm, tmp_path, fault):
    """Found by an outside tester: an executor whose replies ran away was judged like a wrong
    approach — 3 replans (change_path), a Megram, advice "Fix the environment problem first:
    executor LLM unavailable". Now it is the model's output failing, as for the planner (#12)."""
    from tests.functional.pipeline import plan, run_task, sub

    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("count the files")])
    fakellm.responder("planner", lambda _r: plan(["the count is given"],
                                                 sub("count the files", "the count is given", tools=["shell"])))
    fakellm.responder("executor", lambda _r: Reply.fault("length", {"tool": "shell", "args": {"command": "ls " * 300}})
                      if fault == "length" else Reply.stream('{"tool": "shell", "args": {"command": "', tail="loop"))
    r = await run_task(fakellm, tmp_path, "count the files", ggs={"max_replans": 3, "time_budget_ms": 10**9})
    assert r.final.directive.value == "abandon" and "could not be used" in r.final.summary, r.final.summary
    assert not r.of("Megram")
    assert all(d.failed_criterion == "a parseable reply" for d in r.of("PlanDirective"))  # same directive re-sent
    assert len(r.of("PlanDirective")) <= 1  # ggs.model_output_retries (default 1), not max_replans
    assert "environment problem" not in " ".join(r.final.next_moves)
    assert r.stats["by_role"]["executor"]["parse_failures"] >= 2


@pytest.mark.parametrize("fault", ["stop", "length"])
async def test_model_output_rounds_are_scored_and_advice_matches_the_cut(fakellm, tmp_path, fault):
    """A model-output round moves GGS's state on like any round (prev directive, L_prev → ∇L), so
    the GGS line never shows `init→… ⊥ ∇L=+0.00` on round 2; the advice names a budget raise only
    when a reply was cut by finish_reason=length — not after `stop` with unparseable text (#12)."""
    from tests.functional.pipeline import run_task

    fakellm.script("perceiver", [perceive("x")])
    fakellm.responder("planner", lambda _r: Reply.fault("length", {"task_criteria": ["a" * 200]})
                      if fault == "length" else Reply.text("I think the plan is to count the files."))
    r = await run_task(fakellm, tmp_path, "x", ggs={"max_replans": 3, "time_budget_ms": 10**9,
                                                     "model_output_retries": 1})
    [d] = r.of("PlanDirective")
    f = r.final
    assert d.prev_directive.value == "init" and d.directive.value == "refine"
    assert f.directive.value == "abandon" and f.prev_directive.value == "refine", f
    assert f.grad_l > 0 and f.grad_l == pytest.approx(f.loss.L - d.loss.L, abs=1e-5)  # Ω grew, nothing else
    budget = [m for m in f.next_moves if "[llm.budgets]" in m]
    if fault == "length":
        assert budget and "token budget" in f.summary, f
    else:
        assert not budget and "not valid JSON" in f.summary, f



@pytest.mark.parametrize("waits", [True, False])
def test_preflight_waits_for_a_busy_endpoint_instead_of_losing_the_task(tmp_path, waits):
    """A task killed at the bench's timeout leaves the server generating its abandoned reply; the
    next task's preflight then gets no tiny completion within its 10 s window. A server that lists
    its models but is busy is slow, not down: `run` waits for it (stderr says so) within the task's
    --timeout; past that bound it is one clear line saying "slow" and exit 2."""
    from tests.fakellm import FakeLLM

    with FakeLLM(single_slot=True) as fake:
        fake.script("perceiver", [perceive("count files")])
        fake.slot.acquire()  # an earlier, killed process's generation holds the server's only slot
        held = True
        env = {**os.environ, "AGENTUI_BASE_URL": fake.base_url, "AGENTUI_MODEL": fake.model}
        cfg = _config(tmp_path, idle_wait_s=60.0 if waits else 3.0, read_timeout_s=30.0)
        limit = [] if waits else ["--timeout", "3"]
        proc = subprocess.Popen([sys.executable, "-m", "agentui.cli", "run", "--json", "--config", str(cfg), *limit,
                                 "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "d"),
                                 "count the files here"], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            err = []
            for line in proc.stderr:
                err.append(line)
                if "waiting for the model" in line and waits:
                    time.sleep(1.0)
                    fake.slot.release()  # the abandoned generation ends
                    held = False
                    break
            out, rest = proc.communicate(timeout=120)
            stderr = "".join(err) + rest
        finally:
            if held:
                fake.slot.release()
            if proc.poll() is None:
                proc.kill()
        assert "Traceback" not in stderr
        assert "waiting for the model" in stderr and "slow, not down" in stderr, stderr
        if waits:
            assert fake.calls("perceiver"), (proc.returncode, stderr)  # the task ran
            assert "no tiny completion" not in stderr and "unreachable" not in stderr, stderr
        else:
            assert proc.returncode == 2 and not fake.calls("perceiver"), (proc.returncode, stderr)
            assert "slow: no tiny completion within 13 s" in stderr, stderr
