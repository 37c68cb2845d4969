"""Entry point of the built-in trainer: the ML training service runs it as a child process.

    python3 train_builtin.py --dataset_file=DIR/dataset.jsonl --model_output_directory=OUT \
        --model_type=single_label_classification --labels=red,green,blue [--epochs=N ...]

It writes OUT/model.onnx, OUT/labels.txt and OUT/metrics.json, and reports on stdout with the line
protocol of platform_training/protocol.py. Exit code 2 means the dataset cannot train the model.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from platform_training import protocol  # noqa: E402
from platform_training.data import DatasetError, read_annotations  # noqa: E402


def parse():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--dataset_file", required=True)
    p.add_argument("--model_output_directory", required=True)
    p.add_argument("--model_type", required=True,
                   choices=["single_label_classification", "multi_label_classification", "object_detection"])
    p.add_argument("--labels", required=True, help="comma-separated labels to train on")
    p.add_argument("--epochs", type=int, default=0, help="0 (default) chooses them from the dataset's size")
    p.add_argument("--batch_size", type=int, default=0, help="0 (default) chooses it from the dataset's size")
    p.add_argument("--early_stopping_patience", type=int, default=None,
                   help="epochs without a better validation before stopping (0: never); default a quarter of the epochs, at least 10")
    p.add_argument("--learning_rate", type=float, default=3e-3)
    p.add_argument("--image_size", type=int, default=64)
    p.add_argument("--validation_fraction", type=float, default=0.2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--num_threads", type=int, default=0, help="0 lets PyTorch choose")
    p.add_argument("--evaluations_per_epoch", type=int, default=1,
                   help="validations per epoch (classification); more give a finer time-to-metric")
    p.add_argument("--target_metric", type=float, default=None,
                   help="stop early once the validation metric reaches this value")
    return p.parse_args()


def export(model, shape, outputs, directory):
    import torch

    path = os.path.join(directory, "model.onnx")
    model.eval()
    dynamic = {"image": {0: "batch"}, **{name: {0: "batch"} for name in outputs}}
    torch.onnx.export(model, torch.zeros(*shape), path, input_names=["image"], output_names=outputs,
                      dynamic_axes=dynamic, opset_version=13)
    try:
        import onnx

        onnx.checker.check_model(onnx.load(path))
    except ImportError:
        protocol.log("python onnx package missing; the exported model was not checked", "warn")
    return path


def main():
    options = parse()
    protocol.exit_with_parent()
    import torch

    torch.manual_seed(options.seed)
    if options.num_threads > 0:
        torch.set_num_threads(options.num_threads)
    labels = [label for label in options.labels.split(",") if label]
    if len(labels) < (2 if options.model_type == "single_label_classification" else 1):
        protocol.log("single-label classification needs at least two labels", "error")
        return 2
    try:
        entries = read_annotations(options.dataset_file)
        protocol.log(f"read {len(entries)} annotated images; PyTorch {torch.__version__}, "
                     f"{torch.get_num_threads()} threads")
        if options.model_type == "object_detection":
            from platform_training import detect

            model, metrics, shape, outputs = detect.train(entries, labels, options)
        else:
            from platform_training import classify

            multi = options.model_type == "multi_label_classification"
            model, metrics, shape, outputs = classify.train(entries, labels, options, multi)
    except DatasetError as err:
        protocol.log(str(err), "error")
        return 2
    os.makedirs(options.model_output_directory, exist_ok=True)
    export(model, shape, outputs, options.model_output_directory)
    with open(os.path.join(options.model_output_directory, "labels.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(labels) + "\n")
    with open(os.path.join(options.model_output_directory, "metrics.json"), "w", encoding="utf-8") as f:
        json.dump(metrics, f)
    protocol.emit("metrics", metrics=metrics)
    protocol.log("exported model.onnx and labels.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
