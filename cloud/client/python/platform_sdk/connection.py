"""The connection to platform-cloud: one grpc.aio channel (TLS unless ``insecure``) and an access token
got from AuthService/Authenticate with an API key, renewed shortly before it expires."""

from __future__ import annotations

import asyncio
import os
import re
import time
from typing import Optional, Tuple, Union

import grpc

from ._proto import auth_pb2, auth_pb2_grpc
from .errors import from_rpc_error

# Big enough for a page of 10 000 points or binary data with content (the server's own limits are lower).
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 256 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]

AUTHENTICATE_TIMEOUT_S = 30.0

_HOST = re.compile(r"^(?:(?:https?)://)?(?P<host>\[[^\]]+\]|[^/:]+)(?::(?P<port>\d+))?/?$")

RootCertificates = Union[bytes, str, "os.PathLike[str]", None]


def parse_service_host(service_host: str) -> str:
    """'host:port' (an http:// or https:// prefix is accepted and ignored) -> 'host:port'; port 443 when absent."""
    match = _HOST.match(service_host.strip())
    if not match:
        raise ValueError(f'service_host "{service_host}" must be of the form host[:port]')
    return f"{match['host']}:{match['port'] or 443}"


def channel_credentials(insecure: bool, root_certificates: RootCertificates = None) -> Optional[grpc.ChannelCredentials]:
    """None for a plaintext channel (insecure=True); TLS credentials otherwise.

    root_certificates: PEM bytes, or the path of a PEM file, of the CAs to trust instead of the
    system's (for a cloud with a self-signed or private certificate).
    """
    if insecure:
        if root_certificates is not None:
            raise ValueError("root_certificates makes no sense with insecure=True (a plaintext channel)")
        return None
    if root_certificates is None:
        return grpc.ssl_channel_credentials()
    if isinstance(root_certificates, bytes):
        pem = root_certificates
    else:
        with open(root_certificates, "rb") as f:
            pem = f.read()
    return grpc.ssl_channel_credentials(root_certificates=pem)


def open_channel(address: str, credentials: Optional[grpc.ChannelCredentials]) -> grpc.aio.Channel:
    if credentials is None:
        return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    return grpc.aio.secure_channel(address, credentials, options=CHANNEL_OPTIONS)


class Connection:
    """A channel plus the caller's access token; ``metadata()`` is what every call sends."""

    def __init__(self, channel: grpc.aio.Channel, api_key_id: str, api_key: str, credential_type: str = "api-key") -> None:
        self.channel = channel
        self._auth = auth_pb2_grpc.AuthServiceStub(channel)
        self._entity = api_key_id
        self._payload = api_key
        self._type = credential_type
        self._token: Optional[Tuple[str, float]] = None
        self._lock = asyncio.Lock()

    async def access_token(self) -> str:
        async with self._lock:
            if self._token is None or time.monotonic() >= self._token[1]:
                self._token = await self._authenticate()
            return self._token[0]

    async def metadata(self) -> Tuple[Tuple[str, str], ...]:
        return (("authorization", f"Bearer {await self.access_token()}"),)

    async def _authenticate(self) -> Tuple[str, float]:
        request = auth_pb2.AuthenticateRequest(
            entity=self._entity, credentials=auth_pb2.Credentials(type=self._type, payload=self._payload)
        )
        try:
            response = await self._auth.Authenticate(request, timeout=AUTHENTICATE_TIMEOUT_S)
        except grpc.RpcError as err:
            raise from_rpc_error(err) from err
        # Renew at 80% of the lifetime so that no call starts with a token about to expire.
        lifetime = response.expires_in_seconds or 60
        return response.access_token, time.monotonic() + lifetime * 0.8

    async def close(self) -> None:
        await self.channel.close()
