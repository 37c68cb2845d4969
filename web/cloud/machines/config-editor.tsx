// A part's machine config: edit the JSON and save it (UpdateRobotPart). The cloud validates with the
// runtime's own code; a refusal lists every error with its path and rule, shown line by line as the
// cloud worded them. The history lists every saved revision; one can be loaded back into the editor.
import { useEffect, useState } from 'preact/hooks';
import type { RobotPart, RobotPartRevision } from '../../../gen/platform/app/v1/robot_part.js';
import { appApi } from '../api/app.js';
import type { ViewProps } from '../views.js';
import { parseConfig } from './config-text.js';

export function ConfigEditor(props: ViewProps & { part: RobotPart; onSaved(part: RobotPart): void }) {
  const [text, setText] = useState(JSON.stringify(props.part.robotConfig ?? {}, null, 2));
  const [errors, setErrors] = useState<string[]>([]);
  const [saved, setSaved] = useState('');
  const [history, setHistory] = useState<RobotPartRevision[]>([]);

  const loadHistory = () => props.api.call(appApi.history, { id: props.part.id }).then((r) => setHistory(r.history), props.showError);
  useEffect(() => void loadHistory(), [props.part.id]);

  async function save(e: Event) {
    e.preventDefault();
    setErrors([]);
    setSaved('');
    try {
      const { part } = await props.api.call(appApi.updateRobotPart, { id: props.part.id, robotConfig: parseConfig(text) });
      if (part) {
        setSaved(`Saved revision ${part.configRevision}.`);
        props.onSaved(part);
      }
      void loadHistory();
    } catch (err) {
      setErrors((err as Error).message.split('\n').filter((l) => l.trim() !== ''));
    }
  }

  return (
    <section class="config-editor">
      <form onSubmit={save}>
        <label>
          Machine config (revision {props.part.configRevision})
          <textarea name="robot-config" rows={18} spellcheck={false} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
        <button type="submit">Save config</button>
      </form>
      {saved && (
        <p class="ok" data-testid="config-saved">
          {saved}
        </p>
      )}
      {errors.length > 0 && (
        <ul class="error" role="alert" data-testid="config-errors">
          {errors.map((l, i) => (
            <li key={i}>{l.trim()}</li>
          ))}
        </ul>
      )}
      <h4>History</h4>
      <table class="results" data-testid="config-history">
        <thead>
          <tr>
            <th>revision</th>
            <th>saved</th>
            <th>by</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {history.map((h) => (
            <tr key={h.revision}>
              <td>{h.revision}</td>
              <td>{h.time?.toISOString().slice(0, 19).replace('T', ' ')}</td>
              <td>{h.savedBy}</td>
              <td>
                <button type="button" onClick={() => setText(JSON.stringify(h.robotConfig ?? {}, null, 2))}>
                  Load into editor
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
