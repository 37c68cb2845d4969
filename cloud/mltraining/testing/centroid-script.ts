// A custom training script package for the end-to-end test: a real (if simple) learner in plain
// Python + Pillow. It learns one mean colour per label from the exported dataset, reports validation
// accuracy through the progress protocol and writes model.json and labels.txt.
export const centroidTraining = `"""Nearest-colour-centroid classifier trained from an exported dataset."""
import argparse, json, os, random
from PIL import Image


def salient_colour(path):
    with Image.open(path) as img:
        pixels = list(img.convert("RGB").getdata())
    # Shapes are saturated; the background is grey.
    coloured = [p for p in pixels if max(p) - min(p) > 60] or pixels
    return [sum(p[c] for p in coloured) / len(coloured) for c in range(3)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset_file", required=True)
    parser.add_argument("--model_output_directory", required=True)
    parser.add_argument("--validation_fraction", type=float, default=0.25)
    args, _ = parser.parse_known_args()
    base = os.path.dirname(args.dataset_file)
    samples = []
    with open(args.dataset_file) as f:
        for line in f:
            entry = json.loads(line)
            labels = [a["annotation_label"] for a in entry["classification_annotations"]]
            if len(labels) == 1:
                samples.append((os.path.join(base, entry["image_path"]), labels[0]))
    random.Random(3).shuffle(samples)
    cut = int(len(samples) * (1 - args.validation_fraction))
    train, val = samples[:cut], samples[cut:]
    sums = {}
    for path, label in train:
        colour = salient_colour(path)
        acc = sums.setdefault(label, [0.0, 0.0, 0.0, 0])
        for c in range(3):
            acc[c] += colour[c]
        acc[3] += 1
    centroids = {label: [acc[c] / acc[3] for c in range(3)] for label, acc in sums.items()}

    def predict(colour):
        return min(centroids, key=lambda l: sum((colour[c] - centroids[l][c]) ** 2 for c in range(3)))

    correct = sum(predict(salient_colour(path)) == label for path, label in val)
    accuracy = correct / max(len(val), 1)
    print(json.dumps({"event": "progress", "epoch": 1, "total_epochs": 1, "loss": 0.0, "metric_name": "accuracy",
                      "metric": accuracy, "images_per_second": 0, "elapsed_seconds": 0}), flush=True)
    print(json.dumps({"event": "metrics", "metrics": {"accuracy": accuracy}}), flush=True)
    os.makedirs(args.model_output_directory, exist_ok=True)
    with open(os.path.join(args.model_output_directory, "model.json"), "w") as f:
        json.dump({"centroids": centroids}, f)
    with open(os.path.join(args.model_output_directory, "labels.txt"), "w") as f:
        f.write("\\n".join(sorted(centroids)) + "\\n")


if __name__ == "__main__":
    main()
`;
