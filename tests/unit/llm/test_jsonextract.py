import pytest

from agentui.llm.jsonextract import JSONExtractError, extract_json, strip_think


@pytest.mark.parametrize(
    ("text", "value", "repaired"),
    [
        ('{"a": 1}', {"a": 1}, False),
        ('  {"a": 1}\n', {"a": 1}, False),
        ('Here it is: {"a": 1} done.', {"a": 1}, True),
        ('```json\n{"a": 1}\n```', {"a": 1}, True),
        ('```\n{"a": [1, 2]}\n```\ntrailing', {"a": [1, 2]}, True),
        ('<think>maybe {"a": 0}?</think>{"a": 1}', {"a": 1}, True),
        ('<think>long reasoning\nwith {braces}</think>\n\n```json\n{"a": 2}\n```', {"a": 2}, True),
        ('reasoning without open tag</think>{"a": 3}', {"a": 3}, True),
        ('{"a": 1}{"a": 2}', {"a": 1}, True),
        ('{"a": 1}\n{"b": 2}', {"a": 1}, True),
        ('note [1]: {"a": "x}y"}', {"a": "x}y"}, True),
        ('{"a": "quote \\" and brace {"}', {"a": 'quote " and brace {'}, False),
        ('{"a": [1, 2,],}', {"a": [1, 2]}, True),
        ('{"msg": "中文 ✓ 🎉"}', {"msg": "中文 ✓ 🎉"}, False),
        ('prefix {not json} then {"b": true}', {"b": True}, True),
    ],
)
def test_extracts_first_balanced_object(text, value, repaired):
    ex = extract_json(text, want="object")
    assert ex.value == value
    assert ex.repaired is repaired


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("<think>only thinking</think>", "empty"),
        ("no json here at all", "no JSON object"),
        ('{"a": 1, "b": [1, 2', "cut off"),
        ("<think>unclosed reasoning {\"a\": 1", "cut off"),
        ("[1, 2, 3]", "no JSON object"),
    ],
)
def test_typed_errors(text, fragment):
    with pytest.raises(JSONExtractError) as e:
        extract_json(text, want="object")
    assert fragment in str(e.value)


def test_truncated_flag_and_arrays():
    with pytest.raises(JSONExtractError) as e:
        extract_json('{"a": {"b": 1}, "c": ', want="object")
    assert e.value.truncated
    assert extract_json("x [1, 2] y", want="array").value == [1, 2]
    assert extract_json("42").value == 42


def test_strip_think_variants():
    assert strip_think("<think>a</think>b") == "b"
    assert strip_think("<THINKING>a</THINKING>b") == "b"
    assert strip_think("a</think>b") == "b"
    assert strip_think('<think>x {"y": 1}').strip() == 'x {"y": 1}'
