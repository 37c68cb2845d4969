"""Retrieval and query operations (SPEC "Retrieval and query operations")."""

import json
from datetime import datetime, timedelta, timezone

import bson
import grpc
import pytest
from bson.decimal128 import Decimal128
from bson.int64 import Int64

from helpers import CAMERA, SENSOR, T0, pairs, raises_grpc, unique
from platform_sdk import BinaryData, Filter, Order, TabularData, TagsFilter, TagsFilterType
from platform_sdk.documents import decode_documents, encode_stages


async def upload_points(tenancy, owner, name, n, tags=None, start=T0):
    items = [{"readings": {"i": i, "temperature": 20 + i / 10}} for i in range(n)]
    await owner.data_client.tabular_data_capture_upload(items, tenancy.part_a, SENSOR, name, "Readings", pairs(n, start), tags=tags)
    return items


async def test_tabular_data_by_filter_pages_with_last_until_an_empty_page(tenancy, owner, tmp_path):
    name = unique("paged")
    items = await upload_points(tenancy, owner, name, 7)
    seen, last, pages = [], None, 0
    while True:
        data, count, last = await owner.data_client.tabular_data_by_filter(
            Filter(component_name=name), limit=3, sort_order=Order.ORDER_ASCENDING, last=last
        )
        if not data:
            break
        pages += 1
        assert count == len(data) <= 3
        assert all(isinstance(p, TabularData) for p in data)
        seen.extend(p.data for p in data)
    assert pages == 3 and seen == items
    descending, _, _ = await owner.data_client.tabular_data_by_filter(Filter(component_name=name), sort_order=Order.ORDER_DESCENDING)
    assert [p.data for p in descending] == items[::-1]
    # count_only: the total, no data
    data, count, _ = await owner.data_client.tabular_data_by_filter(Filter(component_name=name), count_only=True)
    assert (data, count) == ([], 7)


async def test_tabular_data_by_filter_defaults_to_pages_of_50_and_filters_by_time(tenancy, owner):
    name = unique("many")
    await upload_points(tenancy, owner, name, 60)
    data, count, _ = await owner.data_client.tabular_data_by_filter(Filter(component_name=name))
    assert len(data) == count == 50
    window = Filter(component_name=name, start_time=T0 + timedelta(seconds=10), end_time=T0 + timedelta(seconds=20))
    data, _, _ = await owner.data_client.tabular_data_by_filter(window, sort_order=Order.ORDER_ASCENDING)
    assert [p.data["readings"]["i"] for p in data] == list(range(10, 20))  # start inclusive, end exclusive


async def test_tabular_data_by_filter_dest_writes_the_page_as_json(tenancy, owner, tmp_path):
    name = unique("dest")
    items = await upload_points(tenancy, owner, name, 2)
    dest = tmp_path / "page.json"
    data, count, last = await owner.data_client.tabular_data_by_filter(
        Filter(component_name=name), sort_order=Order.ORDER_ASCENDING, dest=str(dest)
    )
    written = json.loads(dest.read_text())
    assert written["count"] == count == 2 and written["last"] == last
    assert [p["data"] for p in written["data"]] == items
    assert written["data"][0]["metadata"]["component_name"] == name
    assert datetime.fromisoformat(written["data"][0]["time_requested"]) == data[0].time_requested


async def test_tabular_data_by_sql_decodes_documents_without_loss(tenancy, owner):
    name = unique("sql")
    await upload_points(tenancy, owner, name, 3)
    rows = await owner.data_client.tabular_data_by_sql(
        tenancy.org_a,
        f"SELECT component_name, data.readings.i::INTEGER AS i, time_requested, data, "
        f"9007199254740993::BIGINT AS big, 2.5::DOUBLE AS f FROM readings "
        f"WHERE component_name = '{name}' ORDER BY time_requested",
    )
    assert [r["i"] for r in rows] == [0, 1, 2]
    assert rows[0]["component_name"] == name
    assert rows[0]["time_requested"] == T0  # an aware datetime, equal to what was uploaded
    assert rows[0]["time_requested"].tzinfo is not None
    assert rows[0]["data"] == {"readings": {"i": 0, "temperature": 20}}
    assert rows[0]["big"] == 9007199254740993 and isinstance(rows[0]["big"], Int64)  # beyond a double: exact
    assert rows[0]["f"] == 2.5


async def test_tabular_data_by_sql_needs_an_organization_level_key(tenancy, clients):
    with raises_grpc(grpc.StatusCode.PERMISSION_DENIED):
        await (await clients.get("owner_loc_a")).data_client.tabular_data_by_sql(tenancy.org_a, "SELECT 1 AS one")
    with raises_grpc(grpc.StatusCode.PERMISSION_DENIED, match="sql_query"):
        await (await clients.get("owner_a")).data_client.tabular_data_by_sql(tenancy.org_a, "DELETE FROM readings")


def test_decoding_keeps_decimal128_int64_and_dates():
    when = datetime(2024, 5, 1, 12, 30, 15, 123000, tzinfo=timezone.utc)
    raw = bson.encode({"d": Decimal128("12345678901234567890.123456789"), "n": Int64(2**62), "i": 7, "t": when})
    (doc,) = decode_documents([raw])
    assert doc["d"] == Decimal128("12345678901234567890.123456789")
    assert doc["n"] == 2**62 and doc["i"] == 7
    assert doc["t"] == when


def test_mql_stages_go_as_structs_when_lossless_else_as_bson():
    structs, binary = encode_stages([{"$match": {"a": 1}}, {"$limit": 5}])
    assert len(structs) == 2 and binary == []
    structs, binary = encode_stages([{"$match": {"t": {"$gte": datetime(2024, 1, 1, tzinfo=timezone.utc)}}}, {"$limit": 5}])
    assert structs == [] and bson.decode(binary[1]) == {"$limit": 5}
    structs, binary = encode_stages([{"$match": {"n": 2**60}}])
    assert structs == [] and bson.decode(binary[0]) == {"$match": {"n": 2**60}}
    with pytest.raises(ValueError, match=r"query\[0\]"):
        encode_stages(["$match"])


async def test_tabular_data_by_mql_runs_a_pipeline(tenancy, owner):
    name = unique("mql")
    await upload_points(tenancy, owner, name, 4)
    docs = await owner.data_client.tabular_data_by_mql(
        tenancy.org_a,
        [
            {"$match": {"component_name": name}},
            {"$group": {"_id": "$component_name", "n": {"$sum": 1}, "max_i": {"$max": "$data.readings.i"}}},
        ],
    )
    assert docs == [{"_id": name, "n": 4, "max_i": 3}]
    # A date in a stage travels as BSON, and dates come back as datetimes.
    since = T0 + timedelta(seconds=2)
    docs = await owner.data_client.tabular_data_by_mql(
        tenancy.org_a,
        [{"$match": {"component_name": name, "time_requested": {"$gte": since}}}, {"$sort": {"time_requested": 1}},
         {"$project": {"_id": 0, "time_requested": 1}}],
    )
    assert [d["time_requested"] for d in docs] == [since, since + timedelta(seconds=1)]
    # Raw BSON stages (deprecated) still work.
    docs = await owner.data_client.tabular_data_by_mql(tenancy.org_a, [bson.encode({"$match": {"component_name": name}}), bson.encode({"$count": "n"})])
    assert docs == [{"n": 4}]


async def test_binary_data_by_filter_pages_and_can_leave_content_out(tenancy, owner, tmp_path):
    name = unique("cam")
    ids = [
        await owner.data_client.binary_data_capture_upload(
            bytes([i]) * 10, tenancy.part_a, CAMERA, name, "GetImages", ".png", data_request_times=pairs(5)[i]
        )
        for i in range(5)
    ]
    seen, last = [], None
    while True:
        data, count, last = await owner.data_client.binary_data_by_filter(
            Filter(component_name=name), limit=2, sort_order=Order.ORDER_ASCENDING, last=last
        )
        if not data:
            break
        assert all(isinstance(d, BinaryData) for d in data)
        seen.extend(data)
    assert [d.metadata.binary_data_id for d in seen] == ids
    assert [d.binary for d in seen] == [bytes([i]) * 10 for i in range(5)]
    dest = tmp_path / "binary.json"
    data, count, _ = await owner.data_client.binary_data_by_filter(
        Filter(component_name=name), include_binary_data=False, dest=str(dest)
    )
    assert count == 5 and all(d.binary == b"" for d in data)
    assert {d["metadata"]["binary_data_id"] for d in json.loads(dest.read_text())["data"]} == set(ids)
    _, total, _ = await owner.data_client.binary_data_by_filter(Filter(component_name=name), count_only=True)
    assert total == 5


async def test_binary_data_by_ids_writes_dest_and_refuses_an_empty_list(tenancy, owner, tmp_path):
    binary_id = await owner.data_client.file_upload(tenancy.part_a, b"\x00\x01payload", file_name="p.bin")
    dest = tmp_path / "ids.json"
    (record,) = await owner.data_client.binary_data_by_ids([binary_id], dest=str(dest))
    (written,) = json.loads(dest.read_text())
    assert written["metadata"]["binary_data_id"] == binary_id
    assert written["binary"] == "AAFwYXlsb2Fk"  # base64 of the content
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT):
        await owner.data_client.binary_data_by_ids([])


async def test_get_latest_tabular_data_and_none_for_a_silent_source(tenancy, owner):
    name = unique("latest")
    await upload_points(tenancy, owner, name, 3)
    latest = await owner.data_client.get_latest_tabular_data(tenancy.part_a, name, SENSOR, "Readings")
    assert latest.payload == {"readings": {"i": 2, "temperature": 20.2}}
    assert latest.time_captured == pairs(3)[2][0]  # the capture's request time
    assert latest.time_synced > latest.time_captured
    assert await owner.data_client.get_latest_tabular_data(tenancy.part_a, unique("silent"), SENSOR, "Readings") is None


async def test_export_tabular_data_streams_one_source(tenancy, owner):
    name = unique("export")
    items = await upload_points(tenancy, owner, name, 5, tags=["x"])
    points = await owner.data_client.export_tabular_data(tenancy.part_a, name, SENSOR, "Readings")
    assert [p.payload for p in points] == items
    first = points[0]
    assert (first.part_id, first.resource_name, first.resource_api, first.method_name) == (tenancy.part_a, name, SENSOR, "Readings")
    assert first.organization_id == tenancy.org_a and first.robot_name == "rover" and first.tags == ["x"]
    window = await owner.data_client.export_tabular_data(
        tenancy.part_a, name, SENSOR, "Readings", start_time=T0 + timedelta(seconds=1), end_time=T0 + timedelta(seconds=3)
    )
    assert [p.payload["readings"]["i"] for p in window] == [1, 2]


async def test_database_connection_and_user(tenancy, clients):
    owner = await clients.get("owner_a")
    hostname = await owner.data_client.get_database_connection(tenancy.org_a)
    assert isinstance(hostname, str) and hostname
    assert await owner.data_client.configure_database_user(tenancy.org_a, "a-long-password-123") is None
    with raises_grpc(grpc.StatusCode.PERMISSION_DENIED):
        await (await clients.get("operator_a")).data_client.configure_database_user(tenancy.org_a, "a-long-password-123")


async def test_tags_and_bounding_box_labels_by_filter(tenancy, owner):
    name = unique("labels")
    image = await owner.data_client.binary_data_capture_upload(b"img", tenancy.part_a, CAMERA, name, "GetImages", ".jpg", tags=["t1", "t2"])
    await owner.data_client.add_bounding_box_to_image_by_id(image, "cat", 0.1, 0.1, 0.5, 0.5)
    await owner.data_client.add_bounding_box_to_image_by_id(image, "dog", 0.2, 0.2, 0.6, 0.6)
    assert sorted(await owner.data_client.tags_by_filter(Filter(component_name=name))) == ["t1", "t2"]
    assert sorted(await owner.data_client.bounding_box_labels_by_filter(Filter(component_name=name))) == ["cat", "dog"]
    assert "cat" in await owner.data_client.bounding_box_labels_by_filter()
    untagged = await owner.data_client.binary_data_by_filter(
        Filter(component_name=name, tags_filter=TagsFilter(type=TagsFilterType.TAGS_FILTER_TYPE_UNTAGGED)), count_only=True
    )
    assert untagged[1] == 0


async def test_internal_data_is_hidden_unless_asked_for(tenancy, owner):
    name = unique("internal")
    await owner.data_client.tabular_data_capture_upload(
        [{"readings": {"v": 1}}] * 2, tenancy.part_a, SENSOR, name, "Readings", pairs(2), tags=["platform:internal"]
    )
    await owner.data_client.binary_data_capture_upload(b"map", tenancy.part_a, CAMERA, name, "GetImages", ".png", tags=["platform:internal"])
    assert (await owner.data_client.tabular_data_by_filter(Filter(component_name=name), count_only=True))[1] == 0
    assert (await owner.data_client.tabular_data_by_filter(Filter(component_name=name), count_only=True, include_internal_data=True))[1] == 2
    assert (await owner.data_client.binary_data_by_filter(Filter(component_name=name), count_only=True))[1] == 0
    assert (await owner.data_client.binary_data_by_filter(Filter(component_name=name), count_only=True, include_internal_data=True))[1] == 1


async def test_mql_source_types(tenancy, owner):
    from platform_sdk import TabularDataSourceType

    name = unique("hot")
    await upload_points(tenancy, owner, name, 2)
    stages = [{"$match": {"component_name": name}}, {"$count": "n"}]
    hot = await owner.data_client.tabular_data_by_mql(
        tenancy.org_a, stages, tabular_data_source_type=TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_HOT_STORAGE
    )
    assert hot == [{"n": 2}]
    assert await owner.data_client.tabular_data_by_mql(tenancy.org_a, stages, use_recent_data=True) == [{"n": 2}]
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT, match="pipeline_id"):
        await owner.data_client.tabular_data_by_mql(
            tenancy.org_a, stages, tabular_data_source_type=TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_PIPELINE_SINK
        )
