"""Issue #13 item 4: code grounding of validator verdicts, and R4a's verdict matching (item 13)."""

from __future__ import annotations

from agentui.contracts import ToolCallRecord
from agentui.roles import grounding as G
from agentui.roles.agent_validator import CriterionJudgement, match_verdicts, unresolved_denial


def rec(evidence: str = "", *, tool: str = "shell", target: str = "ls", ok: bool = True, error: str | None = None,
        exit_code: int | None = 0) -> ToolCallRecord:
    return ToolCallRecord(tool=tool, target=target, ok=ok, evidence=evidence, error=error, exit_code=exit_code)


def test_quote_must_be_in_what_the_tools_returned():
    calls = [rec("a.csv\nb.csv\nc.csv\nd.csv", tool="glob", target="*.csv")]
    assert G.grounded("b.csv", "4", calls) is True
    assert G.grounded('The glob printed "c.csv\nd.csv"', "ok", calls) is True  # a quoted fragment
    assert G.grounded("The result was already provided.", "The result was already provided.", calls) is False
    assert G.grounded("anything", "anything", []) is False  # no tool ran: nothing can ground a pass


def test_normalised_match_ignores_case_spacing_and_outer_punctuation():
    calls = [rec("Total:   42 ITEMS\n")]
    assert G.grounded("'total: 42 items.'", "42", calls) is True


def test_values_of_the_output_ground_a_paraphrase():
    calls = [rec("3\n", target="wc -l < notes.txt")]
    assert G.grounded("the tool shows three lines", "notes.txt has 3 lines", calls) is True  # the call named it
    assert G.grounded("the tool shows three lines", "notes.txt has 4 lines", calls) is False
    assert G.grounded("the tool shows three lines", "todo.txt has 3 lines", calls) is False


def test_a_number_nobody_printed_is_not_grounded():
    calls = [rec("0\n", target="ls *.txt | wc -l")]
    # quoting the command proves it ran, not that it said 2
    assert G.grounded("ls *.txt | wc -l", "2", calls, wants_number=True) is False
    assert G.grounded("ls *.txt | wc -l", "0", calls, wants_number=True) is True


def test_a_count_read_off_a_listing_printed_in_full_is_grounded():
    # an outside tester (#13): `ls d` listed 4 names, the answer "d has 4 entries" was never accepted
    calls = [rec("alpha.txt\nbeta.txt\ngamma.txt\ndelta\n", target="ls d")]
    assert G.number_found("d has 4 entries", calls) is True
    assert G.grounded("alpha.txt", "d has 4 entries", calls, wants_number=True) is True
    assert G.number_found("d has 5 entries", calls) is False
    cut = [rec("a\nb\n… [900 chars omitted] …\nz\n", target="ls big")]  # a capped listing cannot be counted
    assert G.number_found("big has 4 entries", cut) is False
    assert G.number_found("4", [rec("a\nb\nc\nd\n", ok=False, error="exit code 2", exit_code=2)]) is False
    dots = [rec(".\n..\na\nb\nc\nd\n", target="ls -1a d")]  # . and .. are no entries
    assert G.number_found("d has 4 entries", dots) is True and G.number_found("6", dots) is False


def test_numbers_read_thousands_and_number_words_in_answers():
    assert G.numbers("1,200 lines") == ["1200"] and G.numbers("3,5 kg") == ["3.5"]
    assert G.numbers("three lines") == [] and G.numbers("three lines", words=True) == ["3"]
    assert G.number_found("1,200 lines", [rec("1200 big.txt\n", target="wc -l big.txt")]) is True
    assert G.missing_value("the number of lines is reported", "three lines") is None


def test_an_effect_is_grounded_by_its_successful_call():
    calls = [rec("", target="rm junk.txt")]
    assert G.grounded("rm junk.txt", "junk.txt removed", calls) is True
    failed = [rec("", target="rm junk.txt", ok=False, error="exit code 1", exit_code=1)]
    assert G.grounded("rm junk.txt", "junk.txt removed", failed) is False


def test_asking_for_a_value():
    assert G.asks_for("a single integer value is reported") == "number"
    assert G.asks_for("How many csv files are there?") == "number"
    assert G.asks_for("the path of the config file is given") == "path"
    assert G.asks_for("the largest file is named") == "name"
    assert G.asks_for("hello.txt contains hello") is None
    assert G.missing_value("a single integer value", "The result was already provided.") is not None
    assert G.missing_value("a single integer value", "There are 4 files") is None
    assert G.missing_value("the path of the log", "it is in the usual place") is not None
    assert G.missing_value("the path of the log", "logs/app.log") is None
    hay = G.tool_text([rec("big.bin\nsmall.txt")])
    assert G.missing_value("the largest file is named", "The largest file is", hay) is not None
    assert G.missing_value("the largest file is named", "big.bin", hay) is None


def test_verdicts_match_by_criterion_text_then_order():
    crits = ["a number is reported", "the file is named"]
    v1 = CriterionJudgement(criterion="The file is named.", verdict="fail", failure_class="logical")
    v2 = CriterionJudgement(criterion="a number is reported", verdict="pass", evidence="3")
    assert match_verdicts(crits, [v1, v2]) == [v2, v1]  # reordered by the model: matched by text
    bare = [CriterionJudgement(verdict="pass"), CriterionJudgement(verdict="fail", failure_class="logical")]
    assert match_verdicts(crits, bare) == bare  # no texts: by order
    assert match_verdicts(crits, [v1]) == [None, v1]  # the missing one is None (a fail by default)


def test_unresolved_denial():
    denied = rec(target="rm junk.txt", ok=False, error="denied by user: deletes a file", exit_code=None)
    assert unresolved_denial([denied]) is denied
    assert unresolved_denial([denied, rec(target="rm junk.txt")]) is None  # later approved and done
    assert unresolved_denial([denied, rec(target="ls")]) is denied


def test_arithmetic_on_printed_numbers_is_grounded():
    from agentui.contracts import ToolCallRecord
    from agentui.roles import grounding as G

    calls = [ToolCallRecord(tool="shell", args={"command": "wc -l a.txt"}, ok=True, evidence="3 a.txt\n"),
             ToolCallRecord(tool="shell", args={"command": "wc -w a.txt"}, ok=True, evidence="31 a.txt\n")]
    assert G.number_found("3 + 31 = 34", calls)  # a sum worked out in the head
    assert G.number_found("93", calls) and G.number_found("9", calls)  # a product, a square
    assert not G.number_found("35", calls)  # nothing the tools printed makes 35
