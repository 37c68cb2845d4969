"""CloudClient.create: authentication, TLS unless insecure=True, service host forms, context manager."""

import grpc
import pytest

from platform_sdk import CloudClient, GRPCError
from platform_sdk._proto import auth_pb2, auth_pb2_grpc, dataset_pb2, dataset_pb2_grpc
from platform_sdk.connection import channel_credentials, parse_service_host


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


class _Auth(auth_pb2_grpc.AuthServiceServicer):
    async def Authenticate(self, request, context):
        assert (request.entity, request.credentials.type, request.credentials.payload) == ("key-id", "api-key", "secret")
        return auth_pb2.AuthenticateResponse(access_token="token-1", expires_in_seconds=3600)


class _Datasets(dataset_pb2_grpc.DatasetServiceServicer):
    async def ListDatasetsByOrganizationID(self, request, context):
        if ("authorization", "Bearer token-1") not in tuple(context.invocation_metadata()):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "no token")
        return dataset_pb2.ListDatasetsByOrganizationIDResponse(
            datasets=[dataset_pb2.Dataset(id="d1", name="over tls", organization_id=request.organization_id)]
        )


async def test_tls_with_a_private_ca_through_root_certificates(tmp_path):
    # A stand-in TLS server (grpc.aio with a self-signed certificate) until platform-cloud serves TLS itself.
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )
    server = grpc.aio.server()
    auth_pb2_grpc.add_AuthServiceServicer_to_server(_Auth(), server)
    dataset_pb2_grpc.add_DatasetServiceServicer_to_server(_Datasets(), server)
    port = server.add_secure_port("127.0.0.1:0", grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())]))
    await server.start()
    try:
        async with await CloudClient.create(
            service_host=f"localhost:{port}", api_key_id="key-id", api_key="secret", root_certificates=str(cert)
        ) as client:
            (dataset,) = await client.data_client.list_datasets_by_organization_id("org-1")
            assert (dataset.name, dataset.organization_id) == ("over tls", "org-1")
        # The same certificate is not trusted by the system's CAs.
        with pytest.raises(GRPCError) as err:
            await CloudClient.create(service_host=f"localhost:{port}", api_key_id="key-id", api_key="secret")
        assert err.value.status == grpc.StatusCode.UNAVAILABLE
        # And a plaintext client cannot talk to it.
        with pytest.raises(GRPCError):
            await CloudClient.create(service_host=f"localhost:{port}", api_key_id="key-id", api_key="secret", insecure=True)
    finally:
        await server.stop(None)
