"""The kind of work a task is: the key memory groups tasks by (DESIGN §5b, docs/design-decisions.md).

R1's `TaskSpec.intent` is a short phrase — verb + object + qualifier, e.g. "count directories in a
directory tree" — and a task's memory lives in up to two ``intent:<verb>_<object>`` spaces
(``_matching`` added when the work looks for a pattern inside files):

- the one read from the intent phrase (the model's wording, normalised here), and
- the one code reads from the request itself, so memory still groups like tasks when the model's
  phrase drifts. Usually they are the same space.

Both come from one lexicon of verbs and objects with their synonyms ("how many" and "number of" are
`count`, "folder" is `directories`), so a request's opening words ("As a student, you are …") and
its names and paths never decide where its lessons go. Text the lexicon does not read falls back
to its first three content words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .tags import _slug_raw, slug

#: phrases rewritten before reading: several words that name one verb or object
_REWRITES: tuple[tuple[str, str], ...] = (
    (r"\b(?:total|overall|combined) (?:number|count) of\b|\bnumber of\b|\bhow many\b|\bcount of\b", " count "),
    (r"\bhow (?:much|big) (?:disk )?space\b|\bhow big\b|\bdisk (?:usage|space)\b|"
     r"\b(?:total|combined|overall|cumulative) (?:file )?sizes?\b", " sum size "),
    (r"\badd(?:s|ing)? up\b|\bsum(?:s|med|ming)? up\b", " sum "),
    (r"\blook(?:s|ing)? for\b", " search "),
    (r"\bback(?:s|ing)? up\b", " copy "),
    (r"\bfile ?types?\b|\bfile extensions?\b", " extensions "),
    (r"\bsub-?(?:directories|directory|folders?|dirs?)\b", " directories tree "),
)

#: canonical verb → its synonyms (whole words, lower case)
VERBS: dict[str, tuple[str, ...]] = {
    "count": ("count", "counts", "counting", "tally", "enumerate"),
    "sum": ("sum", "sums", "total", "totals"),
    "average": ("average", "averages"),
    "search": ("search", "grep", "locate"),
    "list": ("list", "lists"),
    "sort": ("sort", "sorted", "rank"),
    "create": ("create", "make", "generate", "touch", "mkdir", "initialise", "initialize"),
    "write": ("write", "save", "append", "store", "put", "add", "insert"),
    "delete": ("delete", "remove", "erase", "purge", "clean"),
    "move": ("move", "relocate"),
    "rename": ("rename",),
    "copy": ("copy", "duplicate"),
    "replace": ("replace", "substitute"),
    "convert": ("convert", "transform"),
    "compare": ("compare", "diff"),
    "merge": ("merge", "combine", "concatenate", "join"),
    "split": ("split",),
    "compress": ("compress", "zip", "archive", "tar", "gzip"),
    "extract": ("extract", "unzip", "decompress", "unpack"),
    "run": ("run", "execute", "launch"),
    "install": ("install",),
    "fix": ("fix", "repair", "debug"),
    "download": ("download",),
}
#: verbs that say little about the work: used only when no verb of VERBS is there
WEAK_VERBS: dict[str, tuple[str, ...]] = {
    "find": ("find", "identify", "determine", "which", "where"),
    "compute": ("calculate", "compute"),
    "read": ("read", "show", "print", "display", "tell", "get", "report", "give", "what", "output", "open"),
    "check": ("check", "verify", "validate", "test", "ensure"),
}
#: canonical object → its synonyms
OBJECTS: dict[str, tuple[str, ...]] = {
    "files": ("file", "files"),
    "directories": ("directory", "directories", "folder", "folders", "dir", "dirs"),
    "lines": ("line", "lines"),
    "words": ("word", "words"),
    "characters": ("character", "characters", "chars", "letters"),
    "rows": ("row", "rows", "record", "records", "entries", "entry"),
    "columns": ("column", "columns", "field", "fields"),
    "extensions": ("extension", "extensions"),
    "size": ("size", "sizes", "bytes"),
    "numbers": ("number", "numbers", "integers"),
    "occurrences": ("occurrence", "occurrences", "matches", "instances"),
    "settings": ("setting", "settings", "key", "keys", "option", "options", "port", "mode"),
    "processes": ("process", "processes"),
    "links": ("link", "links", "symlink", "symlinks"),
    "permissions": ("permission", "permissions"),
    "packages": ("package", "packages", "dependency", "dependencies"),
    "commits": ("commit", "commits", "branch", "branches"),
    "errors": ("error", "errors", "warning", "warnings", "exception", "exceptions"),
    "text": ("text", "string", "strings", "content", "contents", "todo", "todos"),
    "scripts": ("script", "scripts", "program", "programs"),
}
#: qualifier phrase → the words that signal it
QUALIFIERS: tuple[tuple[str, str], ...] = (
    ("in a directory tree", r"\brecursive(?:ly)?\b|\btree\b|\bnested\b|\ball levels\b|\banywhere under\b"),
    ("by extension", r"\bextensions?\b"),
    ("distinct", r"\bdistinct\b|\bunique\b|\bdifferent\b"),
    # "contains TODO", not "how many lines the file contains": a pattern follows the verb
    ("matching a pattern", r"\bcontain(?:s|ing)?\b(?= \w)|\bmatching\b|\bpattern\b|\bregex\b|\bwith the word\b"),
    ("largest", r"\blargest\b|\bbiggest\b|\bmaximum\b|\bmax\b|\blongest\b|\bhighest\b"),
    ("smallest", r"\bsmallest\b|\bminimum\b|\bmin\b|\bshortest\b|\blowest\b"),
    ("newest", r"\bnewest\b|\blatest\b|\bmost recent(?:ly)?\b"),
    ("oldest", r"\boldest\b"),
)
#: data formats that change how the work is done (the tools and commands that fit)
FORMATS: dict[str, tuple[str, ...]] = {
    "csv": ("csv", "tsv"), "json": ("json", "jsonl"), "yaml": ("yaml", "yml"), "toml": ("toml",),
    "ini": ("ini", "cfg", "conf"), "xml": ("xml",), "log": ("log", "logs"), "sqlite": ("sqlite", "db"),
}
#: words that never name the work: filler of a request and of the model's restatement
STOP = frozenset(
    "a an the of in on at to for from by with and or all any each every this that these those my your our "
    "their its is are was were be been being it i you we they me us them as please can could would should "
    "will shall may might must do does did done there here into under inside within about using use "
    "required asked given task need needs want wants student user question so then also".split())

_WORD = re.compile(r"[a-z][a-z0-9+#-]*")
_EXT = re.compile(r"(?<![\w/])[\w-]*\.([a-z][a-z0-9]{0,4})\b|\*\.([a-z][a-z0-9]{0,4})\b")
_FILE_NAME = re.compile(r"(?<![\w*])[\w./-]*\w\.[a-z][a-z0-9]{0,4}\b")
_MAX_PHRASE = 80  # characters of the intent phrase (PerceiverOut bounds the model's to the same)


def _lookup(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {syn: canon for canon, syns in table.items() for syn in syns}


_BEFORE = frozenset({"distinct", "largest", "smallest", "newest", "oldest"})  # said before the object
_VERB = _lookup(VERBS)
_MAKES = frozenset({"create", "write", "replace", "convert", "merge", "copy", "move", "rename"})
_WEAK = _lookup(WEAK_VERBS)
_OBJECT = _lookup(OBJECTS)
_FORMAT = _lookup(FORMATS)


@dataclass(frozen=True)
class WorkKind:
    """What a text says the work is: verb, object, qualifiers and the data formats it names."""

    verb: str
    obj: str
    qualifiers: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()

    @property
    def phrase(self) -> str:
        """verb + object + qualifiers: "count directories in a directory tree"."""
        before = [q for q in self.qualifiers if q in _BEFORE][:1]  # "count distinct extensions"
        after = [q for q in self.qualifiers if q not in _BEFORE][:2]
        obj = self.obj
        if self.formats and obj == "files":
            obj = f"{self.formats[0]} files"
        elif self.formats and not after:
            after.append(f"in a {self.formats[0]} file")
        return " ".join([self.verb, *before, obj, *after])[:_MAX_PHRASE]

    @property
    def key(self) -> str:
        """verb_object; `_matching` when the work looks inside for a pattern (`grep`, not `find`)."""
        return f"{self.verb}_{self.obj}" + ("_matching" if "matching a pattern" in self.qualifiers else "")


def _words(text: str) -> list[str]:
    low = _FILE_NAME.sub(" file ", text.casefold())  # a named file is a file, whatever its name says
    for pat, rep in _REWRITES:
        low = re.sub(pat, rep, low)
    return _WORD.findall(low)


def formats_of(text: str) -> tuple[str, ...]:
    """The data formats a text names, by file extension or by name ("a CSV file"), sorted."""
    low = text.casefold()
    found = {_FORMAT[e] for m in _EXT.finditer(low) for e in m.groups() if e and e in _FORMAT}
    found |= {_FORMAT[w] for w in _WORD.findall(low) if w in _FORMAT and len(w) > 2}
    return tuple(sorted(found))


def read_work(text: str) -> WorkKind | None:
    """The kind of work `text` asks for, or None when its verb or its object is not in the lexicon.

    The verb is the first one of VERBS in the text (a weak verb such as "find" or "calculate" only
    when there is none); the object is the first noun of OBJECTS after the verb, else anywhere.
    """
    words = _words(text)
    if not words:
        return None
    at = next((i for i, w in enumerate(words) if w in _VERB), None)
    verb = _VERB[words[at]] if at is not None else None
    if verb is None:
        at = next((i for i, w in enumerate(words) if w in _WEAK), None)
        verb = _WEAK[words[at]] if at is not None else None
    if verb is None or at is None:
        return None
    later = [w for w in words[at + 1:] if w in _OBJECT]
    anywhere = [w for w in words if w in _OBJECT]
    noun = (later or anywhere)[0] if later or anywhere else None
    if noun is None and not _EXT.search(text.casefold()):
        return None
    obj = _OBJECT[noun] if noun is not None else "files"  # a named file and no other object
    joined = " ".join(words)
    quals = tuple(q for q, pat in QUALIFIERS if re.search(pat, joined)
                  and not (q == "by extension" and obj == "extensions")
                  and not (q == "matching a pattern" and verb in _MAKES))  # "containing" is then the content
    return WorkKind(verb=verb, obj=obj, qualifiers=quals, formats=formats_of(text))


def content_words(text: str, n: int = 3) -> list[str]:
    """The first `n` words of `text` that are not filler, slugged (any script)."""
    out: list[str] = []
    for tok in text.split():
        w = _slug_raw(tok)[:40]
        if w and w.casefold() not in STOP:
            out.append(w)
        if len(out) == n:
            break
    return out


def normalise_intent(model_intent: str, request: str) -> str:
    """R1's intent: the kind of work as "verb object qualifier", bounded. The model's phrase is read
    first, then the request; text neither reads as falls back to the model's first content words.
    A phrase that is the request's opening copied (cut at the schema's bound) is read as the request:
    the cut may have dropped a qualifier."""
    copied = " ".join(model_intent.split()).casefold()
    if copied and " ".join(request.split()).casefold().startswith(copied[:40]):
        model_intent = ""
    for text in (model_intent, request):
        wk = read_work(text) if text.strip() else None
        if wk is not None:
            return wk.phrase
    words = content_words(model_intent or request, 8)
    return " ".join(words)[:_MAX_PHRASE] or slug(request)[:_MAX_PHRASE]


def intent_key(intent: str) -> str:
    """The body of the ``intent:`` space: verb_object when the lexicon reads the intent, else its
    first three content words."""
    wk = read_work(intent)
    if wk is not None:
        return wk.key
    words = content_words(intent)
    return "_".join(words) if words else slug(intent)


def request_space(request: str) -> str | None:
    """``intent:<verb>_<object>`` read by code from the request, or None when the lexicon does not
    read it (then the intent's space alone holds the task's lessons). The data formats the request
    names stay out of the key: they show in the intent phrase and in the lessons' commands."""
    wk = read_work(request)
    return f"intent:{wk.key}" if wk is not None else None


def task_spaces(intent: str, request: str) -> list[str]:
    """The spaces a task's terminal lessons go to and its plans read: the intent's, then the
    request's when that differs."""
    return list(dict.fromkeys([intent_space(intent), *filter(None, [request_space(request)])]))


def intent_space(intent: str) -> str:
    """``intent:<verb>_<object>`` of the kind of work the intent names (workkind.intent_key), else
    ``intent:<first three content words>`` (CJK text without spaces is one word)."""
    return f"intent:{intent_key(intent)}"

