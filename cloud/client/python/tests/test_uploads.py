"""Upload operations (SPEC "Upload operations") and their errors."""

import os

import grpc
import pytest

from helpers import CAMERA, SENSOR, T0, pairs, raises_grpc, unique
from platform_sdk import Filter, Order


async def test_tabular_upload_of_n_items_makes_n_points_sharing_the_metadata(tenancy, owner):
    data = owner.data_client
    name = unique("thermo")
    items = [{"readings": {"temperature": 20.5 + i, "n": i}} for i in range(3)]
    file_id = await data.tabular_data_capture_upload(
        items, tenancy.part_a, SENSOR, name, "Readings", pairs(3), method_parameters={"unit": "C"}, tags=["lab"]
    )
    assert isinstance(file_id, str) and file_id
    points, count, last = await data.tabular_data_by_filter(Filter(component_name=name), sort_order=Order.ORDER_ASCENDING)
    assert count == 3 and isinstance(last, str)
    assert [p.data for p in points] == items
    assert [(p.time_requested, p.time_received) for p in points] == pairs(3)
    for p in points:
        assert p.metadata.component_name == name
        assert p.metadata.component_type == SENSOR
        assert p.metadata.method_name == "Readings"
        assert p.metadata.part_id == tenancy.part_a
        assert p.metadata.organization_id == tenancy.org_a
        assert p.metadata.tags == ["lab"]
        assert p.metadata.method_parameters == {"unit": "C"}


async def test_tabular_upload_with_a_different_number_of_timestamp_pairs_is_a_value_error(tenancy, owner):
    data = owner.data_client
    name = unique("thermo")
    items = [{"readings": {"t": 1}}, {"readings": {"t": 2}}, {"readings": {"t": 3}}]
    with pytest.raises(ValueError, match="data_request_times has 2 timestamp pairs but tabular_data has 3 items"):
        await data.tabular_data_capture_upload(items, tenancy.part_a, SENSOR, name, "Readings", pairs(2))
    with pytest.raises(ValueError, match="data_request_times"):
        await data.tabular_data_capture_upload(items[:1], tenancy.part_a, SENSOR, name, "Readings", [(T0,)])
    # Nothing reached the cloud.
    assert (await data.tabular_data_by_filter(Filter(component_name=name), count_only=True))[1] == 0


async def test_binary_data_capture_upload_returns_an_id_string_and_stores_content_and_times(tenancy, owner):
    data = owner.data_client
    name = unique("cam")
    content = b"\xff\xd8\xff\xe0fake-jpeg" * 10
    binary_id = await data.binary_data_capture_upload(
        content, tenancy.part_a, CAMERA, name, "GetImages", ".jpg", tags=["raw"], data_request_times=pairs(1)[0]
    )
    assert isinstance(binary_id, str) and binary_id
    (record,) = await data.binary_data_by_ids([binary_id])
    assert record.binary == content
    assert record.metadata.binary_data_id == binary_id
    assert record.metadata.capture_metadata.mime_type == "image/jpeg"  # .jpg appears as an image
    assert record.metadata.capture_metadata.tags == ["raw"]
    assert record.metadata.file_ext == ".jpg"
    assert (record.metadata.time_requested, record.metadata.time_received) == pairs(1)[0]


async def test_file_upload_streams_the_file_with_its_name_and_extension(tenancy, owner):
    data = owner.data_client
    content = os.urandom(200_000)  # more than three 64 KiB chunks
    name = unique("log")
    binary_id = await data.file_upload(
        tenancy.part_a, content, component_name=name, file_name="run.log", file_extension=".log", tags=["logs"]
    )
    (record,) = await data.binary_data_by_ids([binary_id])
    assert record.binary == content
    assert record.metadata.file_name == "run.log"
    assert record.metadata.file_ext == ".log"
    assert record.metadata.file_size_bytes == len(content)
    assert record.metadata.capture_metadata.component_name == name
    assert not record.metadata.capture_metadata.mime_type.startswith("image/")


async def test_file_upload_defaults_are_empty(tenancy, owner):
    binary_id = await owner.data_client.file_upload(tenancy.part_a, b"hello")
    (record,) = await owner.data_client.binary_data_by_ids([binary_id])
    assert (record.binary, record.metadata.file_name, record.metadata.file_ext) == (b"hello", "", "")


async def test_file_upload_from_path_uses_the_files_name(tenancy, owner, tmp_path):
    path = tmp_path / "capture.png"
    content = b"\x89PNG\r\n\x1a\n" + os.urandom(70_000)
    path.write_bytes(content)
    binary_id = await owner.data_client.file_upload_from_path(str(path), tenancy.part_a, component_name="cam", tags=["f"])
    (record,) = await owner.data_client.binary_data_by_ids([binary_id])
    assert record.binary == content
    assert (record.metadata.file_name, record.metadata.file_ext) == ("capture.png", ".png")
    assert record.metadata.capture_metadata.mime_type == "image/png"


async def test_file_upload_from_a_missing_path_is_file_not_found(tenancy, owner, tmp_path):
    missing = str(tmp_path / "nope.bin")
    with pytest.raises(FileNotFoundError) as err:
        await owner.data_client.file_upload_from_path(missing, tenancy.part_a)
    assert err.value.filename == missing


async def test_streaming_upload_of_a_point_cloud(tenancy, owner):
    content = b"# .PCD v0.7\n" + os.urandom(150_000)
    name = unique("lidar")
    binary_id = await owner.data_client.streaming_data_capture_upload(
        content, tenancy.part_a, ".pcd", component_type="rdk:component:camera", component_name=name,
        method_name="NextPointCloud", data_request_times=pairs(1)[0], tags=["scan"],
    )
    (record,) = await owner.data_client.binary_data_by_ids([binary_id])
    assert record.binary == content
    assert record.metadata.capture_metadata.mime_type == "pointcloud/pcd"
    assert record.metadata.capture_metadata.component_name == name
    assert record.metadata.time_requested == pairs(1)[0][0]


async def test_uploads_with_an_invalid_part_id_are_grpc_errors(owner):
    data = owner.data_client
    with raises_grpc(grpc.StatusCode.NOT_FOUND, match="part"):
        await data.tabular_data_capture_upload([{"readings": {}}], "no-such-part", SENSOR, "s", "Readings", pairs(1))
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await data.binary_data_capture_upload(b"x", "no-such-part", CAMERA, "c", "GetImages", ".jpg")
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await data.file_upload("no-such-part", b"x")
    with raises_grpc(grpc.StatusCode.NOT_FOUND):
        await data.streaming_data_capture_upload(b"x", "no-such-part", ".bin")
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT, match="part_id"):
        await data.file_upload("", b"x")
