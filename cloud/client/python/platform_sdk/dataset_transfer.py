"""The client side of the file transfers: an export's zip goes to a file and then into a folder, extracted
with the same rules the cloud applies to imports (no ``../`` or absolute paths, no links, nothing written
through an existing link, sizes checked while inflating, what was written removed again on failure); an
import sends a zip, or a folder zipped on the way; an MCAP export goes to a file."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from typing import List

FORMATS = {"jsonl": 1, "coco": 2, "yolo": 3}

_S_IFLNK = 0o120000
_S_IFMT = 0o170000
_RATIO_FLOOR = 1 << 20
_COPY_BYTES = 1 << 16


def format_of(format: str) -> int:
    if format not in FORMATS:
        raise ValueError(f"format must be 'jsonl', 'coco' or 'yolo', got {format!r}")
    return FORMATS[format]


def _check(info: zipfile.ZipInfo, seen: set, max_ratio: int) -> None:
    name = info.filename
    if (info.external_attr >> 16) & _S_IFMT == _S_IFLNK:
        raise ValueError(f"{name}: is a symbolic link; links are not extracted")
    if ".." in name.replace("\\", "/").split("/"):
        raise ValueError(f"{name}: has a ../ path segment, which would write outside the folder")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ValueError(f"{name}: is an absolute path")
    if info.flag_bits & 0x1:
        raise ValueError(f"{name}: is encrypted")
    if name in seen:
        raise ValueError(f"{name}: appears twice in the zip")
    seen.add(name)
    if info.file_size > _RATIO_FLOOR and info.file_size > max_ratio * max(1, info.compress_size):
        raise ValueError(f"{name}: expands {info.file_size // max(1, info.compress_size)} times, more than {max_ratio} (zip bomb?)")


def extract_zip(zip_path: str, folder: str, max_ratio: int = 200) -> List[str]:
    """Extracts ``zip_path`` into ``folder`` after checking every entry; returns the paths written (relative)."""
    with zipfile.ZipFile(zip_path) as archive:
        infos = archive.infolist()
        seen: set = set()
        for info in infos:
            _check(info, seen, max_ratio)
        os.makedirs(folder, exist_ok=True)
        root = os.path.realpath(folder)
        written: List[str] = []
        try:
            for info in infos:
                if info.is_dir():
                    continue
                target = os.path.join(root, *info.filename.split("/"))
                if not os.path.abspath(target).startswith(root + os.sep):
                    raise ValueError(f"{info.filename}: resolves outside the folder")
                parent = os.path.dirname(target)
                os.makedirs(parent, exist_ok=True)
                if os.path.realpath(parent) != parent:
                    raise ValueError(f"{info.filename}: goes through a symbolic link")
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
                written.append(target)
                total = 0
                with archive.open(info) as src, os.fdopen(fd, "wb") as dst:
                    while True:
                        chunk = src.read(_COPY_BYTES)
                        if not chunk:
                            break
                        total += len(chunk)
                        if total > info.file_size:
                            raise ValueError(f"{info.filename}: inflates past its declared {info.file_size} bytes")
                        dst.write(chunk)
            return [os.path.relpath(p, root).replace(os.sep, "/") for p in written]
        except BaseException:
            for p in written:
                try:
                    os.remove(p)
                except OSError:
                    pass
            raise


def zip_folder(folder: str, zip_path: str) -> None:
    """Zips the folder's regular files (paths relative to it); a link in it is refused."""
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            dirnames.sort()
            for name in sorted(dirnames + filenames):
                full = os.path.join(dirpath, name)
                if os.path.islink(full):
                    raise ValueError(f"{full}: is a symbolic link; an import takes regular files only")
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                if stat.S_ISREG(os.lstat(full).st_mode):
                    archive.write(full, os.path.relpath(full, folder).replace(os.sep, "/"))


class TempDir:
    """A private temporary folder, removed on exit."""

    def __init__(self, near: str = "") -> None:
        self.path = tempfile.mkdtemp(prefix=".platform-transfer-", dir=near or None)

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
