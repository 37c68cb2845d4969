// The machine config: the running config in an editor, the errors of a rejected save by path and rule,
// and Save (RobotService.GetConfig / SaveConfig). Save validates on the runtime, which writes the -config
// file durably; its file watcher then reconfigures the machine. An online machine's config comes from the
// cloud: it is shown read-only, with where to edit it.
import { useEffect, useState } from 'preact/hooks';
import type { ConfigValidationError, GetConfigResponse } from '../../gen/platform/robot/v1/robot.js';
import { configApi } from './api.js';

/** How often the running revision and a rejected save's errors are refreshed (the editor's text is not). */
const POLL_MS = 1000;

function ErrorTable({ errors, caption, testid }: { errors: ConfigValidationError[]; caption: string; testid: string }) {
  if (errors.length === 0) return null;
  return (
    <table class="config-errors" data-testid={testid} role="alert">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th>path</th>
          <th>rule</th>
        </tr>
      </thead>
      <tbody>
        {errors.map((e) => (
          <tr key={`${e.path}|${e.rule}`}>
            <td>{e.path || '(config)'}</td>
            <td>{e.rule}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ConfigView() {
  const [running, setRunning] = useState<GetConfigResponse>();
  const [text, setText] = useState<string>();
  const [saveErrors, setSaveErrors] = useState<ConfigValidationError[]>([]);
  const [note, setNote] = useState('');
  const [failure, setFailure] = useState('');
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const tick = () =>
      configApi
        .getConfig({})
        .then(
          (config) => {
            if (!live) return;
            setRunning(config);
            setFailure('');
            // The editor starts from the running config; later polls never overwrite what is being typed.
            setText((t) => t ?? config.configJson);
          },
          (err: Error) => live && setFailure(err.message),
        )
        .finally(() => {
          if (live) timer = setTimeout(tick, POLL_MS);
        });
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, []);
  const save = () => {
    setNote('saving…');
    setFailure('');
    configApi.saveConfig({ configJson: text ?? '' }).then(
      (reply) => {
        setSaveErrors(reply.errors);
        setNote(reply.saved ? `saved to ${running?.path}; the machine reconfigures from it` : 'not saved: the config is invalid');
      },
      (err: Error) => {
        setNote('');
        setFailure(err.message);
      },
    );
  };
  const readOnly = running?.source === 'cloud';
  return (
    <section class="card" data-testid="config">
      <h2>
        Config{' '}
        <small>
          {running ? `revision ${running.revision} · ${running.source === 'file' ? running.path : `from the cloud (credentials in ${running.path})`}` : '…'}
        </small>
      </h2>
      {readOnly ? <p data-testid="config-edit-hint">{running.editHint}</p> : null}
      <ErrorTable errors={running?.errors ?? []} caption="The newest saved config was rejected; the previous one runs on:" testid="config-rejected" />
      <ErrorTable errors={running?.resourceErrors ?? []} caption="Resources not built, for errors in their entries:" testid="config-resource-errors" />
      <textarea
        class="config"
        aria-label="machine config"
        readOnly={readOnly}
        spellcheck={false}
        value={text ?? ''}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      {readOnly ? null : (
        <div class="row">
          <button onClick={save} disabled={text === undefined}>
            Save
          </button>
          <button onClick={() => running && setText(running.configJson)}>Revert to the running config</button>
          <span data-testid="config-note">{note}</span>
        </div>
      )}
      <ErrorTable errors={saveErrors} caption="Not saved:" testid="config-errors" />
      {failure ? (
        <p class="error" role="alert">
          {failure}
        </p>
      ) : null}
    </section>
  );
}
