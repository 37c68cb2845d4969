// A custom training script that finishes at once, for pages that need a completed job: it writes a
// model.onnx (not a real network: only its name matters to the page and to config validation) and a
// labels.txt into the job's output folder.
export const instantTrainer = `#!/bin/sh
for a in "$@"; do case "$a" in --model_output_directory=*) out="\${a#*=}";; esac; done
echo '{"event": "progress", "epoch": 1, "total_epochs": 1, "loss": 0.2, "metric_name": "accuracy", "metric": 0.9, "images_per_second": 10, "elapsed_seconds": 1}'
printf 'onnx' > "$out/model.onnx"
printf 'red\\nblue\\n' > "$out/labels.txt"
`;
