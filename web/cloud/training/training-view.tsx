// Training jobs (MLTrainingService): submit one from a dataset (built-in trainer by model type, or a
// custom script from the registry), list jobs with their status, and for the chosen job its live loss
// and metric curves, its logs, cancel, and the trained model's files to download.
import { useEffect, useState } from 'preact/hooks';
import {
  ModelFramework,
  modelFrameworkToJSON,
  ModelType,
  modelTypeToJSON,
  TrainingStatus,
  trainingStatusToJSON,
  type ModelArtefact,
  type TrainingJobLogEntry,
  type TrainingJobMetadata,
  type TrainingScript,
} from '../../../gen/platform/app/mltraining/v1/ml_training.js';
import type { Dataset } from '../../../gen/platform/app/dataset/v1/dataset.js';
import { datasetApi } from '../api/dataset.js';
import { serverStream } from '../api/stream.js';
import { trainingApi } from '../api/training.js';
import { LineChart } from '../query/line-chart.js';
import type { ViewProps } from '../views.js';
import { curveOf } from './progress-curve.js';
import { parseArguments } from './arguments-text.js';
import { DeployPanel } from './deploy-panel.js';
import { datasetLabels, nextVersion } from './suggestions.js';

const POLL_MS = 1000;
const FINISHED = new Set([TrainingStatus.TRAINING_STATUS_COMPLETED, TrainingStatus.TRAINING_STATUS_FAILED, TrainingStatus.TRAINING_STATUS_CANCELED]);

export const statusText = (s: TrainingStatus) => trainingStatusToJSON(s).replace('TRAINING_STATUS_', '').toLowerCase().replace('_', ' ');
const typeText = (t: ModelType) => modelTypeToJSON(t).replace('MODEL_TYPE_', '').toLowerCase().replaceAll('_', ' ');
const frameworkText = (f: ModelFramework) => modelFrameworkToJSON(f).replace('MODEL_FRAMEWORK_', '').toLowerCase();

function SubmitForm(props: ViewProps & { jobs: TrainingJobMetadata[]; onSubmitted(id: string): void }) {
  const [datasets, setDatasets] = useState<Dataset[]>([]);
  const [scripts, setScripts] = useState<TrainingScript[]>([]);
  const [trainer, setTrainer] = useState('builtin');
  const [error, setError] = useState('');
  // Suggestions: the chosen dataset's labels, and the next free version of the model name typed.
  const [datasetId, setDatasetId] = useState('');
  const [labels, setLabels] = useState<string[]>([]);
  const [tags, setTags] = useState('');
  const [modelName, setModelName] = useState('');
  // The version shown is the suggestion until the user types one. It is worked out while rendering, not
  // set from an effect: an effect runs after paint, and one that landed while a user (or playwright's fill)
  // had just selected the empty field put the suggestion in front of what was typed ("v1v1").
  const [typedVersion, setTypedVersion] = useState<string | undefined>(undefined);
  const modelVersion = typedVersion ?? (modelName.trim() ? nextVersion(props.jobs, modelName.trim()) : '');
  useEffect(() => {
    if (!datasetId) return;
    let live = true;
    datasetLabels(props, datasetId).then((l) => live && setLabels(l), props.showError);
    return () => {
      live = false;
    };
  }, [datasetId]);
  useEffect(() => {
    props.api.call(datasetApi.listByOrganization, { organizationId: props.orgId }).then((r) => {
      setDatasets(r.datasets);
      setDatasetId((d) => d || (r.datasets[0]?.id ?? ''));
    }, props.showError);
    props.api.call(trainingApi.scripts, { organizationId: props.orgId }).then((r) => setScripts(r.scripts), props.showError);
  }, [props.orgId]);

  async function submit(e: Event) {
    e.preventDefault();
    setError('');
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    try {
      const common = { organizationId: props.orgId, datasetId: text('dataset'), modelName: text('modelName'), modelVersion: text('modelVersion') };
      const args = parseArguments(text('arguments'));
      let id: string;
      if (trainer === 'builtin') {
        const tags = text('tags')
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean);
        ({ id } = await props.api.call(trainingApi.submit, { ...common, modelType: Number(text('modelType')) as ModelType, tags, arguments: args }));
      } else {
        const script = scripts[Number(trainer)];
        ({ id } = await props.api.call(trainingApi.submitCustom, {
          ...common,
          registryItemId: script.registryItemId,
          registryItemVersion: script.version,
          arguments: args,
        }));
      }
      props.onSubmitted(id);
    } catch (err) {
      setError((err as Error).message);
    }
  }

  return (
    <form class="submit-job" onSubmit={submit}>
      <h3>Submit a training job</h3>
      <label>
        Dataset
        <select name="dataset" required value={datasetId} onChange={(e) => setDatasetId((e.currentTarget as HTMLSelectElement).value)}>
          {datasets.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Trainer
        <select name="trainer" value={trainer} onChange={(e) => setTrainer((e.currentTarget as HTMLSelectElement).value)}>
          <option value="builtin">built-in (PyTorch, exports ONNX)</option>
          {scripts.map((s, i) => (
            <option key={`${s.registryItemId}@${s.version}`} value={String(i)}>
              script {s.registryItemId} {s.version} ({typeText(s.modelType)}, {frameworkText(s.modelFramework)})
            </option>
          ))}
        </select>
      </label>
      {trainer === 'builtin' && (
        <>
          <label>
            Model type
            <select name="modelType">
              {[ModelType.MODEL_TYPE_SINGLE_LABEL_CLASSIFICATION, ModelType.MODEL_TYPE_MULTI_LABEL_CLASSIFICATION, ModelType.MODEL_TYPE_OBJECT_DETECTION].map(
                (t) => (
                  <option key={t} value={String(t)}>
                    {typeText(t)}
                  </option>
                ),
              )}
            </select>
          </label>
          <label>
            Framework <input name="framework" value="ONNX (trained with PyTorch)" readOnly />
          </label>
          <label>
            Labels (tags or box labels, comma-separated){' '}
            <input name="tags" value={tags} onInput={(e) => setTags((e.currentTarget as HTMLInputElement).value)} />
          </label>
          {labels.length > 0 && (
            <p class="muted" data-testid="dataset-labels">
              in this dataset: {labels.join(', ')}{' '}
              <button type="button" onClick={() => setTags(labels.join(', '))}>
                Use these labels
              </button>
            </p>
          )}
        </>
      )}
      <label>
        Model name <input name="modelName" required value={modelName} onInput={(e) => setModelName((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        Model version <input name="modelVersion" required value={modelVersion} onInput={(e) => setTypedVersion((e.currentTarget as HTMLInputElement).value)} />
      </label>
      <label>
        Arguments (key=value, one per line) <textarea name="arguments" rows={2} placeholder="epochs=10" />
      </label>
      <button type="submit">Submit</button>
      {error && (
        <p class="error" role="alert" data-testid="submit-error">
          {error}
        </p>
      )}
    </form>
  );
}

/**
 * The log entries from `from` (a resume token; '' = the start) up to the last one written so far, and
 * the token to resume from later. Pages only while next_page_token says entries are left now.
 */
async function logsSince(props: ViewProps, id: string, from: string): Promise<{ logs: TrainingJobLogEntry[]; resume: string }> {
  const logs: TrainingJobLogEntry[] = [];
  let pageToken = from;
  for (;;) {
    const page = await props.api.call(trainingApi.logs, { id, pageToken });
    logs.push(...page.logs);
    if (!page.nextPageToken) return { logs, resume: page.resumePageToken || pageToken };
    pageToken = page.nextPageToken;
  }
}

async function download(props: ViewProps, job: TrainingJobMetadata, fileName: string): Promise<void> {
  const chunks: Uint8Array[] = [];
  await serverStream(trainingApi.download, { organizationId: props.orgId, modelName: job.modelName, modelVersion: job.modelVersion, fileName }, (m) =>
    chunks.push(m.chunk),
  );
  const url = URL.createObjectURL(new Blob(chunks as BlobPart[]));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function JobDetail(props: ViewProps & { id: string }) {
  const [job, setJob] = useState<TrainingJobMetadata | undefined>();
  const [logs, setLogs] = useState<TrainingJobLogEntry[]>([]);
  const [artefact, setArtefact] = useState<ModelArtefact | undefined>();
  const [error, setError] = useState('');

  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The whole history on the first poll, then once a second only the entries appended since.
    let resume = '';
    // Polls left once the job has finished: its last lines come just after its final status (the cloud
    // logs `stored model …` once COMPLETED has committed), so the log is read twice more, then no more.
    let afterFinish = 2;
    // The model's files are read once, at the first poll that finds the job COMPLETED.
    let artefactRead = false;
    async function poll() {
      try {
        const { metadata: j } = await props.api.call(trainingApi.get, { id: props.id });
        const since = await logsSince(props, props.id, resume);
        if (!live || !j) return;
        resume = since.resume;
        setJob(j);
        if (since.logs.length > 0) setLogs((l) => [...l, ...since.logs]);
        if (j.status === TrainingStatus.TRAINING_STATUS_COMPLETED && !artefactRead) {
          artefactRead = true;
          const { artefacts } = await props.api.call(trainingApi.artefacts, { organizationId: props.orgId, modelName: j.modelName });
          if (live) setArtefact(artefacts.find((a) => a.modelVersion === j.modelVersion));
        }
        if (!FINISHED.has(j.status) || afterFinish-- > 0) timer = setTimeout(poll, POLL_MS);
      } catch (err) {
        if (live) setError((err as Error).message);
      }
    }
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.id]);

  if (!job) return error ? <p class="error">{error}</p> : <p class="muted">Loading job {props.id}…</p>;
  const curve = curveOf(logs, job.progress);
  const uniqueEpochs = new Set(curve.map((p) => p.epoch)).size === curve.length;
  const x = (p: (typeof curve)[number], i: number) => (uniqueEpochs ? p.epoch : i + 1);
  const metricName = curve.at(-1)?.metricName ?? job.progress?.validationMetricName ?? 'metric';
  async function cancel() {
    try {
      await props.api.call(trainingApi.cancel, { id: job!.id });
    } catch (err) {
      setError((err as Error).message);
    }
  }
  return (
    <section class="job-detail" data-testid="job-detail">
      <h3>
        {job.modelName} {job.modelVersion}: <span data-testid="job-status">{statusText(job.status)}</span>
      </h3>
      <p>
        {job.isCustomJob ? `script ${job.registryItemId} ${job.registryItemVersion}` : typeText(job.modelType)}, {frameworkText(job.modelFramework)}, dataset{' '}
        {job.datasetId}
        {job.tags.length > 0 && `, labels ${job.tags.join(', ')}`}
      </p>
      {job.progress && job.progress.totalEpochs > 0 && (
        <p data-testid="job-progress">
          epoch {job.progress.epoch}/{job.progress.totalEpochs}, loss {job.progress.loss.toFixed(4)}, {job.progress.validationMetricName}{' '}
          {job.progress.validationMetric.toFixed(4)}, {job.progress.imagesPerSecond.toFixed(0)} images/s
        </p>
      )}
      {job.errorStatus && job.errorStatus.code !== 0 && (
        <p class="error" data-testid="job-error">
          {job.errorStatus.message} (gRPC status {job.errorStatus.code})
        </p>
      )}
      {!FINISHED.has(job.status) && job.status !== TrainingStatus.TRAINING_STATUS_CANCELING && (
        <button type="button" onClick={cancel}>
          Cancel job
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {curve.length > 0 && (
        <div class="curves">
          <LineChart
            series={[{ column: 'loss', points: curve.map((p, i) => [x(p, i), p.loss]) }]}
            timeX={false}
            xLabel={uniqueEpochs ? 'epoch' : 'evaluation'}
            testId="loss-curve"
          />
          <LineChart
            series={[{ column: metricName, points: curve.map((p, i) => [x(p, i), p.metric]) }]}
            timeX={false}
            xLabel={uniqueEpochs ? 'epoch' : 'evaluation'}
            testId="metric-curve"
          />
        </div>
      )}
      {Object.keys(job.validationMetrics).length > 0 && (
        <p>
          Validation:{' '}
          {Object.entries(job.validationMetrics)
            .map(([k, v]) => `${k} ${v.toFixed(4)}`)
            .join(', ')}
        </p>
      )}
      {artefact && (
        <div class="artefact" data-testid="artefact">
          <h4>Model files</h4>
          {artefact.files.map((f) => (
            <button key={f.name} type="button" onClick={() => download(props, job, f.name).catch((err: Error) => setError(err.message))}>
              Download {f.name} ({f.sizeBytes} bytes)
            </button>
          ))}
          <DeployPanel {...props} artefact={artefact} />
        </div>
      )}
      <h4>Logs</h4>
      <pre class="logs" data-testid="job-logs">
        {logs.map((l) => `${l.time?.toISOString() ?? ''} ${l.level.toUpperCase()} ${l.message}`).join('\n')}
      </pre>
    </section>
  );
}

export function TrainingView(props: ViewProps) {
  const [jobs, setJobs] = useState<TrainingJobMetadata[]>([]);
  const [selected, setSelected] = useState<string | undefined>();
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      props.api.call(trainingApi.list, { organizationId: props.orgId, status: TrainingStatus.TRAINING_STATUS_UNSPECIFIED }).then(
        (r) => {
          if (!live) return;
          setJobs(r.jobs);
          // Jobs started elsewhere (another tab, a script) appear without a reload: polled while shown.
          timer = setTimeout(load, POLL_MS * (r.jobs.some((j) => !FINISHED.has(j.status)) ? 2 : 5));
        },
        (err: Error) => live && props.showError(err),
      );
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [props.orgId, version]);

  return (
    <div class="training-view">
      <SubmitForm
        {...props}
        jobs={jobs}
        onSubmitted={(id) => {
          setSelected(id);
          setVersion((v) => v + 1);
        }}
      />
      <h3>Jobs</h3>
      <table class="results" data-testid="jobs">
        <thead>
          <tr>
            <th>model</th>
            <th>version</th>
            <th>type</th>
            <th>status</th>
            <th>created</th>
          </tr>
        </thead>
        <tbody>
          {[...jobs].reverse().map((j) => (
            <tr key={j.id} class={j.id === selected ? 'selected' : ''} onClick={() => setSelected(j.id)}>
              <td>
                <a href={`#job-${j.id}`} onClick={(e) => (e.preventDefault(), setSelected(j.id))}>
                  {j.modelName}
                </a>
              </td>
              <td>{j.modelVersion}</td>
              <td>{j.isCustomJob ? 'custom' : typeText(j.modelType)}</td>
              <td>{statusText(j.status)}</td>
              <td>{j.createdOn?.toISOString().slice(0, 19).replace('T', ' ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {selected && <JobDetail key={selected} {...props} id={selected} />}
    </div>
  );
}
