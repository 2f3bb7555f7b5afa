"""The kind of work code reads from an intent or a request (memory's key)."""

from __future__ import annotations

import pytest

from agentui.memory.workkind import (
    intent_space,
    normalise_intent,
    read_work,
    request_space,
    task_spaces,
)


@pytest.mark.parametrize(("one", "other"), [
    ("How many markdown files are under docs?", "Count the .md files in the docs folder"),
    ("determine the number of subfolders in src", "tally the directories recursively"),
    ("What is the total size of the logs?", "how much disk space do the log files use"),
    ("Which file contains TODO?", "find the files containing the word FIXME"),
    ("How many lines does app.log have?", "Find how many lines the file app.log contains."),
])
def test_the_same_work_in_other_words_is_one_space(one, other):
    assert request_space(one) == request_space(other) is not None
    assert intent_space(normalise_intent("", one)) == intent_space(normalise_intent("", other))


@pytest.mark.parametrize(("one", "other"), [
    ("As a student, you are required to calculate the total size of all files with a specific extension",
     "As a student, you are given a task to determine the number of directories in 'problem_directory'"),
    ("Please count the lines in notes.txt", "Please count the files in notes"),
    ("Sort names.txt alphabetically", "Delete names.txt"),
    ("Find the python files in src", "Find the files in src containing TODO"),
    ("Count the lines of app.log", "Count the lines of app.log that contain ERROR"),
])
def test_the_same_opening_words_for_other_work_are_other_spaces(one, other):
    assert request_space(one) != request_space(other)
    assert intent_space(normalise_intent(one, one)) != intent_space(normalise_intent(other, other))


def test_the_intent_is_verb_object_qualifier_without_names_or_paths():
    ask = "As a student, you are given a task to determine the number of directories (including " \
          "subdirectories) in 'problem_directory'."
    assert normalise_intent("", ask) == "count directories in a directory tree"
    assert normalise_intent("count distinct file extensions", ask) == "count distinct extensions"
    assert normalise_intent("", "What is the sum of the second column of data.csv?") == "sum columns in a csv file"
    assert len(normalise_intent("", "x " * 400)) <= 80


def test_the_model_phrase_is_read_first_then_the_request():
    assert normalise_intent("list the folders", "How many folders are there?") == "list directories"
    # a phrase the lexicon cannot read: the request decides
    assert normalise_intent("do the thing", "How many folders are there?") == "count directories"
    # the request's opening copied and cut at the bound: the request itself is read
    ask = "As a student, you are given a task to determine the number of directories (including subdirectories)"
    assert normalise_intent(ask[:80], ask) == "count directories in a directory tree"
    # neither reads: the model's first content words
    assert normalise_intent("frobnicate the widget", "frobnicate it") == "frobnicate widget"


def test_task_spaces_are_one_when_model_and_code_agree_and_two_when_they_differ():
    assert task_spaces("count files", "how many txt files?") == ["intent:count_files"]
    assert task_spaces("list directories", "How many folders?") == ["intent:list_directories",
                                                                     "intent:count_directories"]
    assert task_spaces("修复登录页面的错误", "修复登录页面的错误") == ["intent:修复登录页面的错误"]


def test_a_named_data_format_is_kept_out_of_the_key():
    csv, txt = read_work("count the rows of data.csv"), read_work("count the rows of data.txt")
    assert csv is not None and txt is not None
    assert csv.formats == ("csv",) and txt.formats == ()
    assert csv.key == txt.key == "count_rows"


@pytest.mark.parametrize("request_text", [
    "As a student, you are given a task to determine the number of directories (including subdirectories)",
    "Which file contains TODO?", "Create person.json containing a JSON object", "Read settings.ini",
    "Which file in this folder is the largest?", "Count distinct file extensions", "Sum the 2nd column of a.csv",
])
def test_the_intent_phrase_reads_back_to_the_space_of_its_request(request_text):
    """R1's phrase is what GGS and R2 key on: read again, it names the same space as its request."""
    assert intent_space(normalise_intent("", request_text)) == request_space(request_text)
