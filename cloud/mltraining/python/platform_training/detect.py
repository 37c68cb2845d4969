"""Object detection training: a grid detector, validated with mean average precision at IoU 0.5."""
import time

import torch
import torch.nn.functional as F
from torchvision.ops import batched_nms, box_iou

from . import protocol, schedule
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
    """Flips and shifts of up to an eighth of the side (boxes move with the image and are clipped; a box
    left with under half its area is dropped), and brightness changes of up to 15 %."""
    n, _, h, w = x.shape
    flip = torch.rand(n) < 0.5
    x = x.clone()
    x[flip] = x[flip].flip(dims=[3])
    pad = max(1, h // 8)
    padded = F.pad(x, (pad, pad, pad, pad), mode="replicate")
    dx = torch.randint(0, 2 * pad + 1, (n,)).tolist()
    dy = torch.randint(0, 2 * pad + 1, (n,)).tolist()
    shifted = torch.stack([padded[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(n)])
    brightness = 1 + (torch.rand(n, 1, 1, 1) - 0.5) * 0.3
    moved = []
    for i, found in enumerate(targets):
        ox, oy = (pad - dx[i]) / w, (pad - dy[i]) / h
        kept = []
        for c, (x0, y0, x1, y1) in found:
            if flip[i]:
                x0, x1 = 1 - x1, 1 - x0
            a = (x0 + ox, y0 + oy, x1 + ox, y1 + oy)
            b = (max(0.0, a[0]), max(0.0, a[1]), min(1.0, a[2]), min(1.0, a[3]))
            if b[2] > b[0] and b[3] > b[1] and (b[2] - b[0]) * (b[3] - b[1]) >= 0.5 * (a[2] - a[0]) * (a[3] - a[1]):
                kept.append((c, b))
        moved.append(kept)
    return (shifted * brightness).clamp_(0, 1), moved


def chance(t_train, t_val, classes):
    """What a detector that ignores the image scores: for every label, its mean training box."""
    constant = []
    for c in range(classes):
        boxes_c = [coords for found in t_train for k, coords in found if k == c]
        if boxes_c:
            constant.append((torch.tensor(boxes_c).mean(dim=0), c))
    b = torch.stack([box for box, _ in constant]) if constant else torch.zeros(0, 4)
    found = [(b, torch.ones(len(constant)), torch.tensor([c for _, c in constant], dtype=torch.long))] * len(t_val)
    return mean_average_precision(found, t_val, classes), "one fixed box per label (its mean training box)"


def validation_loss(model, x, targets, grid, classes):
    model.eval()
    with torch.no_grad():
        obj, box, cls = encode(targets, grid, classes)
        return loss_of(model(x), obj, box, cls).item()


def train(entries, labels, options):
    if options.image_size % STRIDE:
        raise DatasetError(f"image_size must be a multiple of {STRIDE} for object detection")
    x_train, t_train, x_val, t_val = prepare(entries, labels, options)
    grid = options.image_size // STRIDE
    batch_size = schedule.batch_size(options, len(x_train))
    total_epochs = schedule.epochs(options, len(x_train), batch_size, min_steps=800)
    patience = schedule.patience(options, total_epochs)
    protocol.log(f"training on {len(x_train)} images, validating on {len(x_val)}; grid {grid}x{grid}; batch size "
                 f"{batch_size}, up to {total_epochs} epochs, early stopping after {patience or 'no'} epochs without "
                 f"a better validation")
    model = Detector(len(labels))
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=1e-4)
    best = schedule.BestCheckpoint(model, "map50", patience)
    started, trained, training_seconds = time.monotonic(), 0, 0.0
    for epoch in range(1, total_epochs + 1):
        model.train()
        order = torch.randperm(len(x_train)).tolist()
        total = 0.0
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            if len(idx) < 2 and len(order) > 1:
                continue  # BatchNorm cannot train on a batch of one
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
        best.offer(epoch, value, validation_loss(model, x_val, t_val, grid, len(labels)), {"map50": value})
        elapsed = time.monotonic() - started
        protocol.progress(epoch, total_epochs, total / len(x_train), "map50", value, trained / max(training_seconds, 1e-9), elapsed)
        if options.target_metric is not None and value >= options.target_metric:
            protocol.log(f"validation map50 {value:.3f} reached the target {options.target_metric}; stopping")
            break
        if best.exhausted():
            protocol.log(f"validation map50 has not improved for {patience} epochs; stopping early at epoch {epoch}")
            break
    metrics = best.restore()
    protocol.log(f"keeping the best checkpoint: epoch {best.epoch}, validation map50 {best.metric:.3f}")
    level, how = chance(t_train, t_val, len(labels))
    metrics = schedule.report_chance(metrics, "map50", level, how)
    return ExportedDetector(model), metrics, (1, 3, options.image_size, options.image_size), ["boxes", "scores"]
