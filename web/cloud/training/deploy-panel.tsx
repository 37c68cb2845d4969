// "Deploy to machine" on a completed job: choose a part (and the camera for the vision service), see
// the diff of the part's config that the deploy makes (deploy-plan.ts, line-diff.ts), then save it with
// UpdateRobotPart. The part is read again just before saving: a config saved by someone else after the
// diff was shown is not overwritten; the new diff is shown instead.
import { useEffect, useState } from 'preact/hooks';
import type { ModelArtefact } from '../../../gen/platform/app/mltraining/v1/ml_training.js';
import type { RobotPart } from '../../../gen/platform/app/v1/robot_part.js';
import { appApi } from '../api/app.js';
import type { ViewProps } from '../views.js';
import { PartPicker, usePartChoice } from '../part-picker.js';
import { camerasOf, deployedConfig, packageNameOf } from './deploy-plan.js';
import { hunksOf, lineDiff, type Hunk } from './line-diff.js';

interface Plan {
  part: RobotPart;
  config: Record<string, unknown>;
  hunks: Hunk[];
}

const text = (config: unknown) => JSON.stringify(config ?? {}, null, 2);

export function DeployPanel(props: ViewProps & { artefact: ModelArtefact }) {
  const { artefact } = props;
  const [machines, partId, setPartId] = usePartChoice(props.api, props.orgId, props.showError);
  const [part, setPart] = useState<RobotPart | undefined>();
  const [camera, setCamera] = useState('');
  const [name, setName] = useState(packageNameOf(artefact.modelName));
  const [plan, setPlan] = useState<Plan | undefined>();
  const [error, setError] = useState('');
  const [saved, setSaved] = useState('');

  useEffect(() => {
    setPart(undefined);
    setPlan(undefined);
    if (!partId) return;
    props.api.call(appApi.getRobotPart, { id: partId }).then((r) => {
      setPart(r.part);
      setCamera((c) => (camerasOf(r.part?.robotConfig ?? {}).includes(c) ? c : (camerasOf(r.part?.robotConfig ?? {})[0] ?? '')));
    }, props.showError);
  }, [partId]);

  const planFor = (p: RobotPart): Plan => {
    const before = p.robotConfig ?? {};
    const config = deployedConfig(before, {
      orgId: props.orgId,
      modelName: artefact.modelName,
      modelVersion: artefact.modelVersion,
      files: artefact.files.map((f) => f.name),
      name: name.trim(),
      cameraName: camera,
    });
    return { part: p, config, hunks: hunksOf(lineDiff(text(before), text(config))) };
  };
  const show = () => {
    setError('');
    setSaved('');
    try {
      if (part) setPlan(planFor(part));
    } catch (err) {
      setPlan(undefined);
      setError((err as Error).message);
    }
  };
  async function save() {
    if (!plan) return;
    setError('');
    try {
      const { part: now } = await props.api.call(appApi.getRobotPart, { id: plan.part.id });
      if (now && now.configRevision !== plan.part.configRevision) {
        setPart(now);
        setPlan(planFor(now));
        setError(
          `The part's config changed (revision ${plan.part.configRevision} is now ${now.configRevision}): this is the diff against the new one; save again to deploy.`,
        );
        return;
      }
      const { part: after } = await props.api.call(appApi.updateRobotPart, { id: plan.part.id, robotConfig: plan.config });
      setSaved(`Deployed ${artefact.modelName} ${artefact.modelVersion} to ${plan.part.name}: config revision ${after?.configRevision ?? '?'}.`);
      if (after) setPart(after);
      setPlan(undefined);
    } catch (err) {
      // The cloud's validation errors come one per line.
      setError((err as Error).message);
    }
  }

  const cameras = camerasOf(part?.robotConfig ?? {});
  return (
    <section class="deploy" data-testid="deploy">
      <h4>Deploy to machine</h4>
      <div class="row">
        <PartPicker name="deployPart" machines={machines} partId={partId} onChange={setPartId} />
        <label>
          camera
          <select name="deployCamera" value={camera} onChange={(e) => setCamera(e.currentTarget.value)}>
            <option value="">none</option>
            {cameras.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <label>
          service name
          <input name="deployName" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="button" disabled={!part} onClick={show}>
          Show changes
        </button>
      </div>
      {plan && (
        <>
          <p>
            Changes to {plan.part.name}'s config (revision {plan.part.configRevision}):{plan.hunks.length === 0 && ' none, it already runs this model.'}
          </p>
          <pre class="diff" data-testid="deploy-diff">
            {plan.hunks.map((h) => (
              <span key={`${h.oldStart}:${h.newStart}`}>
                <span class="hunk">
                  @@ -{h.oldStart} +{h.newStart} @@{'\n'}
                </span>
                {h.lines.map((l, i) => (
                  <span key={i} class={l.kind === '+' ? 'added' : l.kind === '-' ? 'removed' : ''}>
                    {l.kind} {l.text}
                    {'\n'}
                  </span>
                ))}
              </span>
            ))}
          </pre>
          <button type="button" disabled={plan.hunks.length === 0} onClick={() => void save()}>
            Save to {plan.part.name}
          </button>
        </>
      )}
      {saved && (
        <p class="ok" data-testid="deploy-saved">
          {saved}
        </p>
      )}
      {error && (
        <p class="error" role="alert" data-testid="deploy-error">
          {error}
        </p>
      )}
    </section>
  );
}
