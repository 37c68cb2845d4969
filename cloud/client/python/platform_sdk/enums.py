"""The API's enums as Python IntEnums, built from the generated protos so that they never drift from them.
Members keep the proto names (``Order.ORDER_ASCENDING``, ``ModelType.MODEL_TYPE_OBJECT_DETECTION``)."""

from enum import IntEnum

from ._proto import data_pb2, ml_training_pb2


def _enum(name: str, wrapper) -> type:  # type: ignore[no-untyped-def]
    return IntEnum(name, dict(wrapper.items()), module=__name__)


Order = _enum("Order", data_pb2.Order)
TagsFilterType = _enum("TagsFilterType", data_pb2.TagsFilterType)
TabularDataSourceType = _enum("TabularDataSourceType", data_pb2.TabularDataSourceType)
TrainingStatus = _enum("TrainingStatus", ml_training_pb2.TrainingStatus)
ModelType = _enum("ModelType", ml_training_pb2.ModelType)
ModelFramework = _enum("ModelFramework", ml_training_pb2.ModelFramework)

__all__ = ["ModelFramework", "ModelType", "Order", "TabularDataSourceType", "TagsFilterType", "TrainingStatus"]
