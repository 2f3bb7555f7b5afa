#!/usr/bin/env python3
"""Verify benchmarks/heldout-suite.json against benchmarks/heldout-suite.reference.json.

For every task:
  * the init script runs cleanly in a fresh temp dir and is deterministic
    (two runs produce byte-identical workspaces);
  * question tasks ({"expected": ..., "match": ...}): the reference command
    prints exactly the expected value, and the same output would be accepted
    by the suite's matching rule (last integer / case-insensitive containment);
    for traps and twists, a naive command gives a DIFFERENT answer;
  * bash-check tasks: the check FAILS on the untouched workspace, PASSES after
    the reference solution, and FAILS after each plausible wrong solution.
Stdlib only.  Usage: python3 benchmarks/verify_heldout_suite.py
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "heldout-suite.json")
REFERENCE = os.path.join(HERE, "heldout-suite.reference.json")

# Naive commands that a careless solver might run; each must NOT give the expected answer.
NAIVE = {
    "h-biggest-file": "wc -l data/* | grep -v total | sort -nr | head -n 1 | awk '{print $2}' "
                      "| sed 's|data/||; s|\\.txt||'",
    "h-inventory-sprocket": "grep -q sprocket inventory.txt && echo yes || echo no",
    "h-users-mallory": "grep -q mal users.txt && echo yes || echo no",
    "h-docs-md-count": "find docs -name '*.md' | wc -l",
    "h-lines-squared": "wc -l < list.txt",
    "h-orders-rows-no-header": "wc -l < orders.csv",
    "h-sales-north-sum": "awk -F, 'NR>1{s+=$3} END{print s}' sales.csv",
    "h-todo-case-insensitive": "grep -c todo notes.txt",
    "h-oldest-reversed": "awk -F, 'NR>1 && $2+0 > m {m=$2+0; n=$1} END{print n}' people.csv",
    "h-txt-recursive": "ls archive/*.txt | wc -l",
    "h-script-nonblank": "wc -l < build.sh",
    "h-two-files-words": "wc -w < intro.txt",
    "h-distinct-colors-ci": "sort -u colors.txt | wc -l",
    "h-second-highest": "sort -n results.txt | tail -n 1",
    "h-vowel-words": "wc -l < words.txt",
    "h-lines-plus-files": "wc -l < todo.txt",
    "h-trap-hidden-files": "ls settings | wc -l",
    "h-trap-spaces-lines": "for f in $(ls notes/*.txt); do cat \"$f\" 2>/dev/null; done | wc -l",
    "h-trap-no-final-newline": "wc -l < items.txt",
    "h-trap-dup-users": "cut -d' ' -f1 access.log | uniq | wc -l",
    "h-trap-mixed-case-tag": "sort tags.txt | uniq -c | sort -rn | head -n 1 | awk '{print $2}'",
    "h-trap-spaces-most-lines": "for f in $(ls reports); do echo \"$(wc -l < reports/$f 2>/dev/null) $f\"; done "
                                "2>/dev/null | sort -nr | head -n 1 | awk '{print $2}'",
}

# Plausible wrong solutions for bash-check tasks; after each, the check must FAIL.
WRONG = {
    "h-create-greeting": ["echo 'Hello world' > greeting.txt",
                          "printf 'Hello, world!\\nHello, world!\\n' > greeting.txt",
                          "printf 'Hello, world!\\n' > greeting.txt; rm readme.txt"],
    "h-append-milk": ["echo milk > shopping.txt",
                      "sed -i '1i milk' shopping.txt"],
    "h-sort-names-new-file": ["sort -o names.txt names.txt; cp names.txt sorted_names.txt",
                              "sort -r names.txt > sorted_names.txt"],
    "h-csv-to-tsv": ["tr ',' ' ' < data.csv > data.tsv",
                     "mv data.csv data.tsv",
                     "tail -n +2 data.csv | tr ',' '\\t' > data.tsv"],
    "h-rename-jpeg-to-jpg": ["for f in pics/*.jpeg; do cp \"$f\" \"${f%.jpeg}.jpg\"; done",
                             "mv pics/cat.jpeg pics/cat.jpg",
                             "for f in pics/*; do mv \"$f\" \"${f%.*}.jpg\"; done"],
    "h-mkdir-move-logs": ["mkdir old_logs && cp *.log old_logs/",
                          "mkdir old_logs && mv *.log keep.txt old_logs/"],
    "h-extract-email-column": ["cut -d, -f2 contacts.csv > emails.txt",
                               "tail -n +2 contacts.csv | cut -d, -f1 > emails.txt"],
    "h-replace-localhost": ["sed -i 's/localhost/127.0.0.1/' app.conf",
                            "sed -i 's/localhost/127.0.0.1/g' *.conf"],
    "h-dedupe-guests": ["sort -u -o guests.txt guests.txt",
                        "uniq guests.txt > g.tmp && mv g.tmp guests.txt",
                        "awk '!seen[$0]++' guests.txt > guests_unique.txt"],
    "h-delete-blank-lines": ["sed -i '0,/^$/{/^$/d}' draft.txt",
                             "grep -v '^$' draft.txt > draft_clean.txt"],
    "h-uppercase-copy": ["cp motto.txt motto_upper.txt",
                         "tr 'a-z' 'A-Z' < motto.txt > m.tmp && mv m.tmp motto.txt && cp motto.txt motto_upper.txt"],
}

ID_RE = re.compile(r"^h-[a-z0-9]+(-[a-z0-9]+)*$")


def sh(script, cwd, answer=""):
    env = dict(os.environ, AGENTUI_ANSWER=answer, LC_ALL="C.UTF-8")
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def tree_digest(root):
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        h.update(("D " + rel + "\n").encode())
        for name in sorted(filenames):
            with open(os.path.join(dirpath, name), "rb") as fh:
                h.update(("F " + os.path.join(rel, name) + "\n").encode() + fh.read())
    return h.hexdigest()


def fresh(task):
    d = tempfile.mkdtemp(prefix="heldout-")
    r = sh(task["init"], d)
    assert r.returncode == 0, f"init failed: {r.stderr}"
    return d


def last_integer(text):
    m = re.findall(r"-?\d+", text)
    return int(m[-1]) if m else None


def accepted(check, answer):
    if check["match"] == "integer":
        return last_integer(answer) == check["expected"]
    return check["expected"].lower() in answer.lower()


def verify(task, ref):
    tid, check = task["id"], task["check"]
    d1, d2 = fresh(task), fresh(task)
    assert tree_digest(d1) == tree_digest(d2), "init is not deterministic"
    if isinstance(check, dict):
        assert set(check) == {"expected", "match"}, f"bad check keys {set(check)}"
        assert check["match"] in ("integer", "string")
        if check["match"] == "integer":
            assert isinstance(check["expected"], int)
        r = sh(ref, d1)
        out = r.stdout.strip()
        assert r.returncode == 0, f"reference failed: {r.stderr}"
        if check["match"] == "integer":
            assert out == str(check["expected"]), f"reference gave {out!r}, expected {check['expected']!r}"
        else:
            assert out.lower() == check["expected"].lower(), f"reference gave {out!r}, expected {check['expected']!r}"
        assert accepted(check, out), "reference output not accepted by the match rule"
        if tid in NAIVE:
            naive = sh(NAIVE[tid], d2).stdout.strip()
            assert not accepted(check, naive), f"naive command also gives the answer ({naive!r})"
            return f"expected={check['expected']!r} ref ok; naive gives {naive!r}"
        return f"expected={check['expected']!r} ref ok"
    assert isinstance(check, str)
    assert sh(check, d2).returncode != 0, "check passes on the untouched workspace"
    r = sh(ref, d1)
    assert r.returncode == 0, f"reference solution failed: {r.stderr}"
    assert sh(check, d1, answer="Done.").returncode == 0, "check fails after the reference solution"
    wrongs = WRONG.get(tid, [])
    assert wrongs, "no wrong solutions listed"
    for w in wrongs:
        d = fresh(task)
        sh(w, d)
        assert sh(check, d, answer="Done.").returncode != 0, f"check passes after wrong solution {w!r}"
    return f"check: untouched FAIL, reference PASS, {len(wrongs)} wrong solution(s) FAIL"


def main():
    tasks = json.load(open(SUITE))
    refs = json.load(open(REFERENCE))
    assert isinstance(tasks, list) and len(tasks) >= 45, "need a list of at least 45 tasks"
    ids = [t.get("id") for t in tasks]
    assert len(set(ids)) == len(ids), "duplicate ids"
    assert set(refs) == set(ids), f"reference ids differ: {set(refs) ^ set(ids)}"
    assert set(NAIVE) <= set(ids) and set(WRONG) <= set(ids)
    failures = 0
    for t in tasks:
        try:
            assert set(t) == {"id", "description", "init", "check"}, f"bad keys {set(t)}"
            assert ID_RE.match(t["id"]), "id is not kebab-case with h- prefix"
            assert t["description"].strip()
            if isinstance(t["check"], dict) and t["check"].get("match") == "string" \
                    and t["check"]["expected"] not in ("yes", "no"):
                assert t["check"]["expected"].lower() not in t["description"].lower(), \
                    "expected string appears in the description"
            msg = verify(t, refs[t["id"]])
            print(f"PASS {t['id']}: {msg}")
        except AssertionError as e:
            failures += 1
            print(f"FAIL {t['id']}: {e}")
    n_q = sum(isinstance(t["check"], dict) for t in tasks)
    if failures:
        print(f"FAILED: {failures} of {len(tasks)} tasks")
        return 1
    print(f"OK: all {len(tasks)} tasks verified ({n_q} questions, {len(tasks) - n_q} bash-check tasks)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
