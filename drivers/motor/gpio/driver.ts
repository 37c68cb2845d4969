import { BOARD_API, type Board, type BoardCapabilities } from '../../../plugins/apis/board.js';
import { ENCODER_API, type Encoder } from '../../../plugins/apis/encoder.js';
import type { Motor, MotorProperties, PowerState } from '../../../plugins/apis/motor.js';
import { defineDriver, type DriverLogger, type Remote } from '../../../plugins/driver.js';
import { invalidArgument, unimplemented } from '../../../plugins/errors.js';
import { runClosedLoop } from './control.js';
import type { GpioMotorAttributes } from './model.js';
import { effectivePower, planPins, pwmPins } from './power.js';
import { DEFAULT_PWM_FREQ } from './wiring.js';

/** GoFor/SetRPM below this |rpm| would take forever: refused (FACTS: "rpm near 0"). */
export const MIN_RPM = 0.1;

export interface GpioMotorParts {
  name: string;
  attributes: GpioMotorAttributes;
  board: Remote<Board>;
  encoder?: Remote<Encoder>;
  logger: DriverLogger;
}

const isUnimplemented = (err: unknown) => (err as { code?: unknown })?.code === 'UNIMPLEMENTED';

export async function createGpioMotor({ name, attributes: attrs, board, encoder, logger }: GpioMotorParts): Promise<Motor & { close(): Promise<void> }> {
  // No probe of the board here: the model declares `board` with BOARD_API, so the kernel has already
  // refused a config whose board names anything but a board.
  const pins = attrs.pins;
  const capabilities: Partial<BoardCapabilities> = await board.capabilities().catch((err: unknown) => {
    if (isUnimplemented(err)) return {};
    throw err;
  });
  // esp32-class boards run every motor's PWM at their own frequency (SPEC: 10000 Hz), sharing one timer.
  const frequency = capabilities.motorPwmFrequencyHz ?? attrs.pwm_freq;
  if (capabilities.motorPwmFrequencyHz && capabilities.motorPwmFrequencyHz !== attrs.pwm_freq) {
    // Once per construction. A pwm_freq the user wrote and that is not used deserves a warning; the
    // default (which the config did not ask for) only a debug line.
    const replaced = `board ${attrs.board} is a ${capabilities.kind}: PWM at ${frequency} Hz instead of pwm_freq ${attrs.pwm_freq}`;
    if (attrs.pwm_freq !== DEFAULT_PWM_FREQ) logger.warn(replaced, { pwm_freq: attrs.pwm_freq, used_hz: frequency });
    else logger.debug(replaced);
  }
  const limits = { min_power_pct: attrs.min_power_pct, max_power_pct: attrs.max_power_pct };
  const tpr = attrs.ticks_per_rotation ?? 1;

  let power = 0;
  let encoderListens = encoder !== undefined;
  let offsetRevolutions = 0;
  // Pin writes go one at a time, so that two overlapping commands never interleave their pins.
  let writes: Promise<void> = Promise.resolve();
  let operation = 0;
  const wakers = new Set<() => void>();

  const apply = (requested: number): Promise<void> => {
    const next = writes.then(async () => {
      const applied = effectivePower(requested, limits);
      if (encoderListens) {
        // Never let the encoder keep the pins from changing (a Stop must always reach the board).
        await encoder!.motorPowerChanged(applied).catch((err: unknown) => {
          if (isUnimplemented(err)) encoderListens = false;
          else logger.warn(`could not tell encoder ${attrs.encoder} the power: ${(err as Error).message}`);
        });
      }
      const plan = planPins(pins, attrs.dir_flip, applied);
      for (const pin of plan.pwmOff) await board.setPWM(pin, 0);
      for (const [pin, high] of plan.levels) await board.setGPIO(pin, high);
      if (plan.pwm) {
        if ((await board.pwmFrequency(plan.pwm.pin)) !== frequency) await board.setPWMFrequency(plan.pwm.pin, frequency);
        await board.setPWM(plan.pwm.pin, plan.pwm.duty);
      }
      power = applied;
    });
    writes = next.catch(() => undefined);
    return next;
  };

  /** Starts a new command: whatever ran before (GoFor, GoTo, SetRPM) ends at its next step. */
  const begin = (): number => {
    operation++;
    for (const wake of wakers) wake();
    wakers.clear();
    return operation;
  };
  const sleep = (ms: number, id: number) =>
    new Promise<void>((resolve) => {
      if (id !== operation) return resolve();
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        wakers.delete(wake);
        resolve();
      }, ms);
      wakers.add(wake);
    });

  const ticks = async () => (await encoder!.getPosition('ticks')).value;
  const position = async () => (encoder ? (await ticks()) / tpr + offsetRevolutions : 0);
  const checkRpm = (rpm: number) => {
    if (!Number.isFinite(rpm) || Math.abs(rpm) < MIN_RPM) throw invalidArgument(`rpm ${rpm}: must not be near 0 (|rpm| at least ${MIN_RPM})`);
  };
  const openLoopPower = (rpm: number) => {
    const maxRpm = attrs.max_rpm!;
    if (Math.abs(rpm) > maxRpm) logger.warn(`rpm ${rpm} is above max_rpm ${maxRpm}; running at max_rpm`);
    return Math.max(-1, Math.min(1, rpm / maxRpm));
  };

  /** Turns `revolutions` (signed) at |rpm|; resolves when done or when another command takes over. */
  const turn = async (rpm: number, revolutions: number) => {
    const id = begin();
    const direction = Math.sign(rpm) * Math.sign(revolutions);
    if (!encoder) {
      await apply(direction * Math.abs(openLoopPower(rpm)));
      await sleep(Math.abs(revolutions / rpm) * 60_000, id);
      if (id === operation) await apply(0);
      return;
    }
    const start = await ticks();
    const outcome = await runClosedLoop(controlIO(id), {
      rpm: direction * Math.abs(rpm),
      ticksPerRotation: tpr,
      targetTicks: start + direction * Math.abs(revolutions) * tpr,
      maxRpm: attrs.max_rpm,
      minPower: attrs.min_power_pct,
      maxPower: attrs.max_power_pct,
    }).catch(async (err: unknown) => {
      if (id === operation) await apply(0);
      throw err;
    });
    if (outcome === 'reached' && id === operation) await apply(0);
  };
  const controlIO = (id: number) => ({
    position: ticks,
    setPower: (p: number) => (id === operation ? apply(p) : Promise.resolve()),
    now: () => performance.now(),
    sleep: (ms: number) => sleep(ms, id),
    cancelled: () => id !== operation,
  });

  // A motor starts stopped, with its PWM pins at the frequency they will run at (so an esp32 board
  // refuses a frequency it has no timer for now, at configuration, rather than at the first SetPower).
  for (const pin of pwmPins(pins)) await board.setPWMFrequency(pin, frequency);
  await apply(0);
  logger.debug(`motor ${name} ready`, { wiring: Object.keys(pins), frequency, encoder: attrs.encoder ?? null });

  return {
    async setPower(powerPct) {
      if (!Number.isFinite(powerPct)) throw invalidArgument(`power_pct ${powerPct}: must be a number`);
      begin();
      await apply(powerPct);
    },
    async goFor(rpm, revolutions) {
      checkRpm(rpm);
      if (!Number.isFinite(revolutions) || revolutions === 0) throw invalidArgument(`revolutions ${revolutions}: must not be 0`);
      await turn(rpm, revolutions);
    },
    async goTo(rpm, positionRevolutions) {
      if (!encoder) throw unimplemented('GoTo needs an encoder: this motor has none (set encoder and ticks_per_rotation)');
      checkRpm(rpm);
      if (!Number.isFinite(positionRevolutions)) throw invalidArgument(`position_revolutions ${positionRevolutions}: must be a number`);
      const difference = positionRevolutions - (await position());
      if (Math.abs(difference) * tpr < 1) {
        begin();
        await apply(0);
        return;
      }
      await turn(Math.abs(rpm), difference);
    },
    async setRPM(rpm) {
      if (!Number.isFinite(rpm) || Math.abs(rpm) < MIN_RPM) {
        begin();
        return apply(0);
      }
      if (!encoder) {
        begin();
        return apply(openLoopPower(rpm));
      }
      const id = begin();
      // Runs until the next command; errors (a stall) stop the motor and are logged.
      void runClosedLoop(controlIO(id), {
        rpm,
        ticksPerRotation: tpr,
        maxRpm: attrs.max_rpm,
        minPower: attrs.min_power_pct,
        maxPower: attrs.max_power_pct,
      }).catch(async (err: unknown) => {
        logger.error(`SetRPM ${rpm} stopped: ${(err as Error).message}`);
        if (id === operation) await apply(0);
      });
    },
    async resetZeroPosition(offset) {
      if (!encoder) throw unimplemented('ResetZeroPosition needs an encoder: this motor has none');
      if (!Number.isFinite(offset)) throw invalidArgument(`offset ${offset}: must be a number`);
      await encoder.resetPosition();
      offsetRevolutions = offset;
    },
    getPosition: position,
    getProperties(): MotorProperties {
      return { positionReporting: encoder !== undefined };
    },
    async stop() {
      begin();
      await apply(0);
    },
    isPowered(): PowerState {
      return { isOn: power !== 0, powerPct: power };
    },
    isMoving() {
      return power !== 0;
    },
    async doCommand(command) {
      if ('status' in command) {
        return { power_pct: power, pwm_freq: frequency, position: await position(), has_encoder: encoder !== undefined };
      }
      throw invalidArgument('unknown command; the gpio motor accepts {"status": {}}');
    },
    async close() {
      begin();
      await apply(0).catch((err: unknown) => logger.warn(`could not stop the motor on close: ${(err as Error).message}`));
    },
  };
}

export default defineDriver<GpioMotorAttributes, Motor>(async ({ name, attributes, dependencies, logger }) =>
  createGpioMotor({
    name,
    attributes,
    logger,
    board: dependencies.get(BOARD_API, attributes.board),
    encoder: attributes.encoder ? dependencies.get(ENCODER_API, attributes.encoder) : undefined,
  }),
);
