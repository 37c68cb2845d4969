"""Dataset versions, COCO / YOLO / JSONL export and import, and MCAP export, through the Python client."""

import json
import os
import struct
import tempfile
import zipfile
import zlib

import grpc
import pytest

from helpers import CAMERA, SENSOR, pairs, raises_grpc, unique
from platform_sdk import DatasetSplit, DatasetVersion, Filter, ModelType
from platform_sdk.dataset_transfer import extract_zip


def png(width: int, height: int, shade: int = 0) -> bytes:
    """A grey PNG of the given size, made by hand (no imaging library needed)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes([shade]) * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


async def _dataset(data, tenancy, name):
    dataset_id = await data.create_dataset(unique(name), tenancy.org_a)
    big = await data.binary_data_capture_upload(png(640, 480, 10), tenancy.part_a, CAMERA, unique("cam"), "GetImages", ".png")
    small = await data.binary_data_capture_upload(png(100, 50, 20), tenancy.part_a, CAMERA, unique("cam"), "GetImages", ".png")
    await data.add_binary_data_to_dataset_by_ids([big, small], dataset_id)
    await data.add_bounding_box_to_image_by_id(big, "car", 0.1, 0.2, 0.5, 0.6)
    await data.add_bounding_box_to_image_by_id(small, "person", 0.0, 0.0, 0.5, 1.0)
    return dataset_id, big, small


async def test_versions_freeze_and_split(tenancy, owner):
    data = owner.data_client
    dataset_id, big, _ = await _dataset(data, tenancy, "py-versions")
    split = DatasetSplit(train=0.5, valid=0.5, test=0.0, seed=7)
    first = await data.create_dataset_version(dataset_id, split)
    assert isinstance(first, DatasetVersion)
    assert (first.version, first.image_count, first.labels) == (1, 2, ["car", "person"])
    assert first.split == split
    again = await data.create_dataset_version(dataset_id, split)
    _, members_1 = await data.get_dataset_version(dataset_id, 1)
    _, members_2 = await data.get_dataset_version(dataset_id, again.version)
    assert sorted((m.binary_data_id, m.split) for m in members_1) == sorted((m.binary_data_id, m.split) for m in members_2)
    by_id = {m.binary_data_id: m for m in members_1}
    assert (by_id[big].width, by_id[big].height) == (640, 480)
    await data.add_bounding_box_to_image_by_id(big, "later", 0.0, 0.0, 1.0, 1.0)
    assert (await data.get_dataset_version(dataset_id, 1))[1] == members_1
    assert [v.version for v in await data.list_dataset_versions(dataset_id)] == [1, 2]
    with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT, "must be 1"):
        await data.create_dataset_version(dataset_id, DatasetSplit(train=0.9, valid=0.9))


async def test_coco_and_yolo_export_of_the_known_box(tenancy, owner):
    data = owner.data_client
    dataset_id, big, _ = await _dataset(data, tenancy, "py-export")
    version = await data.create_dataset_version(dataset_id, DatasetSplit(train=1.0, seed=1))
    with tempfile.TemporaryDirectory() as out:
        await data.export_dataset(dataset_id, os.path.join(out, "coco"), "coco", version.version)
        with open(os.path.join(out, "coco", "train", "_annotations.coco.json")) as f:
            doc = json.load(f)
        image = next(i for i in doc["images"] if i["binary_data_id"] == big)
        box = next(a for a in doc["annotations"] if a["image_id"] == image["id"])
        assert box["bbox"] == [64, 96, 256, 192] and box["category_id"] == 0
        assert [c["name"] for c in doc["categories"]] == ["car", "person"]
        files = await data.export_dataset(dataset_id, os.path.join(out, "yolo"), "yolo", version.version)
        assert f"labels/train/{big}.txt" in files
        with open(os.path.join(out, "yolo", "labels", "train", f"{big}.txt")) as f:
            assert f.read() == "0 0.3 0.4 0.4 0.4\n"
        zip_path = os.path.join(out, "v.zip")
        assert await data.export_dataset(dataset_id, zip_path, "jsonl", version.version) == []
        assert "dataset.jsonl" in zipfile.ZipFile(zip_path).namelist()
    with pytest.raises(ValueError, match="format must be"):
        await data.export_dataset(dataset_id, "x", "voc")


async def test_round_trip_and_refused_import(tenancy, owner):
    data = owner.data_client
    source_id, _, _ = await _dataset(data, tenancy, "py-rt-src")
    target_id = await data.create_dataset(unique("py-rt-dst"), tenancy.org_a)

    async def boxes(dataset_id):
        records, _, _ = await data.binary_data_by_filter(Filter(dataset_id=dataset_id), limit=50)
        return sorted(
            (zlib.crc32(r.binary), b.label, round(b.x_min_normalized, 9), round(b.y_max_normalized, 9))
            for r in records
            for b in r.metadata.annotations.bboxes
        )

    with tempfile.TemporaryDirectory() as out:
        await data.export_dataset(source_id, os.path.join(out, "yolo"), "yolo")
        result = await data.import_dataset(target_id, os.path.join(out, "yolo"), "yolo", tenancy.part_a)
        assert (result.image_count, result.bounding_box_count) == (2, 2)
        assert await boxes(target_id) == await boxes(source_id)

        bad = os.path.join(out, "bad.zip")
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("train/a.png", png(100, 50))
            coco = {
                "images": [{"id": 1, "file_name": "a.png", "width": 100, "height": 50}],
                "annotations": [{"id": 3, "image_id": 1, "category_id": 0, "bbox": [90, 10, 20, 10]}],
                "categories": [{"id": 0, "name": "thing"}],
            }
            z.writestr("train/_annotations.coco.json", json.dumps(coco))
        empty = await data.create_dataset(unique("py-refused"), tenancy.org_a)
        with raises_grpc(grpc.StatusCode.INVALID_ARGUMENT, r"train/_annotations\.coco\.json: line 1: annotations\[0\] \(id 3\)\.bbox .* is outside"):
            await data.import_dataset(empty, bad, "coco", tenancy.part_a)
        assert (await data.binary_data_by_filter(Filter(dataset_id=empty), count_only=True))[1] == 0


def test_client_extraction_refuses_unsafe_zips():
    with tempfile.TemporaryDirectory() as out:
        evil = os.path.join(out, "evil.zip")
        with zipfile.ZipFile(evil, "w") as z:
            z.writestr("ok.txt", "fine")
            z.writestr("../escape.txt", "outside")
        with pytest.raises(ValueError, match=r"\.\./escape\.txt: has a \.\./ path segment"):
            extract_zip(evil, os.path.join(out, "dest"))
        assert not os.path.exists(os.path.join(out, "escape.txt"))
        assert not os.path.exists(os.path.join(out, "dest", "ok.txt"))
        link = os.path.join(out, "link.zip")
        with zipfile.ZipFile(link, "w") as z:
            info = zipfile.ZipInfo("link")
            info.external_attr = (0o120777 << 16)
            z.writestr(info, "/etc/passwd")
        with pytest.raises(ValueError, match="symbolic link"):
            extract_zip(link, os.path.join(out, "dest2"))


async def test_mcap_export_and_training_on_a_version(tenancy, owner):
    data = owner.data_client
    component = unique("thermo")
    await data.tabular_data_capture_upload([{"readings": {"c": i}} for i in range(3)], tenancy.part_a, SENSOR, component, "Readings", pairs(3))
    with tempfile.TemporaryDirectory() as out:
        path = os.path.join(out, "run.mcap")
        size = await data.export_mcap(path, Filter(component_name=component))
        with open(path, "rb") as f:
            content = f.read()
        assert size == len(content)
        assert content.startswith(b"\x89MCAP0\r\n") and content.endswith(b"\x89MCAP0\r\n")
        assert b"platform.TabularReading" in content

    dataset_id, _, _ = await _dataset(data, tenancy, "py-train")
    version = await data.create_dataset_version(dataset_id)
    ml = owner.ml_training_client
    job = await ml.submit_training_job(
        tenancy.org_a, dataset_id, unique("m"), "1", ModelType.MODEL_TYPE_OBJECT_DETECTION, ["car"], dataset_version=version.version
    )
    assert (await ml.get_training_job(job)).dataset_version == version.version
    await ml.cancel_training_job(job)
