"""platform_sdk: the platform's Python cloud client (async, grpc.aio).

    client = await CloudClient.create(service_host="127.0.0.1:8081", api_key_id=KEY_ID, api_key=KEY, insecure=True)
    points, count, last = await client.data_client.tabular_data_by_filter(Filter(component_name="thermo"))
    await client.close()
"""

from .cloud_client import CloudClient
from .data_client import DataClient
from .enums import ModelFramework, ModelType, Order, TabularDataSourceType, TagsFilterType, TrainingStatus
from .errors import GRPCError
from .filters import Filter, TagsFilter, create_filter
from .ml_training_client import MLTrainingClient
from .results import (
    Annotations,
    BinaryData,
    BinaryID,
    BinaryMetadata,
    BoundingBox,
    CaptureMetadata,
    Classification,
    Dataset,
    DatasetSplit,
    DatasetVersion,
    DatasetVersionMember,
    ErrorStatus,
    ImportedDataset,
    LatestTabularData,
    ModelArtefact,
    ModelArtefactFile,
    TabularData,
    TabularDataPoint,
    TrainingJobLogEntry,
    TrainingJobLogsPage,
    TrainingJobMetadata,
    TrainingProgress,
    TrainingScript,
)

__all__ = [
    "Annotations",
    "BinaryData",
    "BinaryID",
    "BinaryMetadata",
    "BoundingBox",
    "CaptureMetadata",
    "Classification",
    "CloudClient",
    "DataClient",
    "Dataset",
    "DatasetSplit",
    "DatasetVersion",
    "DatasetVersionMember",
    "ErrorStatus",
    "ImportedDataset",
    "Filter",
    "GRPCError",
    "LatestTabularData",
    "MLTrainingClient",
    "ModelArtefact",
    "ModelArtefactFile",
    "ModelFramework",
    "ModelType",
    "Order",
    "TabularData",
    "TabularDataPoint",
    "TabularDataSourceType",
    "TagsFilter",
    "TagsFilterType",
    "TrainingJobLogEntry",
    "TrainingJobLogsPage",
    "TrainingJobMetadata",
    "TrainingProgress",
    "TrainingScript",
    "TrainingStatus",
    "create_filter",
]
