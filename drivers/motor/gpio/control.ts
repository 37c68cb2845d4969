// The closed-loop speed control of a `gpio` motor with an encoder: ramps power toward the target rpm,
// learning how many rpm a unit of power gives (so no max_rpm is needed), slows down on the approach so it
// stops close to the target, and stops once the position is at or past the target tick count.
import { failedPrecondition } from '../../../plugins/errors.js';

export const LOOP_PERIOD_MS = 10;
/** Power may rise by at most this much per second (it may fall at once, to avoid overshooting). */
export const RAMP_PER_SECOND = 2;
/** On the approach, the speed is capped so that the rest takes at least this long. */
const APPROACH_SECONDS = 0.3;
/** Speed is measured over this window of position samples. */
const MEASURE_WINDOW_MS = 150;
/** No encoder movement for this long at full power is a stall. */
const STALL_MS = 3000;
/** A change of power smaller than this is not sent to the pins (except the step onto the cap, below). */
const POWER_STEP = 0.0005;

export interface ControlIO {
  /** Encoder position in ticks. */
  position(): Promise<number>;
  /** Applies a signed power (the caller clamps it to the motor's limits). */
  setPower(power: number): Promise<void>;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** True once another command took over the motor. */
  cancelled(): boolean;
}

export interface RunRequest {
  /** Signed: negative runs backward. */
  rpm: number;
  ticksPerRotation: number;
  /** Absolute target in ticks; undefined runs until cancelled (SetRPM). */
  targetTicks?: number;
  /** rpm at full power when known (max_rpm), for the first power guess. */
  maxRpm?: number;
  minPower: number;
  maxPower: number;
}

export type RunOutcome = 'reached' | 'cancelled';

export async function runClosedLoop(io: ControlIO, request: RunRequest): Promise<RunOutcome> {
  const direction = Math.sign(request.rpm);
  const speed = Math.abs(request.rpm);
  let gain = request.maxRpm; // rpm per unit of power, learned as the motor turns
  let power = 0;
  let lastTime = io.now();
  const samples: Array<{ t: number; pos: number }> = [];
  let lastMove = { t: lastTime, pos: Number.NaN };

  while (!io.cancelled()) {
    const pos = await io.position();
    const t = io.now();
    if (io.cancelled()) break;
    const remaining = request.targetTicks === undefined ? Infinity : (request.targetTicks - pos) * direction;
    if (remaining <= 0) return 'reached';

    samples.push({ t, pos });
    while (samples.length > 2 && t - samples[1]!.t >= MEASURE_WINDOW_MS) samples.shift();
    const first = samples[0]!;
    const span = t - first.t;
    const measured = span >= MEASURE_WINDOW_MS / 3 ? ((((pos - first.pos) / request.ticksPerRotation) * 60_000) / span) * direction : undefined;

    if (pos !== lastMove.pos) lastMove = { t, pos };
    else if (power >= request.maxPower && t - lastMove.t > STALL_MS) {
      throw failedPrecondition(`the encoder did not move for ${STALL_MS / 1000} s at full power; is the motor stalled or the encoder not wired to it?`);
    }
    if (measured !== undefined && measured < 0 && (first.pos - pos) * direction > request.ticksPerRotation / 4) {
      throw failedPrecondition('the encoder counts against the motor direction; check dir_flip and the encoder pins');
    }

    let desired = speed;
    if (Number.isFinite(remaining)) {
      const approach = ((remaining / request.ticksPerRotation) * 60) / APPROACH_SECONDS;
      desired = Math.min(speed, Math.max(approach, speed * 0.05));
    }
    if (measured !== undefined && measured > 0 && power > 0) {
      const observed = measured / power;
      gain = gain === undefined ? observed : gain * 0.7 + observed * 0.3;
    }
    const dt = (t - lastTime) / 1000;
    lastTime = t;
    const wanted = gain ? desired / gain : power + RAMP_PER_SECOND * dt;
    let next = Math.min(wanted, power + RAMP_PER_SECOND * Math.max(dt, LOOP_PERIOD_MS / 1000));
    next = Math.min(Math.max(next, request.minPower, 0.011), request.maxPower);
    // The step onto the cap is sent however small: the ramp can end just below it (0.4997 of 0.5), and a
    // motor left there would never be at full power, so a stall would never be seen (the loop ran forever).
    if (Math.abs(next - power) > POWER_STEP || (next === request.maxPower && power !== next)) {
      power = next;
      await io.setPower(direction * power);
    }
    await io.sleep(LOOP_PERIOD_MS);
  }
  return 'cancelled';
}
