// A board's controls: GPIO, PWM, analog readers and digital interrupts. The name field offers the pins,
// readers and interrupts the running config lists (its own analogs and digital_interrupts, and the pins
// motors use on it); values are checked before a call (a GPIO level is 1/0 or high/low, nothing else),
// and every Set says what it did.
import { useEffect, useState } from 'preact/hooks';
import { boardApi, configApi } from './api.js';
import { Failure, useAction } from './action.js';

interface Known {
  value: string;
  what: string;
}

interface ComponentConfig {
  name?: unknown;
  api?: unknown;
  attributes?: Record<string, unknown>;
}

/** The names the config gives for this board: readers, interrupts and the pins they and motors use. */
export function knownNames(configJson: string, board: string): Known[] {
  let config: { components?: ComponentConfig[] };
  try {
    config = JSON.parse(configJson) as { components?: ComponentConfig[] };
  } catch {
    return [];
  }
  const components = Array.isArray(config.components) ? config.components : [];
  const out = new Map<string, string>();
  const add = (value: unknown, what: string) => {
    if ((typeof value === 'string' || typeof value === 'number') && String(value) !== '' && !out.has(String(value))) out.set(String(value), what);
  };
  const self = components.find((c) => c.name === board);
  const list = (key: string) => (Array.isArray(self?.attributes?.[key]) ? (self.attributes[key] as Record<string, unknown>[]) : []);
  for (const a of list('analogs')) add(a.name, `analog reader${a.pin !== undefined ? ` on pin ${String(a.pin)}` : ''}`);
  for (const d of list('digital_interrupts')) add(d.name, `digital interrupt${d.pin !== undefined ? ` on pin ${String(d.pin)}` : ''}`);
  for (const a of [...list('analogs'), ...list('digital_interrupts')]) add(a.pin, `pin of ${String(a.name)}`);
  for (const c of components) {
    const attributes = c.attributes ?? {};
    if (attributes.board !== board || typeof attributes.pins !== 'object' || attributes.pins === null) continue;
    for (const [role, pin] of Object.entries(attributes.pins as Record<string, unknown>)) add(pin, `${role} pin of ${String(c.name)}`);
  }
  return [...out].map(([value, what]) => ({ value, what }));
}

/** A GPIO level as typed: 1/0, high/low, true/false (any case); anything else is refused. */
export function gpioLevel(text: string): boolean {
  const t = text.trim().toLowerCase();
  if (['1', 'high', 'true'].includes(t)) return true;
  if (['0', 'low', 'false'].includes(t)) return false;
  throw new Error(`value: Set GPIO needs 1 or 0 (high or low), got ${JSON.stringify(text)}`);
}

function numberIn(text: string, rule: string, ok: (n: number) => boolean): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n) || !ok(n)) throw new Error(`value: ${rule}, got ${JSON.stringify(text)}`);
  return n;
}

export function BoardPanel({ name }: { name: string }) {
  const [pin, setPin] = useState('');
  const [value, setValue] = useState('');
  const [shown, setShown] = useState('');
  const [known, setKnown] = useState<Known[]>([]);
  const [error, act] = useAction();
  useEffect(() => {
    configApi.getConfig({}).then(
      (c) => setKnown(knownNames(c.configJson, name)),
      () => undefined,
    );
  }, [name]);
  const named = (what: string) => {
    if (pin.trim() === '') throw new Error(`pin: name the ${what} (the config lists ${known.map((k) => k.value).join(', ') || 'none'})`);
    return pin.trim();
  };
  const read = (what: string, run: () => Promise<unknown>) =>
    act(async () => {
      setShown('');
      setShown(`${what}: ${JSON.stringify(await run())}`);
    });
  const set = (run: () => Promise<string>) =>
    act(async () => {
      setShown('');
      setShown(await run());
    });
  const list = `board-names-${name}`;
  return (
    <div>
      <div class="row">
        <label>
          pin / reader / interrupt <input value={pin} list={list} aria-label={`pin of ${name}`} onInput={(e) => setPin((e.target as HTMLInputElement).value)} />
          <datalist id={list} data-testid={list}>
            {known.map((k) => (
              <option key={k.value} value={k.value} label={k.what} />
            ))}
          </datalist>
        </label>
        <label>
          value <input value={value} aria-label={`value for ${name}`} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
        </label>
      </div>
      <div class="row">
        <button onClick={() => read('GPIO', () => boardApi.getGpio({ name, pin: named('pin') }))}>Get GPIO</button>
        <button
          onClick={() =>
            set(async () => {
              const [p, high] = [named('pin'), gpioLevel(value)];
              await boardApi.setGpio({ name, pin: p, high });
              return `GPIO ${p} set ${high ? 'high' : 'low'}`;
            })
          }
        >
          Set GPIO (1/0)
        </button>
        <button onClick={() => read('PWM duty', () => boardApi.pwm({ name, pin: named('pin') }))}>Get PWM</button>
        <button
          onClick={() =>
            set(async () => {
              const [p, duty] = [named('pin'), numberIn(value, 'Set PWM needs a duty cycle from 0 to 1', (n) => n >= 0 && n <= 1)];
              await boardApi.setPwm({ name, pin: p, dutyPct: duty });
              return `PWM duty of ${p} set to ${duty}`;
            })
          }
        >
          Set PWM (0–1)
        </button>
        <button onClick={() => read('frequency', () => boardApi.pwmFrequency({ name, pin: named('pin') }))}>Get frequency</button>
        <button
          onClick={() =>
            set(async () => {
              const [p, hz] = [named('pin'), numberIn(value, 'Set frequency needs a whole number of Hz, 0 or more', (n) => Number.isInteger(n) && n >= 0)];
              await boardApi.setPwmFrequency({ name, pin: p, frequencyHz: hz });
              return `PWM frequency of ${p} set to ${hz} Hz`;
            })
          }
        >
          Set frequency (Hz)
        </button>
        <button onClick={() => read('analog', () => boardApi.readAnalogReader({ boardName: name, analogReaderName: named('analog reader') }))}>
          Read analog
        </button>
        <button
          onClick={() => read('interrupt', () => boardApi.getDigitalInterruptValue({ boardName: name, digitalInterruptName: named('digital interrupt') }))}
        >
          Interrupt count
        </button>
      </div>
      <p data-testid={`board-result-${name}`}>{shown}</p>
      <Failure text={error} />
    </div>
  );
}
