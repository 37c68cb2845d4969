"""Object detection training: a grid detector, validated with mean average precision at IoU 0.5."""
import time

import torch
import torch.nn.functional as F
from torchvision.ops import batched_nms, box_iou

from . import protocol
from .data import DatasetError, boxes, load_image, split
from .networks import Detector, ExportedDetector, decode

STRIDE = 8


def prepare(entries, labels, options):
    images, targets = [], []
    for entry in entries:
        found = boxes(entry, labels)
        images.append(load_image(entry["image_path"], options.image_size))
        targets.append(found)
    counts = {label: 0 for label in labels}
    for found in targets:
        for cls, _ in found:
            counts[labels[cls]] += 1
    missing = [label for label, n in counts.items() if n == 0]
    if missing:
        raise DatasetError(f"no bounding box in the dataset carries the label(s) {', '.join(missing)}")
    if len(images) < 4:
        raise DatasetError(f"{len(images)} images; at least 4 are needed")
    protocol.log("boxes per label: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    train, val = split(len(images), options.validation_fraction, options.seed)
    x = torch.stack(images)
    return x[train], [targets[i] for i in train], x[val], [targets[i] for i in val]


def encode(targets, grid, classes):
    """Ground truth -> per-cell tensors: objectness [B,S,S], box [B,4,S,S], class [B,S,S]."""
    b = len(targets)
    obj = torch.zeros(b, grid, grid)
    box = torch.zeros(b, 4, grid, grid)
    cls = torch.zeros(b, grid, grid, dtype=torch.long)
    for i, found in enumerate(targets):
        for c, (x0, y0, x1, y1) in found:
            cx, cy = (x0 + x1) / 2 * grid, (y0 + y1) / 2 * grid
            gx, gy = min(int(cx), grid - 1), min(int(cy), grid - 1)
            obj[i, gy, gx] = 1
            box[i, :, gy, gx] = torch.tensor([cx - gx, cy - gy, x1 - x0, y1 - y0])
            cls[i, gy, gx] = c
    return obj, box, cls


def loss_of(raw, obj, box, cls):
    positive = obj > 0
    # Positives are a few cells among many: average the two groups separately so both count.
    obj_loss = F.binary_cross_entropy_with_logits(raw[:, 0], obj, reduction="none")
    obj_loss = obj_loss[positive].mean() + obj_loss[~positive].mean() if positive.any() else obj_loss.mean()
    if not positive.any():
        return obj_loss
    predicted = torch.sigmoid(raw[:, 1:5]).permute(0, 2, 3, 1)[positive]
    box_loss = F.l1_loss(predicted, box.permute(0, 2, 3, 1)[positive]) * 5
    class_loss = F.cross_entropy(raw[:, 5:].permute(0, 2, 3, 1)[positive], cls[positive])
    return obj_loss + box_loss + class_loss


def detections(model, x, score_threshold=0.05, iou=0.5):
    model.eval()
    with torch.no_grad():
        all_boxes, all_scores = decode(model(x))
    found = []
    for boxes_i, scores_i in zip(all_boxes, all_scores):
        score, cls = scores_i.max(dim=1)
        keep = score >= score_threshold
        b, s, c = boxes_i[keep], score[keep], cls[keep]
        kept = batched_nms(b, s, c, iou)
        found.append((b[kept], s[kept], c[kept]))
    return found


def mean_average_precision(found, targets, classes, iou_threshold=0.5):
    aps = []
    for c in range(classes):
        scored = []  # (score, is_true_positive)
        total = 0
        for (boxes_i, scores_i, cls_i), truth in zip(found, targets):
            gt = torch.tensor([coords for k, coords in truth if k == c], dtype=torch.float32).reshape(-1, 4)
            total += len(gt)
            mine = cls_i == c
            b, s = boxes_i[mine], scores_i[mine]
            used = set()
            for j in s.argsort(descending=True).tolist():
                hit = False
                if len(gt):
                    overlaps = box_iou(b[j:j + 1], gt)[0]
                    best = int(overlaps.argmax())
                    if overlaps[best] >= iou_threshold and best not in used:
                        used.add(best)
                        hit = True
                scored.append((float(s[j]), hit))
        if total == 0:
            continue
        scored.sort(key=lambda t: -t[0])
        tp, precisions, recalls = 0, [], []
        for rank, (_, hit) in enumerate(scored, 1):
            tp += hit
            precisions.append(tp / rank)
            recalls.append(tp / total)
        # All-point interpolated AP (precision envelope over recall steps).
        ap, previous_recall = 0.0, 0.0
        for k in range(len(scored)):
            if scored[k][1]:
                ap += max(precisions[k:]) * (recalls[k] - previous_recall)
                previous_recall = recalls[k]
        aps.append(ap)
    return sum(aps) / len(aps) if aps else 0.0


def augment(x, targets):
    flip = torch.rand(x.shape[0]) < 0.5
    x = x.clone()
    x[flip] = x[flip].flip(dims=[3])
    flipped = []
    for i, found in enumerate(targets):
        if flip[i]:
            found = [(c, (1 - x1, y0, 1 - x0, y1)) for c, (x0, y0, x1, y1) in found]
        flipped.append(found)
    return x, flipped


def train(entries, labels, options):
    if options.image_size % STRIDE:
        raise DatasetError(f"image_size must be a multiple of {STRIDE} for object detection")
    x_train, t_train, x_val, t_val = prepare(entries, labels, options)
    grid = options.image_size // STRIDE
    protocol.log(f"training on {len(x_train)} images, validating on {len(x_val)}; grid {grid}x{grid}")
    model = Detector(len(labels))
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=1e-4)
    started, trained, training_seconds, metrics = time.monotonic(), 0, 0.0, {}
    for epoch in range(1, options.epochs + 1):
        model.train()
        order = torch.randperm(len(x_train)).tolist()
        total = 0.0
        for start in range(0, len(order), options.batch_size):
            idx = order[start:start + options.batch_size]
            x, targets = augment(x_train[idx], [t_train[i] for i in idx])
            obj, box, cls = encode(targets, grid, len(labels))
            step_started = time.monotonic()
            optimizer.zero_grad()
            loss = loss_of(model(x), obj, box, cls)
            loss.backward()
            optimizer.step()
            training_seconds += time.monotonic() - step_started
            total += loss.item() * len(idx)
            trained += len(idx)
        value = mean_average_precision(detections(model, x_val), t_val, len(labels))
        metrics = {"map50": value}
        elapsed = time.monotonic() - started
        protocol.progress(epoch, options.epochs, total / len(x_train), "map50", value, trained / training_seconds, elapsed)
        if options.target_metric is not None and value >= options.target_metric:
            protocol.log(f"validation map50 {value:.3f} reached the target {options.target_metric}; stopping")
            break
    return ExportedDetector(model), metrics, (1, 3, options.image_size, options.image_size), ["boxes", "scores"]
