"""Filter: which data a query, delete or tag call applies to. Every field is optional; fields combine
with AND, and the tags of a tags filter and the bbox labels match with OR. start_time (inclusive) and
end_time (exclusive) make the capture interval."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import List, Optional, Union

from ._proto import data_pb2
from .convert import to_timestamp
from .enums import TagsFilterType


@dataclass
class TagsFilter:
    type: TagsFilterType = TagsFilterType.TAGS_FILTER_TYPE_UNSPECIFIED  # type: ignore[attr-defined]
    tags: List[str] = field(default_factory=list)


@dataclass
class Filter:
    component_name: str = ""
    component_type: str = ""
    method: str = ""
    robot_name: str = ""
    robot_id: str = ""
    part_name: str = ""
    part_id: str = ""
    location_ids: List[str] = field(default_factory=list)
    organization_ids: List[str] = field(default_factory=list)
    mime_type: List[str] = field(default_factory=list)
    start_time: Optional[datetime] = None
    end_time: Optional[datetime] = None
    tags_filter: Optional[TagsFilter] = None
    bbox_labels: List[str] = field(default_factory=list)
    dataset_id: str = ""


def create_filter(**fields) -> Filter:  # type: ignore[no-untyped-def]
    """create_filter(component_name="thermo", start_time=...) is Filter(component_name="thermo", ...)."""
    return Filter(**fields)


def filter_to_proto(value: Union[Filter, data_pb2.Filter, None]) -> data_pb2.Filter:
    if value is None:
        return data_pb2.Filter()
    if isinstance(value, data_pb2.Filter):
        return value
    if not isinstance(value, Filter):
        raise ValueError(f"filter must be a platform_sdk.Filter, got {type(value).__name__}")
    message = data_pb2.Filter(
        component_name=value.component_name,
        component_type=value.component_type,
        method=value.method,
        robot_name=value.robot_name,
        robot_id=value.robot_id,
        part_name=value.part_name,
        part_id=value.part_id,
        location_ids=value.location_ids,
        organization_ids=value.organization_ids,
        mime_type=value.mime_type,
        bbox_labels=value.bbox_labels,
        dataset_id=value.dataset_id,
    )
    if value.start_time is not None:
        message.interval.start.CopyFrom(to_timestamp(value.start_time, "filter.start_time"))
    if value.end_time is not None:
        message.interval.end.CopyFrom(to_timestamp(value.end_time, "filter.end_time"))
    if value.tags_filter is not None:
        message.tags_filter.type = int(value.tags_filter.type)
        message.tags_filter.tags.extend(value.tags_filter.tags)
    return message
