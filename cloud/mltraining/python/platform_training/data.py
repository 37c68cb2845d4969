"""Reads an exported dataset (images + JSONL annotations) into tensors, and splits it."""
import json
import os
import random

import numpy as np
import torch
from PIL import Image


class DatasetError(Exception):
    """The dataset cannot train the requested model (too few images, missing labels...)."""


def read_annotations(dataset_file):
    base = os.path.dirname(os.path.abspath(dataset_file))
    entries = []
    with open(dataset_file, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as err:
                raise DatasetError(f"{dataset_file} line {number}: not JSON ({err})") from err
            path = entry.get("image_path")
            if not isinstance(path, str):
                raise DatasetError(f"{dataset_file} line {number}: image_path must be a string")
            entry["image_path"] = path if os.path.isabs(path) else os.path.join(base, path)
            entries.append(entry)
    return entries


def load_image(path, size):
    with Image.open(path) as img:
        rgb = img.convert("RGB").resize((size, size), Image.BILINEAR)
        array = np.asarray(rgb, dtype=np.uint8).copy()
    # HWC uint8 -> CHW float in [0, 1]: the exported model takes this layout and range.
    return torch.from_numpy(array).permute(2, 0, 1).float().div_(255.0)


def classification_labels(entry, labels):
    wanted = set(labels)
    return sorted({a.get("annotation_label") for a in entry.get("classification_annotations", [])} & wanted)


def boxes(entry, labels):
    index = {label: i for i, label in enumerate(labels)}
    found = []
    for box in entry.get("bounding_box_annotations", []):
        label = box.get("annotation_label")
        if label not in index:
            continue
        coords = [float(box[k]) for k in ("x_min_normalized", "y_min_normalized", "x_max_normalized", "y_max_normalized")]
        if coords[2] <= coords[0] or coords[3] <= coords[1]:
            continue
        found.append((index[label], coords))
    return found


def split(count, validation_fraction, seed, groups=None):
    """Random split; with groups (one label per item) each group keeps its share in both parts."""
    rng = random.Random(seed)
    buckets = {}
    for i in range(count):
        buckets.setdefault(groups[i] if groups else 0, []).append(i)
    train, val = [], []
    for members in buckets.values():
        rng.shuffle(members)
        n_val = max(1, round(len(members) * validation_fraction)) if len(members) > 1 else 0
        val.extend(members[:n_val])
        train.extend(members[n_val:])
    if not val or not train:
        raise DatasetError(f"{count} images cannot be split into training and validation parts")
    rng.shuffle(train)
    return train, val
