"""Check that every dependency of agentui (and of its `dev` extra) installs from wheels only on each
supported target: macOS arm64 and Linux x86_64, CPython 3.11–3.14 (#15).

For each target the requirements' environment markers are evaluated for *that* target (pip would
evaluate them for the interpreter running it), then pip resolves them with `--only-binary=:all:`
for the target's platform tags, without installing (`pip install --dry-run`; PyPI serves the
metadata, so little is downloaded). Exit 0 if every target resolves, 1 otherwise (one line each).

    python scripts/check_wheels.py [--target macos-arm64/3.13 ...] [--json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

try:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
except ImportError:  # pragma: no cover - pip always vendors it
    from pip._vendor.packaging.markers import Marker  # type: ignore[no-redef]
    from pip._vendor.packaging.requirements import Requirement  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
VERSIONS = ["3.11", "3.12", "3.13", "3.14"]
# pip needs every tag it may accept: universal2 wheels serve arm64; older manylinux serve newer glibc
PLATFORMS = {
    "macos-arm64": {
        "tags": [f"macosx_{v}_0_{a}" for v in (14, 13, 12, 11) for a in ("arm64", "universal2")],
        "env": {"sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64",
                "os_name": "posix"},
    },
    "linux-x86_64": {
        "tags": ["manylinux_2_28_x86_64", "manylinux_2_24_x86_64", "manylinux_2_17_x86_64",
                 "manylinux2014_x86_64", "manylinux_2_12_x86_64", "manylinux2010_x86_64",
                 "manylinux_2_5_x86_64", "manylinux1_x86_64"],
        "env": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                "os_name": "posix"},
    },
}
EXTRAS = ["dev"]


def requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[Requirement]:
    proj = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    reqs = list(proj.get("dependencies", []))
    for extra in EXTRAS:
        reqs += proj.get("optional-dependencies", {}).get(extra, [])
    return [Requirement(r) for r in reqs]


def for_target(reqs: list[Requirement], platform: str, version: str) -> list[str]:
    """The requirement specs (markers dropped) that apply on `platform` / `version`."""
    env = {**PLATFORMS[platform]["env"], "python_version": version, "python_full_version": f"{version}.0",
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}
    out = []
    for r in reqs:
        if r.marker is None or Marker(str(r.marker)).evaluate(env):
            out.append(f"{r.name}{r.specifier}")
    return out


def check(platform: str, version: str, reqs: list[Requirement]) -> dict:
    specs = for_target(reqs, platform, version)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--ignore-installed",
               "--only-binary=:all:", "--target", tmp, "--python-version", version,
               "--implementation", "cp", "--report", str(Path(tmp) / "report.json"), "--disable-pip-version-check"]
        for tag in PLATFORMS[platform]["tags"]:
            cmd += ["--platform", tag]
        r = subprocess.run(cmd + specs, capture_output=True, text=True, timeout=600)
        wheels: list[str] = []
        if r.returncode == 0:
            rep = json.loads((Path(tmp) / "report.json").read_text())
            wheels = sorted(Path(i["download_info"]["url"]).name for i in rep.get("install", []))
    error = "" if r.returncode == 0 else (r.stderr.strip().splitlines() or ["pip failed"])[-1]
    return {"target": f"{platform}/{version}", "ok": r.returncode == 0, "requirements": specs,
            "wheels": wheels, "error": error}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", action="append", metavar="PLATFORM/VERSION",
                    help=f"only these (platforms: {', '.join(PLATFORMS)}; versions: {', '.join(VERSIONS)})")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    targets = [t.split("/") for t in args.target] if args.target else [
        [p, v] for p in PLATFORMS for v in VERSIONS]
    reqs = requirements()
    results = [check(p, v, reqs) for p, v in targets]
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        for res in results:
            if res["ok"]:
                lev = [w for w in res["wheels"] if w.startswith("plyvel")]
                print(f"ok   {res['target']}: {len(res['wheels'])} wheels ({', '.join(lev)})")
            else:
                print(f"FAIL {res['target']}: {res['error']}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
