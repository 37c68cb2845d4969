"""Single-label and multi-label classification training."""
import time

import torch
import torch.nn.functional as F
from torch import nn

from . import protocol, schedule
from .data import DatasetError, classification_labels, load_image, split
from .networks import Classifier, ExportedClassifier


def prepare(entries, labels, multi_label, image_size, validation_fraction, seed):
    images, targets, groups = [], [], []
    skipped = 0
    for entry in entries:
        found = classification_labels(entry, labels)
        if not multi_label and len(found) != 1:
            skipped += 1
            continue
        images.append(load_image(entry["image_path"], image_size))
        if multi_label:
            targets.append([1.0 if label in found else 0.0 for label in labels])
            groups.append("|".join(found))
        else:
            targets.append(labels.index(found[0]))
            groups.append(found[0])
    if skipped:
        protocol.log(f"skipped {skipped} images that do not carry exactly one of the labels", "warn")
    present = {label for label in labels if any(g == label or label in g.split("|") for g in groups)}
    missing = [label for label in labels if label not in present]
    if missing:
        raise DatasetError(f"no image in the dataset carries the label(s) {', '.join(missing)}")
    if len(images) < 4:
        raise DatasetError(f"{len(images)} usable images; at least 4 are needed")
    x = torch.stack(images)
    y = torch.tensor(targets, dtype=torch.float32 if multi_label else torch.long)
    train, val = split(len(images), validation_fraction, seed, groups)
    return x[train], y[train], x[val], y[val]


def evaluate(model, x, y, multi_label, loss_fn):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = loss_fn(logits, y).item()
    if not multi_label:
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
        return "accuracy", accuracy, loss, {"accuracy": accuracy}
    predicted = (torch.sigmoid(logits) >= 0.5).float()
    exact = (predicted == y).all(dim=1).float().mean().item()
    per_label = (predicted == y).float().mean().item()
    tp = (predicted * y).sum().item()
    precision = tp / max(predicted.sum().item(), 1e-9)
    recall = tp / max(y.sum().item(), 1e-9)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    return "exact_match", exact, loss, {"exact_match": exact, "label_accuracy": per_label, "f1": f1}


def chance(y_train, y_val, multi_label):
    """What a model that ignores the image scores: always the most common training answer."""
    if not multi_label:
        common = torch.bincount(y_train).argmax()
        return (y_val == common).float().mean().item(), "always answering the most common label"
    rows, counts = torch.unique(y_train, dim=0, return_counts=True)
    common = rows[counts.argmax()]
    return (y_val == common).all(dim=1).float().mean().item(), "always answering the most common label set"


def augment(batch):
    """Flips, shifts of up to an eighth of the side and brightness changes of up to 15 %: all keep colour
    and shape labels true, and they make the few images of a small dataset look like more."""
    n, _, h, w = batch.shape
    flip = torch.rand(n) < 0.5
    batch = batch.clone()
    batch[flip] = batch[flip].flip(dims=[3])
    pad = max(1, h // 8)
    padded = F.pad(batch, (pad, pad, pad, pad), mode="replicate")
    dx = torch.randint(0, 2 * pad + 1, (n,)).tolist()
    dy = torch.randint(0, 2 * pad + 1, (n,)).tolist()
    shifted = torch.stack([padded[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(n)])
    brightness = 1 + (torch.rand(n, 1, 1, 1) - 0.5) * 0.3
    return (shifted * brightness).clamp_(0, 1)


def train(entries, labels, options, multi_label):
    x_train, y_train, x_val, y_val = prepare(entries, labels, multi_label, options.image_size,
                                             options.validation_fraction, options.seed)
    batch_size = schedule.batch_size(options, len(x_train))
    total_epochs = schedule.epochs(options, len(x_train), batch_size, min_steps=400)
    patience = schedule.patience(options, total_epochs)
    protocol.log(f"training on {len(x_train)} images, validating on {len(x_val)}; labels: {', '.join(labels)}; "
                 f"batch size {batch_size}, up to {total_epochs} epochs, early stopping after {patience or 'no'} "
                 f"epochs without a better validation")
    model = Classifier(len(labels))
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=1e-4)
    loss_fn = nn.BCEWithLogitsLoss() if multi_label else nn.CrossEntropyLoss()
    metric_name = "exact_match" if multi_label else "accuracy"
    best = schedule.BestCheckpoint(model, metric_name, patience * options.evaluations_per_epoch)
    started = time.monotonic()
    trained, training_seconds = 0, 0.0
    batches = (len(x_train) + batch_size - 1) // batch_size
    # Validation after these batches of each epoch (evaluations_per_epoch > 1 gives a finer time-to-metric).
    checkpoints = {max(1, round(batches * k / options.evaluations_per_epoch)) for k in range(1, options.evaluations_per_epoch + 1)}
    stop = None
    for epoch in range(1, total_epochs + 1):
        model.train()
        order = torch.randperm(len(x_train))
        total, seen = 0.0, 0
        for batch, start in enumerate(range(0, len(order), batch_size), 1):
            idx = order[start:start + batch_size]
            if len(idx) < 2 and len(order) > 1:
                continue  # BatchNorm cannot train on a batch of one
            step_started = time.monotonic()
            optimizer.zero_grad()
            loss = loss_fn(model(augment(x_train[idx])), y_train[idx])
            loss.backward()
            optimizer.step()
            training_seconds += time.monotonic() - step_started
            total += loss.item() * len(idx)
            seen += len(idx)
            trained += len(idx)
            if batch not in checkpoints:
                continue
            name, value, val_loss, metrics = evaluate(model, x_val, y_val, multi_label, loss_fn)
            best.offer(epoch, value, val_loss, metrics)
            model.train()
            elapsed = time.monotonic() - started
            # images/s counts training steps only, not validation.
            protocol.progress(epoch, total_epochs, total / max(seen, 1), name, value, trained / max(training_seconds, 1e-9),
                              elapsed, epoch_fraction=epoch - 1 + batch / batches)
            if options.target_metric is not None and value >= options.target_metric:
                stop = f"validation {name} {value:.3f} reached the target {options.target_metric}; stopping"
                break
            if best.exhausted():
                stop = (f"validation {name} has not improved for {patience} epochs; stopping early at epoch {epoch}")
                break
        if stop:
            protocol.log(stop)
            break
    metrics = best.restore()
    protocol.log(f"keeping the best checkpoint: epoch {best.epoch}, validation {metric_name} {best.metric:.3f}")
    level, how = chance(y_train, y_val, multi_label)
    metrics = schedule.report_chance(metrics, metric_name, level, how)
    return ExportedClassifier(model, multi_label), metrics, (1, 3, options.image_size, options.image_size), ["probabilities"]
