"""The generated message and stub modules (``npm run gen`` writes them to ``_gen/``, which is not committed)."""

try:
    from ._gen.platform.app.data.v1 import data_pb2, data_pb2_grpc
    from ._gen.platform.app.dataset.v1 import dataset_pb2, dataset_pb2_grpc
    from ._gen.platform.app.datasync.v1 import data_sync_pb2, data_sync_pb2_grpc
    from ._gen.platform.app.mltraining.v1 import ml_training_pb2, ml_training_pb2_grpc
    from ._gen.platform.rpc.v1 import auth_pb2, auth_pb2_grpc
except ImportError as err:  # pragma: no cover - only on a checkout that was never generated
    raise ImportError(
        "platform_sdk's generated protobuf code is missing: run `npm run gen` in the repository "
        "(needs protoc and grpc_python_plugin: apt-get install protobuf-compiler protobuf-compiler-grpc)"
    ) from err

__all__ = [
    "auth_pb2",
    "auth_pb2_grpc",
    "data_pb2",
    "data_pb2_grpc",
    "data_sync_pb2",
    "data_sync_pb2_grpc",
    "dataset_pb2",
    "dataset_pb2_grpc",
    "ml_training_pb2",
    "ml_training_pb2_grpc",
]
