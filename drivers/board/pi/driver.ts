import { readFileSync } from 'node:fs';
import type { Board } from '../../../plugins/apis/board.js';
import { defineDriver } from '../../../plugins/driver.js';
import { failedPrecondition, invalidArgument } from '../../../plugins/errors.js';
import { EdgeLog } from '../edge-log.js';
import { linuxI2C } from '../linux-i2c.js';
import { loadOptional } from '../optional-package.js';
import type { PiBoardAttributes } from './model.js';

/** The part of pigpio's API that we use. */
interface PigpioGpio {
  digitalWrite(level: 0 | 1): void;
  digitalRead(): number;
  pwmWrite(dutyCycle: number): void;
  pwmRange(range: number): void;
  pwmFrequency(frequency: number): void;
  getPwmFrequency(): number;
  getPwmDutyCycle(): number;
  on(event: 'interrupt', listener: (level: number, tick: number) => void): void;
  disableInterrupt(): void;
}
interface PigpioModule {
  Gpio: { new (gpio: number, options?: { mode?: number; edge?: number }): PigpioGpio; OUTPUT: number; INPUT: number; EITHER_EDGE: number };
  initialize(): void;
  terminate(): void;
}

const PWM_RANGE = 10_000;

function requireRaspberryPi(): void {
  let model = '';
  try {
    model = readFileSync('/proc/device-tree/model', 'utf8');
  } catch {
    // not a device-tree machine at all
  }
  if (!model.includes('Raspberry Pi')) {
    throw failedPrecondition(
      `the pi board needs a Raspberry Pi (this machine reports ${JSON.stringify(model.replace(/\0/g, '') || process.platform)}); use the fake board elsewhere`,
    );
  }
}

export default defineDriver<PiBoardAttributes, Board>(async ({ attributes }) => {
  requireRaspberryPi();
  const pigpio = await loadOptional<PigpioModule>('pigpio', 'a Raspberry Pi with the pigpio C library installed, and root');
  try {
    // Fails when the pigpio C library is missing, or without root.
    pigpio.initialize();
  } catch (err) {
    throw failedPrecondition(`the pi board could not start pigpio (${(err as Error).message}); it needs the pigpio C library and root`);
  }
  const { Gpio } = pigpio;
  const outputs = new Map<string, PigpioGpio>();
  const output = (pin: string) => {
    if (!/^\d+$/.test(pin) || Number(pin) > 53) throw invalidArgument(`pin ${JSON.stringify(pin)}: must be a BCM GPIO number from 0 to 53`);
    let gpio = outputs.get(pin);
    if (!gpio) {
      gpio = new Gpio(Number(pin), { mode: Gpio.OUTPUT });
      gpio.pwmRange(PWM_RANGE);
      outputs.set(pin, gpio);
    }
    return gpio;
  };
  const edges = new EdgeLog();
  const ticks = new Map<string, number>();
  const inputs = new Map<string, PigpioGpio>();
  for (const { name, pin } of attributes.digital_interrupts) {
    const gpio = new Gpio(Number(pin), { mode: Gpio.INPUT, edge: Gpio.EITHER_EDGE });
    ticks.set(name, 0);
    gpio.on('interrupt', (level) => {
      edges.record(name, level === 1);
      if (level === 1) ticks.set(name, ticks.get(name)! + 1);
    });
    inputs.set(name, gpio);
  }
  const interrupt = (name: string) => {
    const gpio = inputs.get(name);
    if (!gpio) throw invalidArgument(`digital_interrupt_name ${JSON.stringify(name)}: no such digital interrupt on this board`);
    return gpio;
  };
  const i2c = linuxI2C(Object.fromEntries(attributes.i2c_buses.map((b) => [b.name, b.bus])));

  return {
    setGPIO: (pin, high) => output(pin).digitalWrite(high ? 1 : 0),
    getGPIO: (pin) => output(pin).digitalRead() === 1,
    setPWM(pin, dutyPct) {
      if (!Number.isFinite(dutyPct) || dutyPct < 0 || dutyPct > 1) throw invalidArgument(`duty_pct ${dutyPct}: must be between 0 and 1`);
      output(pin).pwmWrite(Math.round(dutyPct * PWM_RANGE));
    },
    pwm: (pin) => output(pin).getPwmDutyCycle() / PWM_RANGE,
    setPWMFrequency(pin, frequencyHz) {
      if (!Number.isInteger(frequencyHz) || frequencyHz < 0) throw invalidArgument(`frequency_hz ${frequencyHz}: must be a whole number of Hz, at least 0`);
      // pigpio picks the nearest frequency its sample rate allows; PWMFrequency reports the one in effect.
      output(pin).pwmFrequency(frequencyHz);
    },
    pwmFrequency: (pin) => output(pin).getPwmFrequency(),
    readAnalogReader(reader) {
      throw invalidArgument(`analog_reader_name ${JSON.stringify(reader)}: a Raspberry Pi has no analog inputs; use an ADC sensor over I2C`);
    },
    getDigitalInterruptValue(name) {
      interrupt(name);
      return ticks.get(name)!;
    },
    digitalInterruptEdges(names, after) {
      const levels: Record<string, boolean> = {};
      for (const name of names) levels[name] = interrupt(name).digitalRead() === 1;
      return edges.since(names, after, levels);
    },
    capabilities: () => ({ kind: 'pi', i2cBuses: attributes.i2c_buses.map((b) => b.name) }),
    i2cReadRegister: i2c.i2cReadRegister,
    i2cWriteRegister: i2c.i2cWriteRegister,
    async close() {
      for (const gpio of inputs.values()) gpio.disableInterrupt();
      await i2c.close();
      pigpio.terminate();
    },
  };
});
