#!/usr/bin/env python3
"""Black-box cases, part 4: code recounts (CSV column totals, files in a folder, distinct extensions,
.md names written into a file). Validators always say pass; the executor's tool prints the number answered
(so grounding holds). Wrong answers must not end in success; right answers must not be failed.
usage: python3 run_cases4.py /path/to/agentui [case-name-substring ...]
Docstrings marked UNCERTAIN assert beyond the changelog's letter."""
import json, os, sys, time, traceback
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa
from harness import plan, Script, run_agent, seq, passes, meta_pass  # noqa

CASES = []
def case(fn):
    CASES.append(fn); return fn
class Fail(Exception): pass
def check(c, m):
    if not c: raise Fail(m)
def sh(cmd): return {"tool": "shell", "args": {"command": cmd}}
def fin(o): return {"tool": "finish", "output": o}

def ask(goal, files, cmd, answer, links=(), dirs=(), setup=None):
    p = plan([goal], [{"intent": "Answer: " + goal, "criteria": ["the answer is reported"], "tools": ["shell"]}])
    s = Script(goal, p, executor=seq([sh(cmd), fin(answer)]), validator=passes(), meta=meta_pass(answer))
    import tempfile
    ws = tempfile.mkdtemp(prefix="i13c4_")
    for d in dirs: os.makedirs(os.path.join(ws, d), exist_ok=True)
    for name, c in (files or {}).items():
        pth = os.path.join(ws, name); os.makedirs(os.path.dirname(pth), exist_ok=True)
        with open(pth, "w", newline="") as f: f.write(c)
    for src, dst in links:
        os.makedirs(os.path.dirname(os.path.join(ws, src)), exist_ok=True)
        os.symlink(dst, os.path.join(ws, src))
    if setup: setup(ws)
    return run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=60)

def ok(r, what):
    check(r.rc != "timeout", "timeout")
    check(r.rc == 0 and r.directive in ("success", "accept"), "right answer failed: %s -- %s" % (r.brief(), what))
def bad(r, what):
    check(r.rc != "timeout", "timeout")
    check(not r.success(), "wrong answer accepted: %s -- %s" % (r.brief(), what))

def both(name, goal, files, right_cmd, right, wrong, doc="", **kw):
    """Define <name>_right (answer right must succeed) and <name>_wrong (echo wrong; must not succeed)."""
    def fr():
        ok(ask(goal, files, right_cmd, right, **kw), "%r for %r" % (right, goal))
    fr.__name__ = name + "_right"; fr.__doc__ = doc
    CASES.append(fr)
    if wrong is not None:
        def fw():
            num = "".join(ch for ch in wrong if ch in "0123456789.-") or wrong
            bad(ask(goal, files, "echo %s" % num, wrong, **kw), "%r for %r" % (wrong, goal))
        fw.__name__ = name + "_wrong"; fw.__doc__ = doc
        CASES.append(fw)

# ====================================================== 1. CSV column totals
SALES = "name,amount,qty\na,10,1\nb,39,2\n"   # amount total 49, qty 3
SUMA = "awk -F, 'NR>1{s+=$2}END{print s}' sales.csv"
Q = "What is the total of the amount column in sales.csv?"
both("csv_plain", Q, {"sales.csv": SALES}, SUMA, "49", "50")
both("csv_sentence", Q, {"sales.csv": SALES}, SUMA, "The total is 49.", "The total is 52.")
both("csv_decimal_form", Q, {"sales.csv": SALES}, "echo 49.0", "49.0", None)
both("csv_words", Q, {"sales.csv": SALES}, SUMA, "forty-nine", None, doc="UNCERTAIN: number in words")
both("csv_other_numbers", Q, {"sales.csv": SALES}, SUMA + "; echo 2 rows", "Over 2 rows, the total of amount is 49.",
     "Over 2 rows, the total of amount is 48.")
both("csv_qty_number_in_answer", Q, {"sales.csv": SALES}, "echo 3; echo 50",
     "The amount total is 49 (qty total is 3).", None)
both("csv_wrong_with_other_right_number", Q, {"sales.csv": SALES}, "echo 49; echo 50",
     "Not 49 as one might think: the total is 50.", None, doc="UNCERTAIN: answer names the right number but asserts a wrong one")
both("csv_sum_phrasing", "Sum the amount column of sales.csv", {"sales.csv": SALES}, SUMA, "49", "60")
both("csv_addup_phrasing", "add up the values in the amount column in sales.csv and tell me the result",
     {"sales.csv": SALES}, SUMA, "49", "60", doc="UNCERTAIN: phrasing variant")
both("csv_capitalised_col", "What is the total of the Amount column in sales.csv?", {"sales.csv": SALES}, SUMA, "49", "60",
     doc="UNCERTAIN (wrong side): column name differs in case")
both("csv_quoted_commas", Q, {"sales.csv": 'name,amount\n"Smith, John",10\n"Doe, Jane",39\n'},
     "python3 -c \"import csv;print(sum(float(r['amount']) for r in csv.DictReader(open('sales.csv'))))\"", "49", "50")
both("csv_quoted_numbers", Q, {"sales.csv": 'name,amount\n"a","10"\n"b","39"\n'},
     "python3 -c \"import csv;print(sum(float(r['amount']) for r in csv.DictReader(open('sales.csv'))))\"", "49", "50",
     doc="UNCERTAIN (wrong side): numbers inside quotes are still numbers after CSV parsing")
both("csv_trailing_blank", Q, {"sales.csv": SALES + "\n\n"}, SUMA, "49", "50")
both("csv_neg_decimal", Q, {"sales.csv": "name,amount\na,10.5\nb,-3\nc,2.25\n"}, SUMA, "9.75", "15.75")
both("csv_float_noise", Q, {"sales.csv": "name,amount\na,0.1\nb,0.2\n"}, SUMA, "0.3", "0.4")
both("csv_bom_crlf", Q, {"sales.csv": "\ufeffamount,name\r\n10,a\r\n39,b\r\n"},
     "python3 -c \"import csv;print(sum(float(r['amount']) for r in csv.DictReader(open('sales.csv',encoding='utf-8-sig'))))\"",
     "49", "50", doc="UNCERTAIN (wrong side): BOM before the first header")
both("csv_crlf_last_col", Q, {"sales.csv": "name,amount\r\na,10\r\nb,39\r\n"}, "echo 49", "49", "50")
both("csv_semicolon", Q, {"sales.csv": "name;amount\na;10\nb;39\n"}, "echo 49", "49", "50",
     doc="UNCERTAIN (wrong side): semicolon-separated .csv")
both("csv_tsv", "What is the total of the amount column in sales.tsv?", {"sales.tsv": "name\tamount\na\t10\nb\t39\n"},
     "awk -F'\\t' 'NR>1{s+=$2}END{print s}' sales.tsv", "49", "50")
both("csv_thousands", Q, {"sales.csv": "name,amount\na,1000\nb,2500\n"}, SUMA, "The total is 3,500.", "3,600",
     doc="right answer with a thousands separator")
both("csv_currency", Q, {"sales.csv": SALES}, SUMA, "$49", "$50")
both("csv_subfolder", "What is the total of the amount column in data/sales.csv?", {"data/sales.csv": SALES},
     "awk -F, 'NR>1{s+=$2}END{print s}' data/sales.csv", "49", "50")
both("csv_numeric_header", "What is the total of the 2024 column in sales.csv?", {"sales.csv": "name,2024\na,10\nb,39\n"},
     "awk -F, 'NR>1{s+=$2}END{print s}' sales.csv", "49", "2073", doc="header is a number; summing it is wrong")
both("csv_nonnumeric_silent", Q, {"sales.csv": "name,amount\na,10\nb,n/a\nc,39\n"}, "echo 49", "49", None)
both("csv_duplicate_col_silent", Q, {"sales.csv": "amount,amount\n10,1\n39,2\n"}, "echo 3", "3", None)
both("csv_missing_col_silent", "What is the total of the price column in sales.csv?", {"sales.csv": SALES}, "echo 0",
     "0", None)
both("csv_space_col", "What is the total of the unit price column in sales.csv?",
     {"sales.csv": "name,unit price\na,10\nb,39\n"}, "echo 49", "49", "50")
both("csv_space_after_comma", Q, {"sales.csv": "name, amount\na, 10\nb, 39\n"}, "echo 49", "49", "50",
     doc="UNCERTAIN (wrong side): spaces after commas")
both("csv_empty_cell", Q, {"sales.csv": "name,amount\na,10\nb,\nc,39\n"}, "echo 49", "49", "50",
     doc="empty cell: 49 right; wrong side UNCERTAIN (code may call blank a non-number)")
both("csv_integer_as_decimal", Q, {"sales.csv": "name,amount\na,10.50\nb,39.50\n"}, SUMA, "50.00", "51")

# ====================================================== 2. files in a folder
# d: a.txt b.txt c.txt .h (hidden) sub/ (x,y inside) -> visible files 3, +hidden 4, +folder 4/5; recursive files 5/6
D = {"d/a.txt": "a", "d/b.txt": "b", "d/c.txt": "c", "d/.h": "h", "d/sub/x": "x", "d/sub/y": "y"}
QD = "How many files are in the d folder?"
both("dir_plain_visible", QD, D, "ls d | wc -l", "4", None)
both("dir_plain_3", QD, D, "ls -p d | grep -v / | wc -l", "3 files", "2 files")
both("dir_plain_5", QD, D, "ls -A d | wc -l", "5", "7", doc="7 = recursive+dir: not a reading when not asked")
both("dir_plain_wrong6", QD, D, "echo 6", "6", None, doc="placeholder")  # replaced below
CASES.pop()  # drop the placeholder (6 is the recursive count; tested below)
def dir_plain_recursive_wrong():
    """not asked to recurse: 6 (recursive files incl hidden) is not a reading"""
    bad(ask(QD, D, "echo 6", "6"), "6")
CASES.append(dir_plain_recursive_wrong)
both("dir_hidden_incl", "How many files are in the d folder, hidden files included?", D, "ls -A d | wc -l", "5", "3")
both("dir_hidden_incl_files_only", "How many files are in the d folder, hidden files included?", D,
     "find d -maxdepth 1 -type f | wc -l", "4", None)
both("dir_not_folders", "How many files are in the d folder, not counting folders?", D,
     "find d -maxdepth 1 -type f | wc -l", "4", "5")
both("dir_visible", "How many visible files are in the d folder?", D, "ls -p d | grep -v / | wc -l", "3", "5")
both("dir_excl_hidden", "How many files are in the d folder, excluding hidden files?", D, "ls d | wc -l", "4", "5")
both("dir_recursive", "How many files are in the d folder, including subfolders?", D,
     "find d -type f | wc -l", "6", "3")
both("dir_recursive_visible", "How many files are in the d folder including subfolders, not counting hidden files?", D,
     "find d -type f -not -name '.*' | wc -l", "5", "3")
both("dir_trailing_slash", "How many files are in the d/ folder?", D, "ls d/ | wc -l", "4", "9")
both("dir_folder_word_first", "How many files are in folder d?", D, "ls d | wc -l", "4", "9")
both("dir_this_folder", "How many files are in this folder?", {"a.txt": "a", "b.txt": "b", "c/x": "x"},
     "ls | wc -l", "3", "9")
both("dir_this_folder_files_only", "How many files are in this folder?", {"a.txt": "a", "b.txt": "b", "c/x": "x"},
     "find . -maxdepth 1 -type f | wc -l", "2", None)
both("dir_empty", QD, {}, "ls -A d | wc -l", "0", "1", dirs=["d"])
both("dir_empty_words", QD, {}, "ls -A d | wc -l", "The d folder is empty (0 files).", "The d folder has 1 file.", dirs=["d"])
both("dir_empty_no", QD, {}, "ls -A d | wc -l", "There are no files in d.", None, dirs=["d"],
     doc="UNCERTAIN: 'no files' for 0")
both("dir_symlinks", QD, {"d/a.txt": "a", "d/b.txt": "b", "t/x": "x"}, "ls d | wc -l", "4", "9",
     links=[("d/la", "a.txt"), ("d/ld", "../t")], doc="symlink to file + symlink to dir: 4 (ls) must be accepted")
both("dir_symlinks_files_only", QD, {"d/a.txt": "a", "d/b.txt": "b", "t/x": "x"},
     "find d -maxdepth 1 -type f | wc -l", "2", None,
     links=[("d/la", "a.txt"), ("d/ld", "../t")], doc="find -type f skips symlinks: 2 (UNCERTAIN)")
both("dir_symlink_3", QD, {"d/a.txt": "a", "d/b.txt": "b", "t/x": "x"},
     "find -L d -maxdepth 1 -type f | wc -l", "3", None,
     links=[("d/la", "a.txt"), ("d/ld", "../t")], doc="following links: 3 regular files")
def mkhuge(ws):
    os.makedirs(os.path.join(ws, "big"))
    for i in range(5000):
        open(os.path.join(ws, "big", "f%05d.dat" % i), "w").close()
both("dir_huge", "How many files are in the big folder?", {}, "ls big | wc -l", "There are 5000 files.", "4999",
     setup=mkhuge)
both("dir_huge_thousands", "How many files are in the big folder?", {}, "ls big | wc -l", "5,000", None, setup=mkhuge)
both("dir_number_in_text", QD, D, "ls d | wc -l",
     "The d folder (2 levels deep in total) has 4 files.", "The d folder has 9 files, 4 of which are visible.",
     doc="wrong side UNCERTAIN: answer states 9 as the count")
both("dir_quoted_name", 'How many files are in the "my docs" folder?', {"my docs/a": "a", "my docs/b": "b"},
     "ls 'my docs' | wc -l", "2", "3")
both("dir_nested_path", "How many files are in the src/lib folder?", {"src/lib/a.py": "", "src/lib/b.py": "", "src/c.py": ""},
     "ls src/lib | wc -l", "2", "3")
both("dir_how_many_files_does_d_contain", "How many files does the d folder contain?", D, "ls d | wc -l", "4", "9",
     doc="UNCERTAIN (wrong side): phrasing variant")
both("dir_count_the_files", "Count the files in the d folder", D, "ls d | wc -l", "4", "9",
     doc="UNCERTAIN (wrong side): phrasing variant")

# ====================================================== 3. distinct extensions
E = {"e/a.txt": "", "e/b.txt": "", "e/c.md": "", "e/d.py": "", "e/Makefile": ""}  # 3 exts, +noext = 4
QE = "How many distinct file extensions are in the e folder?"
both("ext_plain", QE, E, "ls e | sed -n 's/.*\\.//p' | sort -u | wc -l", "3", "5")
both("ext_noext_counted", QE, E, "echo 4", "4", "2")
both("ext_sentence", QE, E, "echo 3", "There are 3 distinct extensions: txt, md, py.", "There are 6 distinct extensions.")
both("ext_workspace", "How many distinct file extensions are there in this folder?",
     {"a.txt": "", "b.txt": "", "c.csv": "", "d.json": ""}, "echo 3", "3", "4",
     doc="UNCERTAIN: scope wording 'in this folder'")
both("ext_different", "How many different file extensions are used in the e folder?", E, "echo 3", "3", "5",
     doc="UNCERTAIN (wrong side): 'different' instead of 'distinct'")
both("ext_unique", "How many unique file extensions are in the e folder?", E, "echo 3", "3", "5",
     doc="UNCERTAIN (wrong side): 'unique'")
both("ext_targz", QE, {"e/a.tar.gz": "", "e/b.gz": "", "e/c.txt": ""}, "echo 2", "2", None,
     doc="gz,txt (.tar.gz counted as .gz) -- UNCERTAIN")
both("ext_targz_3", QE, {"e/a.tar.gz": "", "e/b.gz": "", "e/c.txt": ""}, "echo 3", "3", None,
     doc="tar.gz, gz, txt -- UNCERTAIN: a user might count .tar.gz as its own")
both("ext_case", QE, {"e/a.TXT": "", "e/b.txt": "", "e/c.md": ""}, "echo 2", "2", None,
     doc="UNCERTAIN: TXT vs txt same extension")
both("ext_case3", QE, {"e/a.TXT": "", "e/b.txt": "", "e/c.md": ""}, "echo 3", "3", None,
     doc="UNCERTAIN: TXT vs txt distinct (case-sensitive reading)")
both("ext_dotfile", QE, {"e/.gitignore": "", "e/a.txt": "", "e/b.md": ""}, "echo 2", "2", None,
     doc=".gitignore has no extension in most readings")
both("ext_empty_dir", QE, {}, "echo 0", "0", "1", dirs=["e"])

# ====================================================== 4. .md names into a file
MD = {"docs/a.md": "# a", "docs/b.md": "# b", "docs/c.txt": "c"}
def md_case(name, goal, files, content, expect_ok, doc=""):
    def f():
        p = plan([goal], [{"intent": goal, "criteria": ["the file lists the names"], "tools": ["write_file", "shell"]}])
        s = Script(goal, p, executor=seq([sh("ls docs"), {"tool": "write_file", "args": {"path": "list.txt", "content": content}},
                                          fin("wrote list.txt")]), validator=passes(), meta=meta_pass("wrote list.txt"))
        r = run_agent(s, goal, files=files, extra_args=["--yes"], timeout=60)
        (ok if expect_ok else bad)(r, "list.txt=%r" % content)
    f.__name__ = name; f.__doc__ = doc; CASES.append(f)
QM = "Write the names of all .md files in docs into list.txt"
md_case("md_names_ok", QM, MD, "a.md\nb.md\n", True)
md_case("md_paths_bad", QM, MD, "docs/a.md\ndocs/b.md\n", False)
md_case("md_dot_paths_bad", QM, MD, "./docs/a.md\n./docs/b.md\n", False)
md_case("md_abs_paths_bad", QM, MD, "/tmp/x/docs/a.md\n/tmp/x/docs/b.md\n", False)
md_case("md_mixed_bad", QM, MD, "a.md\ndocs/b.md\n", False)
md_case("md_comma_ok", QM, MD, "a.md, b.md\n", True, doc="UNCERTAIN: one line comma-separated")
md_case("md_bullets_ok", QM, MD, "- a.md\n- b.md\n", True, doc="UNCERTAIN: bulleted names")
md_case("md_crlf_ok", QM, MD, "a.md\r\nb.md\r\n", True)
md_case("md_nested_names_ok", "Write the names of all .md files in docs, including subfolders, into list.txt",
        dict(MD, **{"docs/sub/c.md": "c"}), "a.md\nb.md\nc.md\n", True)
md_case("md_workspace_ok", "Write the names of all .md files into list.txt", {"README.md": "r", "docs/a.md": "a"},
        "README.md\na.md\n", True,
        doc="UNCERTAIN, probably my expectation is wrong: recursion only when asked -> only README.md expected")
md_case("md_workspace_paths_bad", "Write the names of all .md files into list.txt", {"README.md": "r", "docs/a.md": "a"},
        "README.md\ndocs/a.md\n", False)
md_case("md_dir_with_md_in_name_ok", QM, {"docs/a.md": "a", "docs/notes.md.d/x": "x"}, "a.md\n", True,
        doc="UNCERTAIN: names only")
md_case("md_windows_paths_bad", QM, MD, "docs\\a.md\ndocs\\b.md\n", False, doc="UNCERTAIN: backslash paths")

md_case("md_docs_folder_ok", "Write the names of all .md files in the docs folder into list.txt", MD, "a.md\nb.md\n", True)
md_case("md_docs_slash_ok", "Write the names of all .md files in docs/ into list.txt", MD, "a.md\nb.md\n", True)
md_case("md_docs_folder_paths_bad", "Write the names of all .md files in the docs folder into list.txt", MD,
        "docs/a.md\ndocs/b.md\n", False)
both("csv_sum_of_q", "What is the sum of the amount column in sales.csv?", {"sales.csv": SALES}, SUMA, "49", "60")
both("csv_total_of_q_in_file", "What is the total of the amount column of sales.csv?", {"sales.csv": SALES}, SUMA, "49", "60")
def dir_d_folder_wrong_big():
    """12 for a folder with at most 5 entries"""
    bad(ask("How many files are in the d folder?", D, "echo 12", "12"), "12")
CASES.append(dir_d_folder_wrong_big)

md_case("md_root_names_for_docs_bad", QM, {"README.md": "r", "docs/a.md": "a"}, "README.md\n", False,
        doc="UNCERTAIN (not one of the 4 promises: wrong names, not paths)")
both("ext_folder_vs_root", QE, {"e/a.txt": "", "e/b.txt": "", "x.py": "", "y.md": "", "z.csv": ""}, "echo 1", "1", "4")


def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/work/wt/lead/.venv/bin/agentui"
    subs = sys.argv[2:]
    sel = [c for c in CASES if not subs or any(s in c.__name__ for s in subs)]
    okc = 0
    for c in sel:
        t0 = time.time(); H.LAST_RUNS.clear()
        try:
            c(); okc += 1
            print("PASS %s (%.1fs)" % (c.__name__, time.time() - t0), flush=True)
        except Fail as e:
            print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:400]), flush=True)
        except Exception as e:
            print("FAIL %s: harness error %s: %s" % (c.__name__, type(e).__name__, str(e)[:300]), flush=True)
            traceback.print_exc(file=sys.stderr)
    print("total: %d/%d" % (okc, len(sel)))

if __name__ == "__main__":
    main()
