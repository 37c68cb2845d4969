"""Value conversions that every call relies on (no server needed)."""

from datetime import datetime, timedelta, timezone

import pytest

from platform_sdk import Filter, TagsFilter, TagsFilterType
from platform_sdk.convert import from_struct, from_timestamp, to_struct, to_timestamp
from platform_sdk.filters import filter_to_proto


def test_structs_round_trip_nested_values():
    value = {"a": {"b": [1.5, "x", True, None, {"c": []}]}, "n": 3, "s": ""}
    assert from_struct(to_struct(value, "payload")) == value
    assert isinstance(from_struct(to_struct({"n": 3}, "payload"))["n"], float)  # Struct numbers are doubles


def test_a_payload_that_is_not_json_is_a_value_error_naming_the_field():
    with pytest.raises(ValueError, match=r"tabular_data\[2\]"):
        to_struct({"when": datetime.now()}, "tabular_data[2]")
    with pytest.raises(ValueError, match="method_parameters must be a dict"):
        to_struct(["x"], "method_parameters")


def test_times_naive_is_local_aware_keeps_its_zone_and_results_are_utc():
    aware = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    back = from_timestamp(to_timestamp(aware, "t"))
    assert back == aware and back.tzinfo == timezone.utc
    naive = datetime(2024, 5, 1, 12, 0, 0)
    assert from_timestamp(to_timestamp(naive, "t")) == naive.astimezone()
    with pytest.raises(ValueError, match="data_request_times\\[0\\]\\[1\\] must be a datetime"):
        to_timestamp("2024-05-01", "data_request_times[0][1]")


def test_filters_become_the_proto_filter():
    start, end = datetime(2024, 1, 1, tzinfo=timezone.utc), datetime(2024, 1, 2, tzinfo=timezone.utc)
    message = filter_to_proto(
        Filter(component_name="cam", organization_ids=["o"], start_time=start, end_time=end,
               tags_filter=TagsFilter(type=TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR, tags=["a", "b"]), dataset_id="d")
    )
    assert message.component_name == "cam" and list(message.organization_ids) == ["o"] and message.dataset_id == "d"
    assert from_timestamp(message.interval.start) == start and from_timestamp(message.interval.end) == end
    assert message.tags_filter.type == TagsFilterType.TAGS_FILTER_TYPE_MATCH_BY_OR and list(message.tags_filter.tags) == ["a", "b"]
    assert not filter_to_proto(None).HasField("interval")
    with pytest.raises(ValueError, match="filter must be a platform_sdk.Filter"):
        filter_to_proto({"component_name": "cam"})


def test_id_lists_must_be_lists_of_strings():
    from platform_sdk import BinaryID
    from platform_sdk.data_client import _split_ids

    assert _split_ids(["a", BinaryID("f", "o", "l")], "binary_ids")["binary_data_ids"] == ["a"]
    with pytest.raises(ValueError, match="binary_ids must be a list"):
        _split_ids("a", "binary_ids")
    with pytest.raises(ValueError, match=r"binary_ids\[1\] must be a binary data id string"):
        _split_ids(["a", 7], "binary_ids")
