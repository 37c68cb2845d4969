"""One live platform-cloud for the session, two organizations with keys of several roles and scopes, and
one event loop on which every ``async def test_...`` runs (grpc.aio channels belong to the loop that
made them, so session-wide clients need a session-wide loop)."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Dict

import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
sys.path.insert(0, os.path.dirname(__file__))

from cloud_process import Cloud, self_signed_certificate, start_cloud  # noqa: E402
from platform_sdk import CloudClient  # noqa: E402

LOOP = asyncio.new_event_loop()


def run(coro: Any) -> Any:
    return LOOP.run_until_complete(coro)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
        run(pyfuncitem.obj(**args))
        return True
    return None


@pytest.fixture(scope="session", autouse=True)
def event_loop() -> Any:
    # Set up first, so torn down last: after the clients and the cloud.
    yield LOOP
    LOOP.close()


@dataclass
class Tenancy:
    cloud: Cloud
    org_a: str
    org_b: str
    loc_a: str
    part_a: str
    part_a2: str
    part_b: str
    keys: Dict[str, Dict[str, str]]


@pytest.fixture(scope="session")
def tenancy() -> Any:
    cloud = start_cloud()
    try:
        org_a = cloud.admin("org.create", name="Org A")["id"]
        org_b = cloud.admin("org.create", name="Org B")["id"]
        loc_a = cloud.admin("location.create", org=org_a, name="Lab")["id"]
        machine_a = cloud.admin("machine.create", org=org_a, name="rover", location=loc_a)
        machine_a2 = cloud.admin("machine.create", org=org_a, name="arm", location=loc_a)
        machine_b = cloud.admin("machine.create", org=org_b, name="other")
        keys = {
            "owner_a": cloud.admin("key.create", org=org_a, role="owner"),
            "operator_a": cloud.admin("key.create", org=org_a, role="operator"),
            "owner_loc_a": cloud.admin("key.create", org=org_a, location=loc_a, role="owner"),
            "owner_b": cloud.admin("key.create", org=org_b, role="owner"),
        }
        yield Tenancy(cloud, org_a, org_b, loc_a, machine_a["part_id"], machine_a2["part_id"], machine_b["part_id"], keys)
    finally:
        cloud.stop()


@dataclass
class TlsCloud:
    cloud: Cloud
    cert_file: str
    org: str
    part: str
    key: Dict[str, str]


@pytest.fixture(scope="session")
def tls_cloud() -> Any:
    """A second cloud, started with --tls-cert/--tls-key (a self-signed certificate for localhost), with one
    organization, a machine and an owner key. Started only by the tests that ask for it."""
    cert_dir = tempfile.mkdtemp(prefix="pysdk-tls-")
    cloud = None
    try:
        cert, key = self_signed_certificate(cert_dir)
        cloud = start_cloud(tls=(cert, key))
        org = cloud.admin("org.create", name="TLS Org")["id"]
        part = cloud.admin("machine.create", org=org, name="rover")["part_id"]
        yield TlsCloud(cloud, cert, org, part, cloud.admin("key.create", org=org, role="owner"))
    finally:
        if cloud is not None:
            cloud.stop()
        shutil.rmtree(cert_dir, ignore_errors=True)


class Clients:
    """One client per key, made on first use (each authenticates once; the server's scrypt is slow on purpose)."""

    def __init__(self, tenancy: Tenancy) -> None:
        self._tenancy = tenancy
        self._clients: Dict[str, CloudClient] = {}

    async def get(self, key_name: str) -> CloudClient:
        if key_name not in self._clients:
            key = self._tenancy.keys[key_name]
            self._clients[key_name] = await CloudClient.create(
                service_host=self._tenancy.cloud.address, api_key_id=key["id"], api_key=key["key"], insecure=True
            )
        return self._clients[key_name]

    def close(self) -> None:
        for client in self._clients.values():
            run(client.close())


@pytest.fixture(scope="session")
def clients(tenancy: Tenancy) -> Any:
    made = Clients(tenancy)
    yield made
    made.close()


@pytest.fixture(scope="session")
def owner(clients: Clients) -> CloudClient:
    return run(clients.get("owner_a"))
