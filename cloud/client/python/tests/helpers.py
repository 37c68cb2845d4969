"""Small helpers shared by the tests."""

import uuid
from datetime import datetime, timedelta, timezone

import grpc
import pytest

from platform_sdk import GRPCError

SENSOR = "rdk:component:sensor"
CAMERA = "rdk:component:camera"
# A fixed, recent capture time (GetLatestTabularData looks at data synced in the last year).
T0 = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(hours=1)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def pairs(n: int, start: datetime = T0, step_s: float = 1.0):
    return [(start + timedelta(seconds=i * step_s), start + timedelta(seconds=i * step_s, milliseconds=5)) for i in range(n)]


class raises_grpc:
    """``async with``-free check that a call fails with a GRPCError of one status code (and a message)."""

    def __init__(self, status: grpc.StatusCode, match: str = "") -> None:
        self._context = pytest.raises(GRPCError, match=match)
        self._status = status

    def __enter__(self):
        self.info = self._context.__enter__()
        return self.info

    def __exit__(self, *exc):
        suppressed = self._context.__exit__(*exc)
        if not suppressed:
            return False
        assert self.info.value.status == self._status, f"expected {self._status}, got {self.info.value}"
        assert self.info.value.message, "a server error carries a message"
        return suppressed
