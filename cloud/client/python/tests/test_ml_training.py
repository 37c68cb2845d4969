"""ML training operations (SPEC "ML training operations"), on a live cloud whose trainer really runs."""

import asyncio
import io
import tarfile
import time

import grpc
import pytest

from helpers import CAMERA, raises_grpc, unique
from platform_sdk import ModelType, TrainingJobMetadata, TrainingStatus

FINISHED = {TrainingStatus.TRAINING_STATUS_COMPLETED, TrainingStatus.TRAINING_STATUS_FAILED, TrainingStatus.TRAINING_STATUS_CANCELED}

SCRIPT = b"""
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--model_output_directory")
parser.add_argument("--dataset_file")
parser.add_argument("--greeting")
args, _ = parser.parse_known_args()
with open(args.dataset_file) as f:
    lines = f.read().splitlines()
with open(os.path.join(args.model_output_directory, "model.txt"), "w") as f:
    f.write("weights for %d images" % len(lines))
print("trained", args.greeting)
"""


TICKER = b"""
import argparse, os, time
parser = argparse.ArgumentParser()
parser.add_argument("--model_output_directory")
args, _ = parser.parse_known_args()
print("history line")
for i in range(1, 7):
    time.sleep(0.4)
    print("tick %d" % i)
with open(os.path.join(args.model_output_directory, "model.txt"), "w") as f:
    f.write("ticked")
"""


def script_package(source: bytes = SCRIPT) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("trainer/train.py")
        info.size = len(source)
        tar.addfile(info, io.BytesIO(source))
    return out.getvalue()


async def wait_until_finished(ml, job_id: str) -> TrainingJobMetadata:
    deadline = time.monotonic() + 120  # a bound for a stuck job, not a speed requirement
    while True:
        job = await ml.get_training_job(job_id)
        if job.status in FINISHED or time.monotonic() > deadline:
            return job
        await asyncio.sleep(0.2)


async def dataset_with_images(tenancy, owner, n=2):
    data = owner.data_client
    dataset_id = await data.create_dataset(unique("train"), tenancy.org_a)
    ids = [
        await data.binary_data_capture_upload(b"\x89PNG-not-really-%d" % i, tenancy.part_a, CAMERA, "cam", "GetImages", ".png", tags=["red"])
        for i in range(n)
    ]
    await data.add_binary_data_to_dataset_by_ids(ids, dataset_id)
    return dataset_id


async def test_submit_get_list_cancel_and_delete_a_training_job(tenancy, owner):
    ml = owner.ml_training_client
    dataset_id = await dataset_with_images(tenancy, owner)
    model = unique("colours")
    job_id = await ml.submit_training_job(
        tenancy.org_a, dataset_id, model, "v1", ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION, ["red", "green"],
        arguments={"epochs": "1"},
    )
    assert isinstance(job_id, str) and job_id
    job = await ml.get_training_job(job_id)
    assert isinstance(job, TrainingJobMetadata)
    assert (job.id, job.dataset_id, job.organization_id, job.model_name, job.model_version) == (job_id, dataset_id, tenancy.org_a, model, "v1")
    assert job.model_type == ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION
    assert job.tags == ["red", "green"] and job.arguments == {"epochs": "1"} and not job.is_custom_job
    assert job.created_on is not None
    assert job_id in {j.id for j in await ml.list_training_jobs(tenancy.org_a)}
    # model_version must be unique among the versions used for the model
    with raises_grpc(grpc.StatusCode.ALREADY_EXISTS):
        await ml.submit_training_job(tenancy.org_a, dataset_id, model, "v1", ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION, ["red", "green"])

    await ml.cancel_training_job(job_id)
    job = await wait_until_finished(ml, job_id)
    assert job.status == TrainingStatus.TRAINING_STATUS_CANCELED
    canceled = await ml.list_training_jobs(tenancy.org_a, TrainingStatus.TRAINING_STATUS_CANCELED)
    assert job_id in {j.id for j in canceled}
    assert all(j.status == TrainingStatus.TRAINING_STATUS_CANCELED for j in canceled)

    await ml.delete_completed_training_job(job_id)
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await ml.get_training_job(job_id)


async def test_cancel_of_an_unknown_job_is_a_grpc_error(owner):
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await owner.ml_training_client.cancel_training_job("no-such-job")


async def test_training_needs_an_organization_owner_key(tenancy, clients):
    operator = await clients.get("operator_a")
    with raises_grpc(grpc.StatusCode.PERMISSION_DENIED):
        await operator.ml_training_client.list_training_jobs(tenancy.org_a)


async def test_custom_training_job_runs_a_registry_script_and_stores_its_model(tenancy, owner):
    ml = owner.ml_training_client
    dataset_id = await dataset_with_images(tenancy, owner, n=3)
    item = unique("acme:trainer")
    script = await ml.upload_training_script(tenancy.org_a, item, "1.0.0", "trainer/train.py", script_package(), description="test")
    assert (script.registry_item_id, script.version, script.entrypoint, script.description) == (item, "1.0.0", "trainer/train.py", "test")
    assert [s.version for s in await ml.list_training_scripts(tenancy.org_a, item)] == ["1.0.0"]

    model = unique("custom")
    job_id = await ml.submit_custom_training_job(tenancy.org_a, dataset_id, item, "1.0.0", model, "2024-05-01", arguments={"greeting": "hello"})
    job = await wait_until_finished(ml, job_id)
    assert job.status == TrainingStatus.TRAINING_STATUS_COMPLETED, job.error_status
    assert job.is_custom_job and (job.registry_item_id, job.registry_item_version) == (item, "1.0.0")
    assert job.synced_model_id and job.training_started and job.training_ended

    logs, _ = await ml.get_training_job_logs(job_id)
    assert any(entry.message == "trained hello" for entry in logs)
    (artefact,) = await ml.list_model_artefacts(tenancy.org_a, model)
    assert (artefact.id, artefact.model_version, artefact.training_job_id) == (job.synced_model_id, "2024-05-01", job_id)
    assert [f.name for f in artefact.files] == ["model.txt"]
    assert await ml.download_model_artefact(tenancy.org_a, model, "2024-05-01", "model.txt") == b"weights for 3 images"

    completed = await ml.list_training_jobs(tenancy.org_a, TrainingStatus.TRAINING_STATUS_COMPLETED)
    assert job_id in {j.id for j in completed}
    await ml.delete_completed_training_job(job_id)
    assert job_id not in {j.id for j in await ml.list_training_jobs(tenancy.org_a)}
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await ml.cancel_training_job(job_id)

    await ml.delete_training_script(tenancy.org_a, item, "1.0.0")
    assert await ml.list_training_scripts(tenancy.org_a, item) == []
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await ml.delete_training_script(tenancy.org_a, item, "1.0.0")


async def test_follow_training_job_logs_gives_the_history_then_each_new_entry_once_and_ends_with_the_job(tenancy, owner):
    ml = owner.ml_training_client
    dataset_id = await dataset_with_images(tenancy, owner, n=1)
    item = unique("acme:ticker")
    await ml.upload_training_script(tenancy.org_a, item, "1.0.0", "trainer/train.py", script_package(TICKER))
    job_id = await ml.submit_custom_training_job(tenancy.org_a, dataset_id, item, "1.0.0", unique("ticks"), "v1")
    # Opened once the job has a history.
    deadline = time.monotonic() + 120  # a bound for a stuck job, not a speed requirement
    while "history line" not in [e.message for e in (await ml.get_training_job_logs_page(job_id)).logs] and time.monotonic() < deadline:
        await asyncio.sleep(0.1)

    messages = [entry.message async for entry in ml.follow_training_job_logs(job_id, poll_seconds=0.2)]
    job = await ml.get_training_job(job_id)
    assert job.status == TrainingStatus.TRAINING_STATUS_COMPLETED, job.error_status
    assert [m for m in messages if m.startswith("tick ")] == ["tick %d" % i for i in range(1, 7)], messages
    assert messages.index("history line") < messages.index("tick 1")
    # The follower read the whole log: the same entries, in the same order, as paging through it now.
    everything, token = [], ""
    while True:
        page = await ml.get_training_job_logs_page(job_id, token)
        everything.extend(e.message for e in page.logs)
        if not page.next_page_token:
            break
        token = page.next_page_token
    assert messages == everything
    # The resume token of the last page gives nothing more (and no next page) once the job has ended.
    after = await ml.get_training_job_logs_page(job_id, page.resume_page_token)
    assert (after.logs, after.next_page_token) == ([], "")
    assert after.resume_page_token


async def test_follow_training_job_logs_refuses_a_poll_interval_that_is_not_positive(owner):
    with pytest.raises(ValueError, match="poll_seconds must be more than 0, got 0"):
        async for _ in owner.ml_training_client.follow_training_job_logs("any", poll_seconds=0):
            pass
