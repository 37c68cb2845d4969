"""CloudClient: one authenticated connection to platform-cloud, with its data and ML training clients."""

from __future__ import annotations

from types import TracebackType
from typing import Optional, Type

from .connection import Connection, RootCertificates, channel_credentials, open_channel, parse_service_host
from .data_client import DataClient
from .ml_training_client import MLTrainingClient


class CloudClient:
    """Create it with ``await CloudClient.create(...)``; close it with ``await client.close()`` or use
    ``async with await CloudClient.create(...) as client``."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self.data_client = DataClient(connection)
        self.ml_training_client = MLTrainingClient(connection)

    @classmethod
    async def create(
        cls,
        service_host: str,
        api_key_id: str,
        api_key: str,
        insecure: bool = False,
        root_certificates: RootCertificates = None,
    ) -> "CloudClient":
        """Connects and authenticates with the API key (a bad key is an UNAUTHENTICATED GRPCError here).

        service_host: 'host:port' (port 443 when absent). The channel uses TLS, trusting the system's CAs
        or ``root_certificates`` (PEM bytes or a PEM file path); ``insecure=True`` allows plaintext.
        """
        address = parse_service_host(service_host)
        channel = open_channel(address, channel_credentials(insecure, root_certificates))
        connection = Connection(channel, api_key_id, api_key)
        try:
            await connection.access_token()
        except BaseException:
            await channel.close()
            raise
        return cls(connection)

    async def close(self) -> None:
        await self._connection.close()

    async def __aenter__(self) -> "CloudClient":
        return self

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.close()
