"""DataClient: every operation of SPEC.md's Upload, Retrieval and query, Delete and tag, and Dataset
tables, with SPEC's Python (snake_case) names and required and optional arguments."""

from __future__ import annotations

import errno
import os
from datetime import datetime, timezone
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ._proto import data_pb2, data_pb2_grpc, data_sync_pb2, data_sync_pb2_grpc, dataset_pb2, dataset_pb2_grpc
from .connection import Connection
from .convert import from_message, from_struct, to_struct, to_timestamp
from .dest import write_dest
from .documents import Stage, decode_documents, encode_stages
from .enums import Order, TabularDataSourceType
from .errors import rpc
from .dataset_transfer import TempDir, extract_zip, format_of, zip_folder
from .filters import Filter, filter_to_proto
from .results import (
    BinaryData,
    BinaryID,
    CaptureMetadata,
    Dataset,
    DatasetSplit,
    DatasetVersion,
    DatasetVersionMember,
    ImportedDataset,
    LatestTabularData,
    TabularData,
    TabularDataPoint,
)

# Chunk size of file and streaming uploads.
UPLOAD_CHUNK_BYTES = 64 * 1024
# Chunk size of a dataset import's zip.
IMPORT_CHUNK_BYTES = 256 * 1024

BinaryIds = Sequence[Union[str, BinaryID]]
FilterArg = Union[Filter, data_pb2.Filter, None]


def _split_ids(binary_ids: BinaryIds, field: str) -> Dict[str, list]:
    if isinstance(binary_ids, (str, bytes)) or not isinstance(binary_ids, (list, tuple)):
        raise ValueError(f"{field} must be a list of binary data id strings")
    strings: List[str] = []
    objects: List[data_pb2.BinaryID] = []
    for i, value in enumerate(binary_ids):
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, BinaryID):
            objects.append(data_pb2.BinaryID(file_id=value.file_id, organization_id=value.organization_id, location_id=value.location_id))
        else:
            raise ValueError(f"{field}[{i}] must be a binary data id string, got {type(value).__name__}")
    return {"binary_data_ids": strings, "binary_ids": objects}


def _single_id(binary_id: Union[str, BinaryID]) -> Dict[str, Any]:
    if isinstance(binary_id, BinaryID):
        return {"binary_id": data_pb2.BinaryID(file_id=binary_id.file_id, organization_id=binary_id.organization_id, location_id=binary_id.location_id)}
    if not isinstance(binary_id, str):
        raise ValueError(f"binary_id must be a binary data id string, got {type(binary_id).__name__}")
    return {"binary_data_id": binary_id}


def _sensor_metadata(pair: Any, field: str) -> data_sync_pb2.SensorMetadata:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(f"{field} must be a (requested, received) pair of datetimes")
    return data_sync_pb2.SensorMetadata(
        time_requested=to_timestamp(pair[0], f"{field}[0]"), time_received=to_timestamp(pair[1], f"{field}[1]")
    )


def _tags(tags: Optional[Sequence[str]], field: str = "tags") -> List[str]:
    if tags is None:
        return []
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise ValueError(f"{field} must be a list of strings")
    return list(tags)


def _data_request(limit: Optional[int], sort_order: Optional[Order], last: Optional[str], filter: FilterArg) -> data_pb2.DataRequest:
    if limit is not None and (not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative integer, got {limit!r}")
    return data_pb2.DataRequest(
        filter=filter_to_proto(filter), limit=limit or 0, last=last or "", sort_order=int(sort_order or 0)
    )


class DataClient:
    """Reached as ``CloudClient.data_client``; every method is a coroutine."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._data = data_pb2_grpc.DataServiceStub(connection.channel)
        self._sync = data_sync_pb2_grpc.DataSyncServiceStub(connection.channel)
        self._datasets = dataset_pb2_grpc.DatasetServiceStub(connection.channel)

    async def _md(self) -> Tuple[Tuple[str, str], ...]:
        return await self._connection.metadata()

    # ---- uploads ----

    def _upload_metadata(
        self,
        part_id: str,
        data_type: int,
        component_type: Optional[str] = None,
        component_name: Optional[str] = None,
        method_name: Optional[str] = None,
        file_name: Optional[str] = None,
        method_parameters: Optional[Mapping[str, Any]] = None,
        file_extension: Optional[str] = None,
        tags: Optional[Sequence[str]] = None,
    ) -> data_sync_pb2.UploadMetadata:
        metadata = data_sync_pb2.UploadMetadata(
            part_id=part_id,
            component_type=component_type or "",
            component_name=component_name or "",
            method_name=method_name or "",
            type=data_type,
            file_name=file_name or "",
            file_extension=file_extension or "",
            tags=_tags(tags),
        )
        parameters = to_struct(method_parameters, "method_parameters")
        if parameters is not None:
            metadata.method_parameters.CopyFrom(parameters)
        return metadata

    @rpc
    async def binary_data_capture_upload(
        self,
        binary_data: bytes,
        part_id: str,
        component_type: str,
        component_name: str,
        method_name: str,
        file_extension: str,
        method_parameters: Optional[Mapping[str, Any]] = None,
        tags: Optional[List[str]] = None,
        data_request_times: Optional[Tuple[datetime, datetime]] = None,
    ) -> str:
        """Uploads one binary datum; returns its binary data id. data_request_times defaults to now."""
        if data_request_times is None:
            now = datetime.now().astimezone()
            data_request_times = (now, now)
        sensor = data_sync_pb2.SensorData(
            metadata=_sensor_metadata(data_request_times, "data_request_times"), binary=bytes(binary_data)
        )
        metadata = self._upload_metadata(
            part_id, data_sync_pb2.DATA_TYPE_BINARY_SENSOR, component_type, component_name, method_name,
            None, method_parameters, file_extension, tags,
        )
        response = await self._sync.DataCaptureUpload(
            data_sync_pb2.DataCaptureUploadRequest(metadata=metadata, sensor_contents=[sensor]), metadata=await self._md()
        )
        return response.binary_data_id

    @rpc
    async def tabular_data_capture_upload(
        self,
        tabular_data: List[Mapping[str, Any]],
        part_id: str,
        component_type: str,
        component_name: str,
        method_name: str,
        data_request_times: List[Tuple[datetime, datetime]],
        method_parameters: Optional[Mapping[str, Any]] = None,
        tags: Optional[List[str]] = None,
    ) -> str:
        """Uploads one point per item of tabular_data, sharing one metadata; returns the upload's file id.

        data_request_times holds one (requested, received) pair per item; a different count is a ValueError.
        """
        if not isinstance(tabular_data, (list, tuple)):
            raise ValueError("tabular_data must be a list of dicts")
        if data_request_times is None or len(data_request_times) != len(tabular_data):
            count = 0 if data_request_times is None else len(data_request_times)
            raise ValueError(
                f"data_request_times has {count} timestamp pairs but tabular_data has {len(tabular_data)} items; "
                "they must be equal"
            )
        contents = []
        for i, (item, pair) in enumerate(zip(tabular_data, data_request_times)):
            struct = to_struct(item, f"tabular_data[{i}]")
            contents.append(data_sync_pb2.SensorData(metadata=_sensor_metadata(pair, f"data_request_times[{i}]"), struct=struct))
        metadata = self._upload_metadata(
            part_id, data_sync_pb2.DATA_TYPE_TABULAR_SENSOR, component_type, component_name, method_name,
            None, method_parameters, None, tags,
        )
        response = await self._sync.DataCaptureUpload(
            data_sync_pb2.DataCaptureUploadRequest(metadata=metadata, sensor_contents=contents), metadata=await self._md()
        )
        return response.file_id

    @rpc
    async def file_upload(
        self,
        part_id: str,
        data: bytes,
        component_type: Optional[str] = None,
        component_name: Optional[str] = None,
        method_name: Optional[str] = None,
        file_name: Optional[str] = None,
        method_parameters: Optional[Mapping[str, Any]] = None,
        file_extension: Optional[str] = None,
        tags: Optional[List[str]] = None,
    ) -> str:
        """Streams a file (64 KiB chunks); returns its binary data id."""
        metadata = self._upload_metadata(
            part_id, data_sync_pb2.DATA_TYPE_FILE, component_type, component_name, method_name,
            file_name, method_parameters, file_extension, tags,
        )
        content = bytes(data)

        def packets() -> Iterator[data_sync_pb2.FileUploadRequest]:
            yield data_sync_pb2.FileUploadRequest(metadata=metadata)
            for offset in range(0, len(content), UPLOAD_CHUNK_BYTES):
                yield data_sync_pb2.FileUploadRequest(
                    file_contents=data_sync_pb2.FileData(data=content[offset : offset + UPLOAD_CHUNK_BYTES])
                )

        response = await self._sync.FileUpload(packets(), metadata=await self._md())
        return response.binary_data_id

    async def file_upload_from_path(
        self,
        filepath: str,
        part_id: str,
        component_type: Optional[str] = None,
        component_name: Optional[str] = None,
        method_name: Optional[str] = None,
        method_parameters: Optional[Mapping[str, Any]] = None,
        tags: Optional[List[str]] = None,
    ) -> str:
        """Uploads a file from disk under its own name and extension; FileNotFoundError before any call when missing."""
        if not os.path.exists(filepath):
            raise FileNotFoundError(errno.ENOENT, "file_upload_from_path: no such file", filepath)
        with open(filepath, "rb") as f:
            content = f.read()
        name = os.path.basename(filepath)
        return await self.file_upload(
            part_id, content, component_type, component_name, method_name,
            name, method_parameters, os.path.splitext(name)[1], tags,
        )

    @rpc
    async def streaming_data_capture_upload(
        self,
        data: bytes,
        part_id: str,
        file_ext: str,
        component_type: Optional[str] = None,
        component_name: Optional[str] = None,
        method_name: Optional[str] = None,
        method_parameters: Optional[Mapping[str, Any]] = None,
        data_request_times: Optional[Tuple[datetime, datetime]] = None,
        tags: Optional[List[str]] = None,
    ) -> str:
        """Streams one binary datum (64 KiB chunks); file_ext decides the MIME type. Returns its binary data id."""
        if data_request_times is None:
            now = datetime.now().astimezone()
            data_request_times = (now, now)
        sensor = _sensor_metadata(data_request_times, "data_request_times")
        upload = self._upload_metadata(
            part_id, data_sync_pb2.DATA_TYPE_BINARY_SENSOR, component_type, component_name, method_name,
            None, method_parameters, file_ext, tags,
        )
        content = bytes(data)

        def packets() -> Iterator[data_sync_pb2.StreamingDataCaptureUploadRequest]:
            yield data_sync_pb2.StreamingDataCaptureUploadRequest(
                metadata=data_sync_pb2.DataCaptureUploadMetadata(upload_metadata=upload, sensor_metadata=sensor)
            )
            for offset in range(0, len(content), UPLOAD_CHUNK_BYTES):
                yield data_sync_pb2.StreamingDataCaptureUploadRequest(data=content[offset : offset + UPLOAD_CHUNK_BYTES])

        response = await self._sync.StreamingDataCaptureUpload(packets(), metadata=await self._md())
        return response.binary_data_id

    # ---- retrieval and query ----

    @rpc
    async def tabular_data_by_filter(
        self,
        filter: FilterArg = None,
        limit: Optional[int] = None,
        sort_order: Optional[Order] = None,
        last: Optional[str] = None,
        count_only: bool = False,
        include_internal_data: bool = False,
        dest: Optional[str] = None,
    ) -> Tuple[List[TabularData], int, str]:
        """One page: (data, count, last). Pass ``last`` back for the next page; an empty page ends.
        limit defaults to 50 (server side). count_only returns the total count and no data."""
        response = await self._data.TabularDataByFilter(
            data_pb2.TabularDataByFilterRequest(
                data_request=_data_request(limit, sort_order, last, filter),
                count_only=count_only,
                include_internal_data=include_internal_data,
            ),
            metadata=await self._md(),
        )
        metadata = [from_message(CaptureMetadata, m) for m in response.metadata]
        data = [
            TabularData(
                data=from_struct(d.data),
                metadata=metadata[d.metadata_index],
                time_requested=d.time_requested.ToDatetime(tzinfo=timezone.utc) if d.HasField("time_requested") else None,
                time_received=d.time_received.ToDatetime(tzinfo=timezone.utc) if d.HasField("time_received") else None,
            )
            for d in response.data
        ]
        write_dest(dest, {"data": data, "count": response.count, "last": response.last})
        return data, response.count, response.last

    @rpc
    async def tabular_data_by_sql(self, organization_id: str, sql_query: str) -> List[Dict[str, Any]]:
        """Runs one SELECT over the organization's `readings`; needs an organization-level key."""
        response = await self._data.TabularDataBySQL(
            data_pb2.TabularDataBySQLRequest(organization_id=organization_id, sql_query=sql_query), metadata=await self._md()
        )
        return decode_documents(response.raw_data)

    @rpc
    async def tabular_data_by_mql(
        self,
        organization_id: str,
        query: List[Stage],
        use_recent_data: Optional[bool] = None,
        tabular_data_source_type: TabularDataSourceType = TabularDataSourceType.TABULAR_DATA_SOURCE_TYPE_STANDARD,  # type: ignore[attr-defined]
        pipeline_id: Optional[str] = None,
    ) -> List[Dict[str, Any]]:
        """Runs an aggregation pipeline (a list of stage dicts) over the organization's readings."""
        structs, binary = encode_stages(query)
        request = data_pb2.TabularDataByMQLRequest(organization_id=organization_id, mql_binary=binary)
        for i, stage in enumerate(structs):
            request.query.append(to_struct(stage, f"query[{i}]"))
        if use_recent_data is not None:
            request.use_recent_data = use_recent_data
        request.data_source.type = int(tabular_data_source_type)
        if pipeline_id is not None:
            request.data_source.pipeline_id = pipeline_id
        response = await self._data.TabularDataByMQL(request, metadata=await self._md())
        return decode_documents(response.raw_data)

    @rpc
    async def binary_data_by_filter(
        self,
        filter: FilterArg = None,
        limit: Optional[int] = None,
        sort_order: Optional[Order] = None,
        last: Optional[str] = None,
        include_binary_data: bool = True,
        count_only: bool = False,
        include_internal_data: bool = False,
        dest: Optional[str] = None,
    ) -> Tuple[List[BinaryData], int, str]:
        """One page: (data, count, last), content included unless include_binary_data=False."""
        response = await self._data.BinaryDataByFilter(
            data_pb2.BinaryDataByFilterRequest(
                data_request=_data_request(limit, sort_order, last, filter),
                include_binary=include_binary_data,
                count_only=count_only,
                include_internal_data=include_internal_data,
            ),
            metadata=await self._md(),
        )
        data = [from_message(BinaryData, d) for d in response.data]
        write_dest(dest, {"data": data, "count": response.count, "last": response.last})
        return data, response.count, response.last

    @rpc
    async def binary_data_by_ids(self, binary_ids: BinaryIds, dest: Optional[str] = None) -> List[BinaryData]:
        """The binary data with these ids, content included. An empty list is an INVALID_ARGUMENT GRPCError."""
        response = await self._data.BinaryDataByIDs(
            data_pb2.BinaryDataByIDsRequest(include_binary=True, **_split_ids(binary_ids, "binary_ids")),
            metadata=await self._md(),
        )
        data = [from_message(BinaryData, d) for d in response.data]
        write_dest(dest, data)
        return data

    @rpc
    async def get_latest_tabular_data(
        self, part_id: str, resource_name: str, resource_api: str, method_name: str
    ) -> Optional[LatestTabularData]:
        """The newest point of a source synced in the last year, or None."""
        response = await self._data.GetLatestTabularData(
            data_pb2.GetLatestTabularDataRequest(
                part_id=part_id, resource_name=resource_name, resource_subtype=resource_api, method_name=method_name
            ),
            metadata=await self._md(),
        )
        if not response.found:
            return None
        return from_message(LatestTabularData, response)

    @rpc
    async def export_tabular_data(
        self,
        part_id: str,
        resource_name: str,
        resource_api: str,
        method_name: str,
        start_time: Optional[datetime] = None,
        end_time: Optional[datetime] = None,
    ) -> List[TabularDataPoint]:
        """Every point of one source (in capture order), optionally within [start_time, end_time)."""
        request = data_pb2.ExportTabularDataRequest(
            part_id=part_id, resource_name=resource_name, resource_subtype=resource_api, method_name=method_name
        )
        if start_time is not None:
            request.interval.start.CopyFrom(to_timestamp(start_time, "start_time"))
        if end_time is not None:
            request.interval.end.CopyFrom(to_timestamp(end_time, "end_time"))
        points = []
        async for message in self._data.ExportTabularData(request, metadata=await self._md()):
            points.append(from_message(TabularDataPoint, message, {"resource_api": "resource_subtype"}))
        return points

    @rpc
    async def get_database_connection(self, organization_id: str) -> str:
        """The hostname of the organization's database (the PostgreSQL endpoint)."""
        response = await self._data.GetDatabaseConnection(
            data_pb2.GetDatabaseConnectionRequest(organization_id=organization_id), metadata=await self._md()
        )
        return response.hostname

    @rpc
    async def configure_database_user(self, organization_id: str, password: str) -> None:
        """Creates the organization's database user, or resets its password."""
        await self._data.ConfigureDatabaseUser(
            data_pb2.ConfigureDatabaseUserRequest(organization_id=organization_id, password=password), metadata=await self._md()
        )

    @rpc
    async def bounding_box_labels_by_filter(self, filter: FilterArg = None) -> List[str]:
        response = await self._data.BoundingBoxLabelsByFilter(
            data_pb2.BoundingBoxLabelsByFilterRequest(filter=filter_to_proto(filter)), metadata=await self._md()
        )
        return list(response.labels)

    @rpc
    async def tags_by_filter(self, filter: FilterArg = None) -> List[str]:
        response = await self._data.TagsByFilter(
            data_pb2.TagsByFilterRequest(filter=filter_to_proto(filter)), metadata=await self._md()
        )
        return list(response.tags)

    # ---- delete and tag ----

    @rpc
    async def delete_tabular_data(self, organization_id: str, delete_older_than_days: int) -> int:
        """Deletes the organization's tabular data captured more than that many days ago (0: all); returns the count."""
        if isinstance(delete_older_than_days, bool) or not isinstance(delete_older_than_days, int) or delete_older_than_days < 0:
            raise ValueError(f"delete_older_than_days must be a non-negative integer, got {delete_older_than_days!r}")
        response = await self._data.DeleteTabularData(
            data_pb2.DeleteTabularDataRequest(organization_id=organization_id, delete_older_than_days=delete_older_than_days),
            metadata=await self._md(),
        )
        return response.deleted_count

    @rpc
    async def delete_binary_data_by_filter(self, filter: FilterArg = None, include_internal_data: bool = True) -> int:
        """The filter must name at least one organization in organization_ids. Returns the count deleted."""
        response = await self._data.DeleteBinaryDataByFilter(
            data_pb2.DeleteBinaryDataByFilterRequest(filter=filter_to_proto(filter), include_internal_data=include_internal_data),
            metadata=await self._md(),
        )
        return response.deleted_count

    @rpc
    async def delete_binary_data_by_ids(self, binary_ids: BinaryIds) -> int:
        response = await self._data.DeleteBinaryDataByIDs(
            data_pb2.DeleteBinaryDataByIDsRequest(**_split_ids(binary_ids, "binary_ids")), metadata=await self._md()
        )
        return response.deleted_count

    @rpc
    async def add_tags_to_binary_data_by_ids(self, tags: List[str], binary_ids: BinaryIds) -> None:
        await self._data.AddTagsToBinaryDataByIDs(
            data_pb2.AddTagsToBinaryDataByIDsRequest(tags=_tags(tags), **_split_ids(binary_ids, "binary_ids")),
            metadata=await self._md(),
        )

    @rpc
    async def add_tags_to_binary_data_by_filter(self, tags: List[str], filter: FilterArg = None) -> None:
        await self._data.AddTagsToBinaryDataByFilter(
            data_pb2.AddTagsToBinaryDataByFilterRequest(tags=_tags(tags), filter=filter_to_proto(filter)),
            metadata=await self._md(),
        )

    @rpc
    async def remove_tags_from_binary_data_by_ids(self, tags: List[str], binary_ids: BinaryIds) -> int:
        """Returns the number of binary data that lost a tag."""
        response = await self._data.RemoveTagsFromBinaryDataByIDs(
            data_pb2.RemoveTagsFromBinaryDataByIDsRequest(tags=_tags(tags), **_split_ids(binary_ids, "binary_ids")),
            metadata=await self._md(),
        )
        return response.deleted_count

    @rpc
    async def remove_tags_from_binary_data_by_filter(self, tags: List[str], filter: FilterArg = None) -> int:
        response = await self._data.RemoveTagsFromBinaryDataByFilter(
            data_pb2.RemoveTagsFromBinaryDataByFilterRequest(tags=_tags(tags), filter=filter_to_proto(filter)),
            metadata=await self._md(),
        )
        return response.deleted_count

    @rpc
    async def add_bounding_box_to_image_by_id(
        self,
        binary_id: Union[str, BinaryID],
        label: str,
        x_min_normalized: float,
        y_min_normalized: float,
        x_max_normalized: float,
        y_max_normalized: float,
    ) -> str:
        """Returns the bounding box id; coordinates outside [0, 1] are an INVALID_ARGUMENT GRPCError."""
        response = await self._data.AddBoundingBoxToImageByID(
            data_pb2.AddBoundingBoxToImageByIDRequest(
                label=label,
                x_min_normalized=x_min_normalized,
                y_min_normalized=y_min_normalized,
                x_max_normalized=x_max_normalized,
                y_max_normalized=y_max_normalized,
                **_single_id(binary_id),
            ),
            metadata=await self._md(),
        )
        return response.bbox_id

    @rpc
    async def remove_bounding_box_from_image_by_id(self, bbox_id: str, binary_id: Union[str, BinaryID]) -> None:
        await self._data.RemoveBoundingBoxFromImageByID(
            data_pb2.RemoveBoundingBoxFromImageByIDRequest(bbox_id=bbox_id, **_single_id(binary_id)), metadata=await self._md()
        )

    # ---- datasets ----

    @rpc
    async def create_dataset(self, name: str, organization_id: str) -> str:
        response = await self._datasets.CreateDataset(
            dataset_pb2.CreateDatasetRequest(name=name, organization_id=organization_id), metadata=await self._md()
        )
        return response.id

    @rpc
    async def delete_dataset(self, id: str) -> None:
        await self._datasets.DeleteDataset(dataset_pb2.DeleteDatasetRequest(id=id), metadata=await self._md())

    @rpc
    async def rename_dataset(self, id: str, name: str) -> None:
        await self._datasets.RenameDataset(dataset_pb2.RenameDatasetRequest(id=id, name=name), metadata=await self._md())

    @rpc
    async def list_datasets_by_organization_id(self, organization_id: str) -> List[Dataset]:
        response = await self._datasets.ListDatasetsByOrganizationID(
            dataset_pb2.ListDatasetsByOrganizationIDRequest(organization_id=organization_id), metadata=await self._md()
        )
        return [from_message(Dataset, d) for d in response.datasets]

    @rpc
    async def list_datasets_by_ids(self, ids: List[str]) -> List[Dataset]:
        response = await self._datasets.ListDatasetsByIDs(dataset_pb2.ListDatasetsByIDsRequest(ids=ids), metadata=await self._md())
        return [from_message(Dataset, d) for d in response.datasets]

    @rpc
    async def add_binary_data_to_dataset_by_ids(self, binary_ids: List[str], dataset_id: str) -> None:
        """The data joins the dataset and gets the tag PLATFORM_DATASET_{dataset_id}."""
        await self._datasets.AddBinaryDataToDatasetByIDs(
            dataset_pb2.AddBinaryDataToDatasetByIDsRequest(
                binary_data_ids=_split_ids(binary_ids, "binary_ids")["binary_data_ids"], dataset_id=dataset_id
            ),
            metadata=await self._md(),
        )

    @rpc
    async def remove_binary_data_from_dataset_by_ids(self, binary_ids: List[str], dataset_id: str) -> None:
        await self._datasets.RemoveBinaryDataFromDatasetByIDs(
            dataset_pb2.RemoveBinaryDataFromDatasetByIDsRequest(
                binary_data_ids=_split_ids(binary_ids, "binary_ids")["binary_data_ids"], dataset_id=dataset_id
            ),
            metadata=await self._md(),
        )

    @rpc
    async def merge_datasets(self, dataset_ids: List[str], name: str, organization_id: str) -> str:
        """A new dataset named ``name`` holding the union of the given datasets' data; returns its id."""
        response = await self._datasets.MergeDatasets(
            dataset_pb2.MergeDatasetsRequest(dataset_ids=dataset_ids, name=name, organization_id=organization_id),
            metadata=await self._md(),
        )
        return response.dataset_id

    # ---- dataset versions, export and import, MCAP (dataset_transfer.py) ----

    @rpc
    async def create_dataset_version(self, dataset_id: str, split: Optional[DatasetSplit] = None) -> DatasetVersion:
        """Freezes the dataset's images, tags, boxes and a train/valid/test split as its next version."""
        request = dataset_pb2.CreateDatasetVersionRequest(dataset_id=dataset_id)
        if split is not None:
            request.split.CopyFrom(dataset_pb2.DatasetSplit(train=split.train, valid=split.valid, test=split.test, seed=split.seed))
        response = await self._datasets.CreateDatasetVersion(request, metadata=await self._md())
        return from_message(DatasetVersion, response.version)

    @rpc
    async def list_dataset_versions(self, dataset_id: str) -> List[DatasetVersion]:
        response = await self._datasets.ListDatasetVersions(
            dataset_pb2.ListDatasetVersionsRequest(dataset_id=dataset_id), metadata=await self._md()
        )
        return [from_message(DatasetVersion, v) for v in response.versions]

    @rpc
    async def get_dataset_version(self, dataset_id: str, version: int) -> Tuple[DatasetVersion, List[DatasetVersionMember]]:
        """The version and its members (split, tags, boxes and pixel size of each image)."""
        response = await self._datasets.GetDatasetVersion(
            dataset_pb2.GetDatasetVersionRequest(dataset_id=dataset_id, version=version), metadata=await self._md()
        )
        return from_message(DatasetVersion, response.version), [from_message(DatasetVersionMember, m) for m in response.members]

    @rpc
    async def export_dataset(self, dataset_id: str, dest: str, format: str, version: int = 0) -> List[str]:
        """Exports a version (0: the live dataset) as 'jsonl', 'coco' or 'yolo' into the folder ``dest``, or as
        the zip itself when ``dest`` ends with .zip. Returns the files extracted (empty for a zip)."""
        request = dataset_pb2.ExportDatasetRequest(dataset_id=dataset_id, version=version, format=format_of(format))
        to_zip = dest.lower().endswith(".zip")
        with TempDir(os.path.dirname(os.path.abspath(dest)) if to_zip else "") as work:
            zip_path = os.path.join(work, "export.zip")
            with open(zip_path, "wb") as out:
                async for message in self._datasets.ExportDataset(request, metadata=await self._md()):
                    out.write(message.data)
            if to_zip:
                os.replace(zip_path, dest)
                return []
            return extract_zip(zip_path, dest)

    @rpc
    async def import_dataset(self, dataset_id: str, source: str, format: str, part_id: str) -> ImportedDataset:
        """Imports a COCO or YOLO zip (or folder, zipped on the way) into the dataset, as binary data of
        ``part_id``: all of it or, when anything is malformed, nothing (the error names the file and reason)."""
        header = dataset_pb2.ImportDatasetHeader(dataset_id=dataset_id, format=format_of(format), part_id=part_id)
        if not os.path.exists(source):
            raise FileNotFoundError(errno.ENOENT, "no such file or folder", source)
        with TempDir() as work:
            zip_path = source
            if os.path.isdir(source):
                zip_path = os.path.join(work, "import.zip")
                zip_folder(source, zip_path)

            def packets() -> Iterator[dataset_pb2.ImportDatasetRequest]:
                yield dataset_pb2.ImportDatasetRequest(header=header)
                with open(zip_path, "rb") as f:
                    while True:
                        chunk = f.read(IMPORT_CHUNK_BYTES)
                        if not chunk:
                            break
                        yield dataset_pb2.ImportDatasetRequest(data=chunk)

            response = await self._datasets.ImportDataset(packets(), metadata=await self._md())
        return from_message(ImportedDataset, response)

    @rpc
    async def export_mcap(self, dest: str, filter: FilterArg = None) -> int:
        """Writes the captured data the filter selects (readings, images, point clouds, and the logs of the
        part or machine it names) to ``dest`` as one MCAP file for Foxglove or Lichtblick; returns its size."""
        request = data_pb2.ExportMcapRequest(filter=filter_to_proto(filter))
        temp = dest + ".part"
        size = 0
        try:
            with open(temp, "wb") as out:
                async for message in self._data.ExportMcap(request, metadata=await self._md()):
                    out.write(message.data)
                    size += len(message.data)
            os.replace(temp, dest)
        finally:
            if os.path.exists(temp):
                os.remove(temp)
        return size
