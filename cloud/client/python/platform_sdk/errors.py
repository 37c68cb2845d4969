"""Errors. Client-side rule breaks are Python's own (ValueError, FileNotFoundError); every error the
server answers is one type, GRPCError, carrying the gRPC status code and message."""

from __future__ import annotations

import functools
from typing import Any, Awaitable, Callable, TypeVar

import grpc

T = TypeVar("T")


class GRPCError(Exception):
    """A call the server (or the transport) refused.

    ``status`` is the ``grpc.StatusCode`` (for example ``grpc.StatusCode.INVALID_ARGUMENT``),
    ``code`` its number, ``message`` the server's message, which names the field and the rule.
    """

    def __init__(self, status: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{status.name}: {message}")
        self.status = status
        self.message = message

    @property
    def code(self) -> int:
        return self.status.value[0]


def from_rpc_error(err: grpc.RpcError) -> GRPCError:
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    details = err.details() if hasattr(err, "details") else str(err)
    return GRPCError(code or grpc.StatusCode.UNKNOWN, details or "")


def rpc(method: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Turns the gRPC errors of an async client method into GRPCError (the original stays as __cause__)."""

    @functools.wraps(method)
    async def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return await method(*args, **kwargs)
        except grpc.RpcError as err:
            raise from_rpc_error(err) from err

    return wrapper
