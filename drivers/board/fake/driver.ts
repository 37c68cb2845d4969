import type { AnalogValue, Board, BoardCapabilities } from '../../../plugins/apis/board.js';
import { checkI2CTransfer } from '../../../plugins/apis/i2c.js';
import { defineDriver } from '../../../plugins/driver.js';
import { invalidArgument } from '../../../plugins/errors.js';
import { EdgeLog } from '../edge-log.js';
import type { FakeBoardAttributes } from './model.js';
import { powerFromPins, SimulatedMotor } from './simulation.js';

/** How often the simulated motors advance; they integrate real elapsed time, so jitter only adds latency. */
const SIMULATION_PERIOD_MS = 5;

export interface FakeBoard extends Board {
  close(): void;
}

/**
 * GPIO level and PWM state are separate registers per pin, as a driver sees them: setting a duty does
 * not change the digital level that GetGPIO reports, so callers can observe both independently.
 * A rising edge on a digital interrupt's pin (written with setGPIO, or by a simulated encoder) counts as
 * one tick of that interrupt; every level change is also kept in the edge log for quadrature decoding.
 */
export function createFakeBoard(attributes: FakeBoardAttributes, kind = 'fake'): FakeBoard {
  const levels = new Map<string, boolean>();
  const duties = new Map<string, number>();
  const frequencies = new Map<string, number>();
  const analogs = new Map(attributes.analogs.map((a) => [a.name, { ...a }]));
  const interruptsByPin = new Map(attributes.digital_interrupts.map((d) => [d.pin, d.name]));
  const pinsByInterrupt = new Map(attributes.digital_interrupts.map((d) => [d.name, d.pin]));
  const ticks = new Map(attributes.digital_interrupts.map((d) => [d.name, 0]));
  const edges = new EdgeLog();
  const i2c = new Map(attributes.i2c_devices.map((d) => [`${d.bus}/${d.address}`, Object.assign(new Array<number>(256).fill(0), d.registers)]));
  const motors = attributes.simulated_motors.map((spec) => new SimulatedMotor(spec));

  const checkPin = (pin: string) => {
    if (typeof pin !== 'string' || pin.length === 0) throw invalidArgument('pin must be a non-empty string');
  };
  const setLevel = (pin: string, high: boolean) => {
    const was = levels.get(pin) ?? false;
    levels.set(pin, high);
    const interrupt = interruptsByPin.get(pin);
    if (!interrupt || was === high) return;
    edges.record(interrupt, high);
    if (high) ticks.set(interrupt, (ticks.get(interrupt) ?? 0) + 1);
  };
  const interruptName = (name: string) => {
    if (!ticks.has(name)) throw invalidArgument(`digital_interrupt_name ${JSON.stringify(name)}: no such digital interrupt on this board`);
    return name;
  };
  const device = (bus: string, address: number) => {
    const memory = i2c.get(`${bus}/${address}`);
    if (!memory) throw invalidArgument(`i2c: no device at address ${address} on bus ${JSON.stringify(bus)}`);
    return memory;
  };

  let last = performance.now();
  const pinState = { level: (p: string) => levels.get(p) ?? false, duty: (p: string) => duties.get(p) ?? 0 };
  const timer = motors.length
    ? setInterval(() => {
        const now = performance.now();
        const dt = now - last;
        last = now;
        for (const motor of motors) motor.step(dt, powerFromPins(motor.spec.pins, pinState), setLevel);
      }, SIMULATION_PERIOD_MS)
    : undefined;

  return {
    setGPIO(pin, high) {
      checkPin(pin);
      setLevel(pin, Boolean(high));
    },
    getGPIO(pin) {
      checkPin(pin);
      return levels.get(pin) ?? false;
    },
    setPWM(pin, dutyPct) {
      checkPin(pin);
      if (!Number.isFinite(dutyPct) || dutyPct < 0 || dutyPct > 1) throw invalidArgument(`duty_pct ${dutyPct}: must be between 0 and 1`);
      duties.set(pin, dutyPct);
    },
    pwm(pin) {
      checkPin(pin);
      return duties.get(pin) ?? 0;
    },
    setPWMFrequency(pin, frequencyHz) {
      checkPin(pin);
      if (!Number.isInteger(frequencyHz) || frequencyHz < 0) throw invalidArgument(`frequency_hz ${frequencyHz}: must be a whole number of Hz, at least 0`);
      frequencies.set(pin, frequencyHz);
    },
    pwmFrequency(pin) {
      checkPin(pin);
      return frequencies.get(pin) ?? 0;
    },
    readAnalogReader(reader): AnalogValue {
      const analog = analogs.get(reader);
      if (!analog) throw invalidArgument(`analog_reader_name ${JSON.stringify(reader)}: no such analog reader on this board`);
      return { value: analog.value, minRange: analog.min_range, maxRange: analog.max_range, stepSize: analog.step_size };
    },
    getDigitalInterruptValue(interrupt) {
      return ticks.get(interruptName(interrupt))!;
    },
    digitalInterruptEdges(interrupts, after) {
      const now: Record<string, boolean> = {};
      for (const name of interrupts) now[interruptName(name)] = levels.get(pinsByInterrupt.get(name)!) ?? false;
      return edges.since(interrupts, after, now);
    },
    capabilities(): BoardCapabilities {
      return { kind, i2cBuses: [...new Set(attributes.i2c_devices.map((d) => d.bus))] };
    },
    i2cReadRegister(bus, address, register, length) {
      checkTransfer(address, register, length);
      const memory = device(bus, address);
      return Array.from({ length }, (_, i) => memory[(register + i) & 0xff]!);
    },
    i2cWriteRegister(bus, address, register, bytes) {
      checkTransfer(address, register, bytes);
      const memory = device(bus, address);
      bytes.forEach((b, i) => (memory[(register + i) & 0xff] = b));
    },
    doCommand(command) {
      // Simulation controls: set an analog value, add ticks to a digital interrupt, read a simulated motor.
      const set = command.set_analog as { name?: string; value?: number } | undefined;
      if (set) {
        const analog = analogs.get(String(set.name));
        if (!analog) throw invalidArgument(`set_analog.name ${JSON.stringify(set.name)}: no such analog reader`);
        if (!Number.isInteger(set.value)) throw invalidArgument('set_analog.value: must be an integer');
        analog.value = set.value as number;
        return { ok: true };
      }
      const tick = command.tick as { name?: string; count?: number } | undefined;
      if (tick) {
        const name = String(tick.name);
        if (!ticks.has(name)) throw invalidArgument(`tick.name ${JSON.stringify(tick.name)}: no such digital interrupt`);
        ticks.set(name, (ticks.get(name) ?? 0) + (tick.count ?? 1));
        return { value: ticks.get(name) };
      }
      if ('simulated_motor' in command) {
        const motor = motors.find((m) => m.spec.name === command.simulated_motor);
        if (!motor) throw invalidArgument(`simulated_motor ${JSON.stringify(command.simulated_motor)}: no such simulated motor`);
        return { counts: motor.counts, revolutions: motor.counts / motor.spec.ticks_per_rotation, power: powerFromPins(motor.spec.pins, pinState) };
      }
      throw invalidArgument(`unknown command; the ${kind} board accepts set_analog, tick or simulated_motor`);
    },
    close() {
      if (timer) clearInterval(timer);
    },
  };
}

function checkTransfer(address: number, register: number, bytes: number[] | number): void {
  try {
    checkI2CTransfer(address, register, bytes);
  } catch (err) {
    throw invalidArgument(`i2c ${(err as Error).message}`);
  }
}

export default defineDriver<FakeBoardAttributes, FakeBoard>(({ attributes }) => createFakeBoard(attributes));
