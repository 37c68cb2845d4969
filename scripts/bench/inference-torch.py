"""Anchor of `npm run bench:inference`: exports the built-in trainer's classifier (seeded, untrained:
the timing does not depend on the weights) to ONNX at argv[1], then times PyTorch eval of one 64x64
image, one thread, and prints {"p50_ms", "p99_ms"} as JSON."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cloud", "mltraining", "python"))

import torch  # noqa: E402

from platform_training.networks import Classifier, ExportedClassifier  # noqa: E402

torch.set_num_threads(1)
torch.manual_seed(1)
model = ExportedClassifier(Classifier(2), False).eval()
size = 64
torch.onnx.export(model, torch.zeros(1, 3, size, size), sys.argv[1], input_names=["image"], output_names=["probabilities"],
                  dynamic_axes={"image": {0: "batch"}, "probabilities": {0: "batch"}}, opset_version=13)
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
x = torch.rand(1, 3, size, size)
times = []
with torch.no_grad():
    for _ in range(20):
        model(x)
    for _ in range(runs):
        t0 = time.perf_counter()
        model(x)
        times.append((time.perf_counter() - t0) * 1000)
times.sort()
print(json.dumps({"p50_ms": times[len(times) // 2], "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))]}))
