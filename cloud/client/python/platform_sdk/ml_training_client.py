"""MLTrainingClient: SPEC.md's ML training operations (and the registry and model-artefact calls the
cloud adds), with SPEC's Python names. The API key must be an organization-level owner key."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Dict, List, Mapping, Optional, Tuple

from ._proto import ml_training_pb2, ml_training_pb2_grpc
from .connection import Connection
from .convert import from_message
from .enums import ModelFramework, ModelType, TrainingStatus
from .errors import rpc
from .results import ModelArtefact, TrainingJobLogEntry, TrainingJobLogsPage, TrainingJobMetadata, TrainingScript


FINISHED = frozenset({TrainingStatus.TRAINING_STATUS_COMPLETED, TrainingStatus.TRAINING_STATUS_FAILED, TrainingStatus.TRAINING_STATUS_CANCELED})


def _arguments(arguments: Optional[Mapping[str, str]]) -> Dict[str, str]:
    if arguments is None:
        return {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in arguments.items()):
        raise ValueError("arguments must map strings to strings, for example {'epochs': '20'}")
    return dict(arguments)


class MLTrainingClient:
    """Reached as ``CloudClient.ml_training_client``; every method is a coroutine."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._stub = ml_training_pb2_grpc.MLTrainingServiceStub(connection.channel)

    @rpc
    async def submit_training_job(
        self,
        org_id: str,
        dataset_id: str,
        model_name: str,
        model_version: str,
        model_type: ModelType,
        tags: List[str],
        arguments: Optional[Mapping[str, str]] = None,
        dataset_version: int = 0,
    ) -> str:
        """Queues a built-in training job on the labels ``tags``; returns the job id.
        model_version must be unique among the versions used for model_name. ``dataset_version`` names a
        frozen version of the dataset; 0 makes one for the job (recorded in its metadata)."""
        response = await self._stub.SubmitTrainingJob(
            ml_training_pb2.SubmitTrainingJobRequest(
                organization_id=org_id,
                dataset_id=dataset_id,
                model_name=model_name,
                model_version=model_version,
                model_type=int(model_type),
                tags=tags,
                arguments=_arguments(arguments),
                dataset_version=dataset_version,
            ),
            metadata=await self._connection.metadata(),
        )
        return response.id

    @rpc
    async def submit_custom_training_job(
        self,
        org_id: str,
        dataset_id: str,
        registry_item_id: str,
        registry_item_version: str,
        model_name: str,
        model_version: str,
        arguments: Optional[Mapping[str, str]] = None,
        dataset_version: int = 0,
    ) -> str:
        """Queues a job that runs the registry's training script; arguments reach it as --key=value.
        ``dataset_version`` as for submit_training_job."""
        response = await self._stub.SubmitCustomTrainingJob(
            ml_training_pb2.SubmitCustomTrainingJobRequest(
                organization_id=org_id,
                dataset_id=dataset_id,
                registry_item_id=registry_item_id,
                registry_item_version=registry_item_version,
                model_name=model_name,
                model_version=model_version,
                arguments=_arguments(arguments),
                dataset_version=dataset_version,
            ),
            metadata=await self._connection.metadata(),
        )
        return response.id

    @rpc
    async def get_training_job(self, id: str) -> TrainingJobMetadata:
        response = await self._stub.GetTrainingJob(
            ml_training_pb2.GetTrainingJobRequest(id=id), metadata=await self._connection.metadata()
        )
        return from_message(TrainingJobMetadata, response.metadata)

    @rpc
    async def list_training_jobs(self, org_id: str, training_status: Optional[TrainingStatus] = None) -> List[TrainingJobMetadata]:
        """The organization's jobs with that status, oldest first; None (or UNSPECIFIED) lists all."""
        response = await self._stub.ListTrainingJobs(
            ml_training_pb2.ListTrainingJobsRequest(organization_id=org_id, status=int(training_status or 0)),
            metadata=await self._connection.metadata(),
        )
        return [from_message(TrainingJobMetadata, job) for job in response.jobs]

    @rpc
    async def cancel_training_job(self, id: str) -> None:
        """Cancels a job that has not finished; an unknown id is a NOT_FOUND GRPCError."""
        await self._stub.CancelTrainingJob(ml_training_pb2.CancelTrainingJobRequest(id=id), metadata=await self._connection.metadata())

    @rpc
    async def delete_completed_training_job(self, id: str) -> None:
        """Removes a finished job (completed, failed or canceled) and its log."""
        await self._stub.DeleteCompletedTrainingJob(
            ml_training_pb2.DeleteCompletedTrainingJobRequest(id=id), metadata=await self._connection.metadata()
        )

    @rpc
    async def get_training_job_logs(self, id: str, page_token: str = "") -> Tuple[List[TrainingJobLogEntry], str]:
        """One page of a job's log: (entries, next_page_token); pass the token back for more ('' = none yet)."""
        response = await self._stub.GetTrainingJobLogs(
            ml_training_pb2.GetTrainingJobLogsRequest(id=id, page_token=page_token), metadata=await self._connection.metadata()
        )
        return [from_message(TrainingJobLogEntry, e) for e in response.logs], response.next_page_token

    @rpc
    async def get_training_job_logs_page(self, id: str, page_token: str = "") -> TrainingJobLogsPage:
        """One page of a job's log with both tokens: ``next_page_token`` ('' as soon as no entry is left,
        also while the job runs) and ``resume_page_token`` (always set): pass the latter back later to get
        only the entries logged since."""
        response = await self._stub.GetTrainingJobLogs(
            ml_training_pb2.GetTrainingJobLogsRequest(id=id, page_token=page_token), metadata=await self._connection.metadata()
        )
        return TrainingJobLogsPage(
            logs=[from_message(TrainingJobLogEntry, e) for e in response.logs],
            next_page_token=response.next_page_token,
            resume_page_token=response.resume_page_token,
        )

    async def _entries_since(self, id: str, page_token: str) -> Tuple[List[TrainingJobLogEntry], str]:
        """Every entry from ``page_token`` on, page by page; and the token to resume from later."""
        entries: List[TrainingJobLogEntry] = []
        while True:
            page = await self.get_training_job_logs_page(id, page_token)
            entries.extend(page.logs)
            if not page.next_page_token:
                return entries, page.resume_page_token or page_token
            page_token = page.next_page_token

    async def follow_training_job_logs(self, id: str, poll_seconds: float = 1.0) -> AsyncIterator[TrainingJobLogEntry]:
        """Every entry of a job's log, each once and in order: its history first, then, while the job runs,
        the entries it logs (read every ``poll_seconds`` from the last ``resume_page_token``, so each poll
        is one call returning only new entries). Ends after the job has finished and its last entries are
        read. ``async for entry in ml.follow_training_job_logs(job_id): print(entry.message)``"""
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be more than 0, got {poll_seconds}")
        token = ""
        while True:
            # The status is read before the log: a job that finished before this read has logged its last
            # entry already, so nothing is missed by stopping after it.
            finished = (await self.get_training_job(id)).status in FINISHED
            entries, token = await self._entries_since(id, token)
            for entry in entries:
                yield entry
            if finished:
                return
            await asyncio.sleep(poll_seconds)

    @rpc
    async def upload_training_script(
        self,
        org_id: str,
        registry_item_id: str,
        version: str,
        entrypoint: str,
        package: bytes,
        model_type: Optional[ModelType] = None,
        model_framework: Optional[ModelFramework] = None,
        description: str = "",
    ) -> TrainingScript:
        """Uploads a training script package (tar or tar.gz bytes) as registry_item_id@version."""
        response = await self._stub.UploadTrainingScript(
            ml_training_pb2.UploadTrainingScriptRequest(
                organization_id=org_id,
                registry_item_id=registry_item_id,
                version=version,
                entrypoint=entrypoint,
                package=bytes(package),
                model_type=int(model_type or 0),
                model_framework=int(model_framework or 0),
                description=description,
            ),
            metadata=await self._connection.metadata(),
        )
        return from_message(TrainingScript, response.script)

    @rpc
    async def list_training_scripts(self, org_id: str, registry_item_id: str = "") -> List[TrainingScript]:
        response = await self._stub.ListTrainingScripts(
            ml_training_pb2.ListTrainingScriptsRequest(organization_id=org_id, registry_item_id=registry_item_id),
            metadata=await self._connection.metadata(),
        )
        return [from_message(TrainingScript, s) for s in response.scripts]

    @rpc
    async def delete_training_script(self, org_id: str, registry_item_id: str, version: str) -> None:
        """Deletes one version of a training script (FAILED_PRECONDITION while a pending job needs it)."""
        await self._stub.DeleteTrainingScript(
            ml_training_pb2.DeleteTrainingScriptRequest(organization_id=org_id, registry_item_id=registry_item_id, version=version),
            metadata=await self._connection.metadata(),
        )

    @rpc
    async def list_model_artefacts(self, org_id: str, model_name: str = "") -> List[ModelArtefact]:
        response = await self._stub.ListModelArtefacts(
            ml_training_pb2.ListModelArtefactsRequest(organization_id=org_id, model_name=model_name),
            metadata=await self._connection.metadata(),
        )
        return [from_message(ModelArtefact, a) for a in response.artefacts]

    @rpc
    async def download_model_artefact(self, org_id: str, model_name: str, model_version: str, file_name: str) -> bytes:
        """One file of a stored model, for example model.onnx or labels.txt."""
        chunks = []
        request = ml_training_pb2.DownloadModelArtefactRequest(
            organization_id=org_id, model_name=model_name, model_version=model_version, file_name=file_name
        )
        async for message in self._stub.DownloadModelArtefact(request, metadata=await self._connection.metadata()):
            chunks.append(message.chunk)
        return b"".join(chunks)
