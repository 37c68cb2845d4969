// A motor's controls. The power slider shows what the motor does: between drags it follows the polled
// IsPowered (so after Stop, StopAll, a GoFor's end or a session expiry it shows 0 %), and a poll that
// started before the last command was answered is not allowed to move it back.
import { useEffect, useRef, useState } from 'preact/hooks';
import { motorApi } from './api.js';
import { Failure, useAction } from './action.js';
import { usePoll } from './poll.js';

export function MotorPanel({ name }: { name: string }) {
  const [power, setPower] = useState(0);
  const [rpm, setRpm] = useState(60);
  const [revolutions, setRevolutions] = useState(1);
  const [error, act] = useAction();
  // Commands sent so far (counted when sent and when answered) and whether the slider is held.
  const commands = useRef(0);
  const dragging = useRef(false);
  const position = usePoll(
    async (signal) => {
      const asked = commands.current;
      return { ...(await motorApi.getPosition({ name }, signal)), ...(await motorApi.isPowered({ name }, signal)), asked };
    },
    [name],
  );
  const polled = position.value;
  useEffect(() => {
    if (!polled || dragging.current || polled.asked !== commands.current) return;
    setPower(polled.isOn ? Math.round(polled.powerPct * 100) : 0);
  }, [polled]);
  const command = (run: () => Promise<unknown>) =>
    act(async () => {
      commands.current++;
      try {
        await run();
      } finally {
        commands.current++;
      }
    });
  return (
    <div>
      <label>
        Power {power}%{' '}
        <input
          type="range"
          min={-100}
          max={100}
          value={power}
          aria-label={`power of ${name}`}
          onInput={(e) => {
            dragging.current = true;
            setPower(Number((e.target as HTMLInputElement).value));
          }}
          onChange={(e) => {
            dragging.current = false;
            const pct = Number((e.target as HTMLInputElement).value);
            command(() => motorApi.setPower({ name, powerPct: pct / 100 }));
          }}
        />
      </label>
      <div class="row">
        <label>
          rpm <input type="number" value={rpm} onInput={(e) => setRpm(Number((e.target as HTMLInputElement).value))} />
        </label>
        <label>
          revolutions <input type="number" value={revolutions} onInput={(e) => setRevolutions(Number((e.target as HTMLInputElement).value))} />
        </label>
        <button onClick={() => command(() => motorApi.goFor({ name, rpm, revolutions }))}>GoFor</button>
        <button onClick={() => command(() => motorApi.goTo({ name, rpm, positionRevolutions: revolutions }))}>GoTo</button>
        <button
          onClick={() =>
            command(async () => {
              setPower(0);
              await motorApi.stop({ name });
            })
          }
        >
          Stop
        </button>
      </div>
      <p data-testid={`motor-${name}`}>
        position {polled?.position.toFixed(3) ?? '…'} rev · {polled?.isOn ? `powered ${(polled.powerPct * 100).toFixed(0)}%` : 'off'}
      </p>
      <Failure text={error || position.error} />
    </div>
  );
}
