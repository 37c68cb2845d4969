"""Small networks trained from scratch: no pretrained weights can be fetched where the cloud runs."""
import torch
from torch import nn


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Backbone(nn.Module):
    """Four conv blocks with three 2x poolings: stride 8, 64 channels."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            conv_block(3, 16), nn.MaxPool2d(2),
            conv_block(16, 32), nn.MaxPool2d(2),
            conv_block(32, 64), nn.MaxPool2d(2),
            conv_block(64, 64), conv_block(64, 64),
        )

    def forward(self, x):
        return self.layers(x)


class Classifier(nn.Module):
    """Returns logits; ExportedClassifier adds softmax or sigmoid for the ONNX artefact."""

    def __init__(self, classes):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(64, classes)

    def forward(self, x):
        features = self.backbone(x).mean(dim=(2, 3))
        return self.head(features)


class ExportedClassifier(nn.Module):
    def __init__(self, model, multi_label):
        super().__init__()
        self.model = model
        self.multi_label = multi_label

    def forward(self, x):
        logits = self.model(x)
        return torch.sigmoid(logits) if self.multi_label else torch.softmax(logits, dim=1)


class Detector(nn.Module):
    """A one-scale grid detector (YOLO-like, one box per cell at stride 8).

    Raw output per cell: objectness, x/y offset in the cell, width, height (fractions of the image,
    through a sigmoid) and class logits.
    """

    def __init__(self, classes):
        super().__init__()
        self.classes = classes
        self.backbone = Backbone()
        self.head = nn.Sequential(conv_block(64, 64), nn.Conv2d(64, 5 + classes, 1))

    def forward(self, x):
        return self.head(self.backbone(x))


def decode(raw):
    """Raw grid output -> boxes [B, S*S, 4] (x_min, y_min, x_max, y_max, normalized) and
    scores [B, S*S, C] (objectness times class probability)."""
    b, _, sy, sx = raw.shape
    gy = torch.arange(sy, dtype=raw.dtype).view(1, sy, 1).expand(b, sy, sx)
    gx = torch.arange(sx, dtype=raw.dtype).view(1, 1, sx).expand(b, sy, sx)
    obj = torch.sigmoid(raw[:, 0])
    cx = (gx + torch.sigmoid(raw[:, 1])) / sx
    cy = (gy + torch.sigmoid(raw[:, 2])) / sy
    w = torch.sigmoid(raw[:, 3])
    h = torch.sigmoid(raw[:, 4])
    boxes = torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], dim=-1).clamp(0, 1)
    probs = torch.softmax(raw[:, 5:], dim=1)
    scores = obj.unsqueeze(1) * probs
    return boxes.reshape(b, sy * sx, 4), scores.permute(0, 2, 3, 1).reshape(b, sy * sx, -1)


class ExportedDetector(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return decode(self.model(x))
