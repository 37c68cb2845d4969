"""Delete and tag operations (SPEC "Delete and tag operations") and their errors. Deletes of whole
organizations run in org B, which no other test reads."""

import grpc

from helpers import CAMERA, SENSOR, pairs, raises_grpc, unique
from platform_sdk import Filter


async def images(tenancy, client, name, n, part=None, tags=None):
    return [
        await client.data_client.binary_data_capture_upload(
            f"image-{i}".encode(), part or tenancy.part_a, CAMERA, name, "GetImages", ".jpg", tags=tags
        )
        for i in range(n)
    ]


async def tags_of(client, binary_id):
    (record,) = await client.data_client.binary_data_by_ids([binary_id])
    return sorted(record.metadata.capture_metadata.tags)


async def test_delete_tabular_data_older_than_days_and_zero_deletes_all(tenancy, clients):
    owner_b = await clients.get("owner_b")
    data = owner_b.data_client
    name = unique("old")
    from datetime import datetime, timedelta, timezone

    long_ago = datetime.now(timezone.utc) - timedelta(days=40)
    await data.tabular_data_capture_upload([{"readings": {"v": 1}}] * 2, tenancy.part_b, SENSOR, name, "Readings", pairs(2, long_ago))
    await data.tabular_data_capture_upload([{"readings": {"v": 2}}] * 3, tenancy.part_b, SENSOR, name, "Readings", pairs(3))
    assert await data.delete_tabular_data(tenancy.org_b, 30) == 2
    assert (await data.tabular_data_by_filter(Filter(component_name=name), count_only=True))[1] == 3
    assert await data.delete_tabular_data(tenancy.org_b, 0) == 3
    assert (await data.tabular_data_by_filter(Filter(component_name=name), count_only=True))[1] == 0


async def test_delete_binary_data_by_filter_needs_an_organization(tenancy, clients):
    owner_b = await clients.get("owner_b")
    name = unique("del")
    await images(tenancy, owner_b, name, 3, part=tenancy.part_b)
    other = unique("keep")
    await images(tenancy, owner_b, other, 1, part=tenancy.part_b)
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT, match="organization_ids"):
        await owner_b.data_client.delete_binary_data_by_filter(Filter(component_name=name))
    assert await owner_b.data_client.delete_binary_data_by_filter(Filter(organization_ids=[tenancy.org_b], component_name=name)) == 3
    assert (await owner_b.data_client.binary_data_by_filter(Filter(component_name=name), count_only=True))[1] == 0
    assert (await owner_b.data_client.binary_data_by_filter(Filter(component_name=other), count_only=True))[1] == 1


async def test_delete_binary_data_by_ids(tenancy, owner):
    ids = await images(tenancy, owner, unique("del"), 3)
    assert await owner.data_client.delete_binary_data_by_ids(ids[:2]) == 2
    assert [r.metadata.binary_data_id for r in await owner.data_client.binary_data_by_ids(ids[2:])] == [ids[2]]
    with raises_grpc(grpc.StatusCode.NOT_FOUND, match=ids[0]):
        await owner.data_client.binary_data_by_ids(ids[:1])
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT):
        await owner.data_client.delete_binary_data_by_ids([])


async def test_tags_by_ids_and_by_filter(tenancy, owner):
    name = unique("tag")
    a, b = await images(tenancy, owner, name, 2)
    await owner.data_client.add_tags_to_binary_data_by_ids(["cat", "cute"], [a])
    assert await tags_of(owner, a) == ["cat", "cute"] and await tags_of(owner, b) == []
    await owner.data_client.add_tags_to_binary_data_by_filter(["batch"], Filter(component_name=name))
    assert await tags_of(owner, a) == ["batch", "cat", "cute"] and await tags_of(owner, b) == ["batch"]
    assert await owner.data_client.remove_tags_from_binary_data_by_ids(["cute"], [a, b]) == 1
    assert await tags_of(owner, a) == ["batch", "cat"]
    assert await owner.data_client.remove_tags_from_binary_data_by_filter(["batch"], Filter(component_name=name)) == 2
    assert await tags_of(owner, a) == ["cat"] and await tags_of(owner, b) == []


async def test_tagging_with_no_ids_or_no_tags_is_a_grpc_error(tenancy, owner):
    (image,) = await images(tenancy, owner, unique("tag"), 1)
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT):
        await owner.data_client.add_tags_to_binary_data_by_ids(["x"], [])
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT):
        await owner.data_client.add_tags_to_binary_data_by_ids([], [image])


async def test_tagging_needs_an_owner(tenancy, clients, owner):
    (image,) = await images(tenancy, owner, unique("tag"), 1)
    with raises_grpc(grpc.StatusCode.PERMISSION_DENIED):
        await (await clients.get("operator_a")).data_client.add_tags_to_binary_data_by_ids(["x"], [image])


async def test_bounding_boxes_are_added_removed_and_checked(tenancy, owner):
    (image,) = await images(tenancy, owner, unique("bbox"), 1)
    bbox_id = await owner.data_client.add_bounding_box_to_image_by_id(image, "cat", 0.1, 0.2, 0.5, 0.6)
    assert isinstance(bbox_id, str) and bbox_id
    (record,) = await owner.data_client.binary_data_by_ids([image])
    (box,) = record.metadata.annotations.bboxes
    assert (box.id, box.label) == (bbox_id, "cat")
    assert (box.x_min_normalized, box.y_min_normalized, box.x_max_normalized, box.y_max_normalized) == (0.1, 0.2, 0.5, 0.6)
    assert box.confidence is None
    for coords in [(-0.1, 0.2, 0.5, 0.6), (0.1, 0.2, 1.5, 0.6), (0.1, 1.01, 0.5, 0.6), (0.1, 0.2, 0.5, -2)]:
        with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT):
            await owner.data_client.add_bounding_box_to_image_by_id(image, "cat", *coords)
    await owner.data_client.remove_bounding_box_from_image_by_id(bbox_id, image)
    (record,) = await owner.data_client.binary_data_by_ids([image])
    assert record.metadata.annotations.bboxes == []


async def test_delete_older_than_days_must_be_a_non_negative_integer(tenancy, owner):
    import pytest

    for bad in (-1, 1.5, "30", True):
        with pytest.raises(ValueError, match="delete_older_than_days must be a non-negative integer"):
            await owner.data_client.delete_tabular_data(tenancy.org_a, bad)
