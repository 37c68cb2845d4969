"""CloudClient.create: authentication, TLS unless insecure=True, service host forms, context manager."""

import grpc
import pytest

from platform_sdk import CloudClient, GRPCError
from platform_sdk.connection import channel_credentials, parse_service_host

from helpers import SENSOR, pairs


def test_service_host_forms():
    assert parse_service_host("127.0.0.1:8081") == "127.0.0.1:8081"
    assert parse_service_host("https://cloud.example.com") == "cloud.example.com:443"
    assert parse_service_host("http://localhost:9000/") == "localhost:9000"
    with pytest.raises(ValueError, match="service_host"):
        parse_service_host("cloud.example.com/some/path")


def test_channel_is_plaintext_only_with_insecure(tmp_path):
    assert channel_credentials(insecure=True) is None
    assert isinstance(channel_credentials(insecure=False), grpc.ChannelCredentials)
    pem = tmp_path / "ca.pem"
    pem.write_bytes(b"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    assert isinstance(channel_credentials(insecure=False, root_certificates=str(pem)), grpc.ChannelCredentials)
    with pytest.raises(FileNotFoundError):
        channel_credentials(insecure=False, root_certificates=str(tmp_path / "missing.pem"))
    with pytest.raises(ValueError, match="root_certificates"):
        channel_credentials(insecure=True, root_certificates=b"pem")


async def test_without_insecure_the_client_speaks_tls(tenancy):
    # The test cloud is plaintext: a TLS handshake with it fails, which shows the client did not fall back.
    key = tenancy.keys["owner_a"]
    with pytest.raises(GRPCError) as err:
        await CloudClient.create(service_host=tenancy.cloud.address, api_key_id=key["id"], api_key=key["key"])
    assert err.value.status == grpc.StatusCode.UNAVAILABLE


async def test_a_wrong_api_key_is_unauthenticated(tenancy):
    key = tenancy.keys["owner_a"]
    with pytest.raises(GRPCError) as err:
        await CloudClient.create(service_host=tenancy.cloud.address, api_key_id=key["id"], api_key="not-the-key", insecure=True)
    assert err.value.status == grpc.StatusCode.UNAUTHENTICATED
    assert err.value.code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    assert err.value.message


async def test_async_context_manager_closes_the_channel(tenancy):
    key = tenancy.keys["owner_a"]
    async with await CloudClient.create(
        service_host=tenancy.cloud.address, api_key_id=key["id"], api_key=key["key"], insecure=True
    ) as client:
        assert await client.data_client.list_datasets_by_organization_id(tenancy.org_a) is not None
    with pytest.raises(grpc.aio.UsageError, match="closed"):
        await client.data_client.list_datasets_by_organization_id(tenancy.org_a)


async def test_tls_cloud_with_a_self_signed_certificate_through_root_certificates(tls_cloud):
    # platform-cloud serve --tls-cert/--tls-key; the client trusts the self-signed certificate given as root.
    port = tls_cloud.cloud.address.rsplit(":", 1)[1]
    key = tls_cloud.key
    async with await CloudClient.create(
        service_host=f"https://localhost:{port}", api_key_id=key["id"], api_key=key["key"], root_certificates=tls_cloud.cert_file
    ) as client:
        items = [{"readings": {"temperature": 20 + i}} for i in range(3)]
        await client.data_client.tabular_data_capture_upload(items, tls_cloud.part, SENSOR, "thermo", "Readings", pairs(3))
        rows = await client.data_client.tabular_data_by_sql(
            tls_cloud.org, "SELECT count(*) AS n, avg(data.readings.temperature::DOUBLE) AS avg FROM readings"
        )
        assert rows == [{"n": 3, "avg": 21.0}]
    # The same certificate is not trusted by the system's CAs.
    with pytest.raises(GRPCError) as err:
        await CloudClient.create(service_host=f"localhost:{port}", api_key_id=key["id"], api_key=key["key"])
    assert err.value.status == grpc.StatusCode.UNAVAILABLE
    # And a plaintext client cannot talk to it.
    with pytest.raises(GRPCError) as err:
        await CloudClient.create(service_host=f"localhost:{port}", api_key_id=key["id"], api_key=key["key"], insecure=True)
    assert err.value.status == grpc.StatusCode.UNAVAILABLE
