"""Issue #13: the truth defects the real-model bench (Qwen2.5-Coder-1.5B over llama-cpp-python's
`llama_cpp.server`, default config) still showed — each replayed over the fake LLM with the model's
replies scripted as the bench saw them, real tools in a real workspace."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub, verdicts

ONE_REPLAN = {"ggs": {"max_replans": 1, "time_budget_ms": 10**9}}
MAKE_TREE = "Create the directories src/app and tests, and an empty file src/app/__init__.py."
MKDIR = "mkdir -p src/app tests && touch src/app/__init__.py"
# what the 1.5B model wrote for R4b under llama.cpp's generic JSON grammar: no `verdicts`
NO_VERDICTS = {"merged_output": "created src/app, tests and src/app/__init__.py",
               "summary": "created the directories and the file"}


def _make_tree(fake: FakeLLM) -> None:
    fake.script("perceiver", [perceive(MAKE_TREE)])
    fake.responder("planner", lambda _r: plan(
        ["src/app, tests and src/app/__init__.py exist"],
        sub(f"Create the directories and the file with: {MKDIR}", "the directories and the file exist",
            tools=["shell"])))
    fake.responder("executor", lambda r: call("shell", command=MKDIR) if len(r["messages"]) == 2
                   else finish("created src/app, tests and src/app/__init__.py"))
    fake.responder("agent_validator", lambda _r: verdicts("pass", quote="mkdir -p src/app tests"))


async def test_meta_validator_schema_is_enforced_by_llama_cpp_grammar(tmp_path):
    """make-tree: R4b's replies lacked `verdicts` (6 parse failures, 2 replans, abandon) because its
    schema had a typeless node (`merged_output: Any` → `{"default": ""}`) that llama.cpp's schema
    converter refuses, so llama-cpp-python fell back to generic JSON. Under the enforced grammar
    the model cannot leave `verdicts` out: the responder answers as the grammar allows."""
    with FakeLLM(llama_cpp=True) as fake:
        _make_tree(fake)
        fake.responder("meta_validator", lambda r: merge("created src/app, tests and src/app/__init__.py", "pass")
                       if r.get("_grammar") == "schema" else Reply.json(NO_VERDICTS))
        r = await run_task(fake, tmp_path, MAKE_TREE, **ONE_REPLAN)
        grammars = [c.get("_grammar") for c in fake.calls("meta_validator") if "_grammar" in c]
    assert grammars and set(grammars) == {"schema"}, grammars
    assert r.final.directive.value == "accept"
    assert len(fake.calls("planner")) == 1 and r.stats.get("parse_failures", 0) == 0
    ws = tmp_path / "ws"
    assert (ws / "src/app").is_dir() and (ws / "tests").is_dir() and (ws / "src/app/__init__.py").is_file()


async def test_unusable_meta_validator_reply_ends_unverified_without_replanning(fakellm, tmp_path):
    """When R4b's reply is still unusable after the re-ask (a server that enforces no schema), the
    task neither claims success nor replans the checked work away (was: replan, redo, Law 2
    abandon after 28 calls): it ends at once, unverified, with the checked results handed over."""
    _make_tree(fakellm)
    fakellm.responder("meta_validator", lambda _r: Reply.json(NO_VERDICTS))
    r = await run_task(fakellm, tmp_path, MAKE_TREE)
    assert r.final.directive.value == "abandon"  # never success/accept: nothing verified the task
    assert len(fakellm.calls("planner")) == 1 and not r.of("PlanDirective")  # no replan
    assert len(fakellm.calls("meta_validator")) == 2  # the ask and its one re-ask
    assert r.final.summary.startswith("Not verified")
    assert r.final.partial_result and "created src/app" in str(r.final.partial_result)
    assert not [m for m in r.envelopes if m.type == "Megram"]  # a model-output failure teaches nothing
    assert (tmp_path / "ws/src/app/__init__.py").is_file()  # the work was done once, and kept
