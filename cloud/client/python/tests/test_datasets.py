"""Dataset operations (SPEC "Dataset operations")."""

import grpc

from helpers import CAMERA, raises_grpc, unique
from platform_sdk import Dataset, Filter


async def test_dataset_lifecycle_and_membership_tag(tenancy, owner):
    data = owner.data_client
    name = unique("cats")
    dataset_id = await data.create_dataset(name, tenancy.org_a)
    assert isinstance(dataset_id, str) and dataset_id
    listed = {d.id: d for d in await data.list_datasets_by_organization_id(tenancy.org_a)}
    assert isinstance(listed[dataset_id], Dataset)
    assert (listed[dataset_id].name, listed[dataset_id].organization_id) == (name, tenancy.org_a)
    assert listed[dataset_id].time_created is not None

    new_name = unique("felines")
    await data.rename_dataset(dataset_id, new_name)
    (renamed,) = await data.list_datasets_by_ids([dataset_id])
    assert renamed.name == new_name

    component = unique("cam")
    images = [
        await data.binary_data_capture_upload(b"img%d" % i, tenancy.part_a, CAMERA, component, "GetImages", ".jpg")
        for i in range(3)
    ]
    await data.add_binary_data_to_dataset_by_ids(images[:2], dataset_id)
    records = {r.metadata.binary_data_id: r for r in await data.binary_data_by_ids(images)}
    tag = f"PLATFORM_DATASET_{dataset_id}"
    for binary_id in images[:2]:
        assert tag in records[binary_id].metadata.capture_metadata.tags
        assert records[binary_id].metadata.dataset_ids == [dataset_id]
    assert tag not in records[images[2]].metadata.capture_metadata.tags
    assert (await data.binary_data_by_filter(Filter(dataset_id=dataset_id), count_only=True))[1] == 2

    await data.remove_binary_data_from_dataset_by_ids([images[0]], dataset_id)
    (record,) = await data.binary_data_by_ids([images[0]])
    assert tag not in record.metadata.capture_metadata.tags and record.metadata.dataset_ids == []

    other = await data.create_dataset(unique("dogs"), tenancy.org_a)
    await data.add_binary_data_to_dataset_by_ids([images[2]], other)
    merged = await data.merge_datasets([dataset_id, other], unique("pets"), tenancy.org_a)
    assert (await data.binary_data_by_filter(Filter(dataset_id=merged), count_only=True))[1] == 2

    await data.delete_dataset(dataset_id)
    assert dataset_id not in {d.id for d in await data.list_datasets_by_organization_id(tenancy.org_a)}
    with raises_grpc(grpc.StatusCode.NOT_FOUND, match=dataset_id):
        await data.list_datasets_by_ids([dataset_id])


async def test_a_taken_dataset_name_is_a_grpc_error(tenancy, owner):
    name = unique("dup")
    await owner.data_client.create_dataset(name, tenancy.org_a)
    with raises_grpc(grpc.StatusCode.ALREADY_EXISTS):
        await owner.data_client.create_dataset(name, tenancy.org_a)
