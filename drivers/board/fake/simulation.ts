// A simulated DC motor with an encoder, wired to the fake board's pins: its speed follows the power that
// the driver pins express (PWM duty and direction levels, read back the way a motor driver chip would),
// and its encoder produces edges on the board's pins, which the board's digital interrupts count.
import { wiringOf, type DriverPins } from '../../motor/gpio/wiring.js';

export interface SimulatedMotorSpec {
  name: string;
  pins: DriverPins;
  max_rpm: number;
  ticks_per_rotation: number;
  encoder_pins: { a: string; b?: string };
}

export interface PinState {
  level(pin: string): boolean;
  duty(pin: string): number;
}

/** The signed power (-1..1) that the pins ask a driver chip for; forward is a high / dir high. */
export function powerFromPins(pins: DriverPins, state: PinState): number {
  const wiring = wiringOf(pins);
  if (wiring === 'pwm+dir') return (state.level(pins.dir!) ? 1 : -1) * state.duty(pins.pwm!);
  const a = state.level(pins.a!);
  const b = state.level(pins.b!);
  if (a === b) return 0; // both low: coast; both high: brake
  if (wiring === 'a+b+pwm') return (a ? 1 : -1) * state.duty(pins.pwm!);
  // a+b: the low pin carries PWM; the bridge drives while that pin is low, so power is 1 - duty.
  return a ? 1 - state.duty(pins.b!) : -(1 - state.duty(pins.a!));
}

// Quadrature states in forward order (a leads b): one count per state change, one pin changes per count.
const QUADRATURE: ReadonlyArray<readonly [boolean, boolean]> = [
  [false, false],
  [true, false],
  [true, true],
  [false, true],
];

export class SimulatedMotor {
  /** Encoder counts, fractional between edges. */
  private position = 0;
  private emitted = 0;

  constructor(readonly spec: SimulatedMotorSpec) {}

  get counts(): number {
    return this.emitted;
  }

  /** Advances the shaft by `dtMs` at `power` and emits one encoder edge per whole count crossed. */
  step(dtMs: number, power: number, setLevel: (pin: string, high: boolean) => void): void {
    const rpm = power * this.spec.max_rpm;
    this.position += (rpm / 60) * this.spec.ticks_per_rotation * (dtMs / 1000);
    const target = Math.trunc(this.position);
    const { a, b } = this.spec.encoder_pins;
    while (this.emitted !== target) {
      this.emitted += target > this.emitted ? 1 : -1;
      if (b) {
        const [levelA, levelB] = QUADRATURE[((this.emitted % 4) + 4) % 4]!;
        setLevel(a, levelA);
        setLevel(b, levelB);
      } else {
        // A single-channel encoder: one pulse (rising edge) per count, whatever the direction.
        setLevel(a, true);
        setLevel(a, false);
      }
    }
  }
}
