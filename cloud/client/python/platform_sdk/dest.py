"""``dest``: query results written to a file as JSON, like the TypeScript client does (bytes as base64,
times as ISO 8601), durably: a temp file beside it, fsync, rename."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import tempfile
from datetime import datetime
from typing import Any, Optional


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def write_dest(dest: Optional[str], value: Any) -> None:
    if not dest:
        return
    path = os.path.abspath(dest)
    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(prefix=".dest-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f, default=_json_default, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
