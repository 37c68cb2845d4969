// A training job's curves. The job's `progress` holds only its latest epoch, but the service logs every
// progress event as a line (`epoch 3/10: loss 0.4123, validation accuracy 0.8500, 120 images/s`), so
// the whole curve is read back from the log, and the latest progress is added while the log catches up.
import type { TrainingJobLogEntry, TrainingProgress } from '../../../gen/platform/app/mltraining/v1/ml_training.js';

export interface CurvePoint {
  /** The epoch (several evaluations per epoch share one; they keep their order). */
  epoch: number;
  totalEpochs: number;
  loss: number;
  metricName: string;
  metric: number;
}

const LINE = /^epoch (\d+)\/(\d+): loss (-?[\d.]+(?:e[-+]?\d+)?|nan|inf), validation (\S+) (-?[\d.]+(?:e[-+]?\d+)?|nan|inf),/i;

export function pointOfLine(message: string): CurvePoint | undefined {
  const m = LINE.exec(message);
  if (!m) return undefined;
  return { epoch: Number(m[1]), totalEpochs: Number(m[2]), loss: Number(m[3]), metricName: m[4], metric: Number(m[5]) };
}

/** The curve from the job's log lines (oldest first), ending with `latest` unless the log has it. */
export function curveOf(logs: TrainingJobLogEntry[], latest: TrainingProgress | undefined): CurvePoint[] {
  const points = logs.flatMap((l) => {
    const p = pointOfLine(l.message);
    return p ? [p] : [];
  });
  if (latest && latest.totalEpochs > 0) {
    const last = points.at(-1);
    const same = last && last.epoch === latest.epoch && Math.abs(last.loss - latest.loss) < 5e-5 && Math.abs(last.metric - latest.validationMetric) < 5e-5;
    if (!same && (!last || latest.epoch >= last.epoch)) {
      points.push({
        epoch: latest.epoch,
        totalEpochs: latest.totalEpochs,
        loss: latest.loss,
        metricName: latest.validationMetricName,
        metric: latest.validationMetric,
      });
    }
  }
  return points;
}
