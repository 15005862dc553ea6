"""Compiled programs packed small enough to carry to the GPU machine, and unpacked there.

A call to the device carries at most 64 MiB with the working tree, and one E4B decoder program is 7–14 MB: two
programs to compare already fill a call. Their PTX is text, so xz shrinks a `.vmfb` about twenty times (12.1 MB
to 0.47 MB). `pack` writes each file under the given folders to `.gpu/carry/<its path>.xz`; `unpack`, run on the
GPU machine from the repository root, writes every `.gpu/carry/**.xz` back to its path, checking each file's
SHA-256 against the one recorded when it was packed, so a program measured there is the one built here.

    python3 scripts/carry_pack.py pack .gpu/prefill .gpu/sample     # here; then carry [".whl", ".gpu/carry"]
    python3 scripts/carry_pack.py unpack                            # there, before the measuring script
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import sys
from pathlib import Path

CARRY = Path(".gpu/carry")
MANIFEST = "manifest.json"  # {packed path: sha256 of the unpacked file}


def pack(folders: list[Path], carry: Path = CARRY) -> dict[str, str]:
    """Compress every file under `folders` (paths relative to the repository root) into `carry`."""
    manifest_path = carry / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for folder in folders:
        files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else [folder]
        if not folder.exists() or not files:
            raise SystemExit(f"carry_pack: {folder}: no files to pack")
        for path in files:
            data = path.read_bytes()
            target = carry / f"{path.as_posix()}.xz"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(lzma.compress(data, preset=6))
            manifest[path.as_posix()] = hashlib.sha256(data).hexdigest()
            print(f"{path}: {len(data):,} -> {target.stat().st_size:,} bytes", file=sys.stderr)
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def unpack(carry: Path = CARRY, root: Path = Path(".")) -> list[Path]:
    """Write every packed file back under `root`, each checked against the manifest's SHA-256."""
    manifest = json.loads((carry / MANIFEST).read_text())
    written = []
    for name, digest in sorted(manifest.items()):
        data = lzma.decompress((carry / f"{name}.xz").read_bytes())
        if hashlib.sha256(data).hexdigest() != digest:
            raise SystemExit(f"carry_pack: {name}: SHA-256 differs from the one recorded when it was packed")
        out = root / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        written.append(out)
        print(f"{out}: {len(data):,} bytes, sha256 {digest[:16]}", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack", help="compress files or folders into .gpu/carry")
    p.add_argument("paths", nargs="+", type=Path, help="files or folders, relative to the repository root")
    sub.add_parser("unpack", help="restore every packed file to its path (on the GPU machine)")
    args = parser.parse_args(argv)
    if args.command == "pack":
        pack(args.paths)
    else:
        unpack()


if __name__ == "__main__":
    main()
