"""Single-label and multi-label classification training."""
import time

import torch
from torch import nn

from . import protocol
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


def evaluate(model, x, y, multi_label):
    model.eval()
    with torch.no_grad():
        logits = model(x)
    if not multi_label:
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
        return "accuracy", accuracy, {"accuracy": accuracy}
    predicted = (torch.sigmoid(logits) >= 0.5).float()
    exact = (predicted == y).all(dim=1).float().mean().item()
    per_label = (predicted == y).float().mean().item()
    tp = (predicted * y).sum().item()
    precision = tp / max(predicted.sum().item(), 1e-9)
    recall = tp / max(y.sum().item(), 1e-9)
    f1 = 2 * precision * recall / max(precision + recall, 1e-9)
    return "exact_match", exact, {"exact_match": exact, "label_accuracy": per_label, "f1": f1}


def augment(batch):
    # Horizontal flips keep colour/shape labels valid and help the tiny datasets this trains on.
    flip = torch.rand(batch.shape[0]) < 0.5
    batch = batch.clone()
    batch[flip] = batch[flip].flip(dims=[3])
    return batch


def train(entries, labels, options, multi_label):
    x_train, y_train, x_val, y_val = prepare(entries, labels, multi_label, options.image_size,
                                             options.validation_fraction, options.seed)
    protocol.log(f"training on {len(x_train)} images, validating on {len(x_val)}; labels: {', '.join(labels)}")
    model = Classifier(len(labels))
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=1e-4)
    loss_fn = nn.BCEWithLogitsLoss() if multi_label else nn.CrossEntropyLoss()
    started = time.monotonic()
    trained, training_seconds = 0, 0.0
    metrics = {}
    batches = (len(x_train) + options.batch_size - 1) // options.batch_size
    # Validation after these batches of each epoch (evaluations_per_epoch > 1 gives a finer time-to-metric).
    checkpoints = {max(1, round(batches * k / options.evaluations_per_epoch)) for k in range(1, options.evaluations_per_epoch + 1)}
    for epoch in range(1, options.epochs + 1):
        model.train()
        order = torch.randperm(len(x_train))
        total, seen = 0.0, 0
        for batch, start in enumerate(range(0, len(order), options.batch_size), 1):
            idx = order[start:start + options.batch_size]
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
            name, value, metrics = evaluate(model, x_val, y_val, multi_label)
            model.train()
            elapsed = time.monotonic() - started
            # images/s counts training steps only, not validation.
            protocol.progress(epoch, options.epochs, total / seen, name, value, trained / training_seconds, elapsed,
                              epoch_fraction=epoch - 1 + batch / batches)
            if options.target_metric is not None and value >= options.target_metric:
                protocol.log(f"validation {name} {value:.3f} reached the target {options.target_metric}; stopping")
                return ExportedClassifier(model, multi_label), metrics, (1, 3, options.image_size, options.image_size), ["probabilities"]
    return ExportedClassifier(model, multi_label), metrics, (1, 3, options.image_size, options.image_size), ["probabilities"]
