// Custom training scripts used by the tests (POSIX sh, so they start in milliseconds).
const parseArgs = `for a in "$@"; do
  case "$a" in
    --dataset_file=*) DATASET="\${a#*=}" ;;
    --model_output_directory=*) OUT="\${a#*=}" ;;
    --greeting=*) GREETING="\${a#*=}" ;;
  esac
done
`;

/** Counts the dataset's lines and writes a model file plus a note of what it was given. */
export const writerScript = `#!/bin/sh
${parseArgs}
echo "training on $(wc -l < "$DATASET") images"
echo '{"event": "progress", "epoch": 1, "total_epochs": 1, "loss": 0.5, "metric_name": "accuracy", "metric": 0.75, "images_per_second": 10, "elapsed_seconds": 1}'
mkdir -p "$OUT/extra"
printf 'fake-onnx' > "$OUT/model.onnx"
printf '%s\\n' "$GREETING" > "$OUT/extra/greeting.txt"
head -n 1 "$DATASET" > "$OUT/first-annotation.jsonl"
echo "wrote the model"
`;

/**
 * Starts a child that sleeps and waits: cancel must end both. (Tests find the child's host pid with
 * testing/processes.ts jobProcesses: inside its pid namespace the script does not know it.)
 */
export const blockerScript = `#!/bin/sh
${parseArgs}
sleep 600 &
echo "blocking"
wait
`;

/** Fails with a message on stderr. */
export const failingScript = `#!/bin/sh
echo "something went wrong: no GPU found" >&2
exit 7
`;

/** Exits successfully without writing a model. */
export const lazyScript = `#!/bin/sh
echo "done, but nothing written"
`;

/**
 * Like blockerScript, but ignores SIGTERM (and so does its child, which inherits that), so that only
 * the SIGKILL after the grace period ends them: CANCELING lasts that long and can be observed.
 */
export const stubbornScript = `#!/bin/sh
${parseArgs}
trap '' TERM
sleep 600 &
while :; do sleep 1; done
`;

/**
 * Reports a progress event and, right after it, its final metrics: the final metrics must be what the
 * job keeps, even though the progress event's handler (which writes a log line first) is slower.
 */
export const finalMetricsScript = `#!/bin/sh
${parseArgs}
echo '{"event": "progress", "epoch": 1, "total_epochs": 1, "loss": 0.5, "metric_name": "accuracy", "metric": 0.5, "images_per_second": 10, "elapsed_seconds": 1}'
echo '{"event": "metrics", "metrics": {"accuracy": 0.93, "f1": 0.9}}'
printf 'fake-onnx' > "$OUT/model.onnx"
`;
