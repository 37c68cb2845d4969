"""What the clients return: dataclasses with the API's snake_case field names. Times are timezone-aware
UTC datetimes (None when the server left them unset); Structs are dicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Optional

from .enums import ModelFramework, ModelType, TrainingStatus


@dataclass
class BinaryID:
    """Deprecated object form of a binary data id; plain id strings are preferred."""

    file_id: str
    organization_id: str
    location_id: str


@dataclass
class CaptureMetadata:
    organization_id: str = ""
    location_id: str = ""
    robot_name: str = ""
    robot_id: str = ""
    part_name: str = ""
    part_id: str = ""
    component_type: str = ""
    component_name: str = ""
    method_name: str = ""
    method_parameters: Dict[str, Any] = field(default_factory=dict)
    tags: List[str] = field(default_factory=list)
    mime_type: str = ""


@dataclass
class TabularData:
    """One point of tabular_data_by_filter: its payload and the metadata of the upload it came in."""

    data: Dict[str, Any]
    metadata: CaptureMetadata
    time_requested: Optional[datetime]
    time_received: Optional[datetime]


@dataclass
class TabularDataPoint:
    """One point of export_tabular_data."""

    part_id: str
    resource_name: str
    resource_api: str
    method_name: str
    time_captured: Optional[datetime]
    organization_id: str
    location_id: str
    robot_name: str
    robot_id: str
    part_name: str
    method_parameters: Dict[str, Any]
    tags: List[str]
    payload: Dict[str, Any]


@dataclass
class LatestTabularData:
    time_captured: Optional[datetime]
    time_synced: Optional[datetime]
    payload: Dict[str, Any]


@dataclass
class BoundingBox:
    id: str
    label: str
    x_min_normalized: float
    y_min_normalized: float
    x_max_normalized: float
    y_max_normalized: float
    confidence: Optional[float]


@dataclass
class Classification:
    label: str
    confidence: Optional[float]


@dataclass
class Annotations:
    bboxes: List[BoundingBox]
    classifications: List[Classification]


@dataclass
class BinaryMetadata:
    id: str
    binary_data_id: str
    capture_metadata: CaptureMetadata
    time_requested: Optional[datetime]
    time_received: Optional[datetime]
    file_name: str
    file_ext: str
    uri: str
    annotations: Annotations
    dataset_ids: List[str]
    file_size_bytes: int


@dataclass
class BinaryData:
    """A binary datum: its content (empty with include_binary_data=False) and its metadata."""

    binary: bytes
    metadata: BinaryMetadata


@dataclass
class Dataset:
    id: str
    name: str
    organization_id: str
    time_created: Optional[datetime]


@dataclass
class DatasetSplit:
    """Shares of train, valid and test (summing to 1; all 0 means 0.7, 0.2, 0.1) and the seed that orders the members."""

    train: float = 0.0
    valid: float = 0.0
    test: float = 0.0
    seed: int = 0


@dataclass
class DatasetVersion:
    dataset_id: str
    version: int
    organization_id: str
    time_created: Optional[datetime]
    split: Optional[DatasetSplit]
    image_count: int
    train_count: int
    valid_count: int
    test_count: int
    labels: List[str]


@dataclass
class DatasetVersionMember:
    binary_data_id: str
    split: str
    tags: List[str]
    bounding_boxes: List[BoundingBox]
    width: int
    height: int
    file_ext: str


@dataclass
class ImportedDataset:
    binary_data_ids: List[str]
    image_count: int
    bounding_box_count: int


@dataclass
class ErrorStatus:
    code: int
    message: str


@dataclass
class TrainingProgress:
    epoch: int
    total_epochs: int
    loss: float
    validation_metric_name: str
    validation_metric: float
    images_per_second: float


@dataclass
class TrainingJobMetadata:
    id: str
    dataset_id: str
    organization_id: str
    model_name: str
    model_version: str
    model_type: ModelType
    model_framework: ModelFramework
    is_custom_job: bool
    registry_item_id: str
    registry_item_version: str
    status: TrainingStatus
    error_status: Optional[ErrorStatus]
    created_on: Optional[datetime]
    last_modified: Optional[datetime]
    training_started: Optional[datetime]
    training_ended: Optional[datetime]
    synced_model_id: str
    tags: List[str]
    arguments: Dict[str, str]
    progress: Optional[TrainingProgress]
    validation_metrics: Dict[str, float]
    dataset_version: int


@dataclass
class TrainingJobLogEntry:
    level: str
    time: Optional[datetime]
    message: str


@dataclass
class TrainingJobLogsPage:
    """One page of GetTrainingJobLogs: ``next_page_token`` pages on ('' when no entry is left now);
    ``resume_page_token`` follows a running job (the entries logged after this page)."""

    logs: List[TrainingJobLogEntry]
    next_page_token: str
    resume_page_token: str


@dataclass
class TrainingScript:
    organization_id: str
    registry_item_id: str
    version: str
    entrypoint: str
    model_type: ModelType
    model_framework: ModelFramework
    description: str
    package_size_bytes: int
    created_on: Optional[datetime]


@dataclass
class ModelArtefactFile:
    name: str
    size_bytes: int


@dataclass
class ModelArtefact:
    id: str
    organization_id: str
    model_name: str
    model_version: str
    model_type: ModelType
    model_framework: ModelFramework
    training_job_id: str
    files: List[ModelArtefactFile]
    labels: List[str]
    validation_metrics: Dict[str, float]
    created_on: Optional[datetime]
