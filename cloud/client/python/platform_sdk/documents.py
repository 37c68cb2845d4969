"""SQL and MQL results: BSON documents decoded with the server's own types (datetime for dates, int or
bson Int64 for integers, Decimal128 for decimals, Binary/bytes for blobs), nothing narrowed; and MQL
stages encoded as Structs when that is lossless, else as BSON."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Mapping, Sequence, Tuple, Union

import bson
from bson.codec_options import CodecOptions

# tz_aware: dates come back as aware UTC datetimes, like every other time this client returns.
_CODEC = CodecOptions(document_class=dict, tz_aware=True, tzinfo=_dt.timezone.utc)

# Integers beyond this do not survive a Struct (a double); they go as BSON.
_MAX_EXACT_DOUBLE_INT = 2**53

Stage = Union[Mapping[str, Any], bytes]


def decode_documents(raw: Sequence[bytes]) -> List[Dict[str, Any]]:
    return [bson.decode(doc, codec_options=_CODEC) for doc in raw]


def _struct_safe(value: Any) -> bool:
    """True when a google.protobuf.Struct carries the value unchanged."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, int):
        return abs(value) <= _MAX_EXACT_DOUBLE_INT
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, (list, tuple)):
        return all(_struct_safe(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _struct_safe(v) for k, v in value.items())
    return False


def encode_stages(query: Sequence[Stage]) -> Tuple[List[Mapping[str, Any]], List[bytes]]:
    """(struct stages, bson stages): all stages as Structs when every one is plain JSON, else all as BSON."""
    if not isinstance(query, (list, tuple)):
        raise ValueError("query must be a list of aggregation stages (dicts)")
    for i, stage in enumerate(query):
        if not isinstance(stage, (bytes, bytearray, Mapping)):
            raise ValueError(f"query[{i}] must be a dict (or BSON bytes, deprecated), got {type(stage).__name__}")
    if all(isinstance(stage, Mapping) and _struct_safe(stage) for stage in query):
        return list(query), []  # type: ignore[arg-type]
    return [], [bytes(stage) if isinstance(stage, (bytes, bytearray)) else bson.encode(stage) for stage in query]
