// The driver wirings a `gpio` motor (and the fake board's simulated motor) accepts, and the rule that
// names them. Shared by the motor's config validation and the board simulation so both agree.
export interface DriverPins {
  a?: string;
  b?: string;
  dir?: string;
  pwm?: string;
}

export type Wiring = 'pwm+dir' | 'a+b' | 'a+b+pwm';

export const WIRING_RULE = 'must be one of the driver wirings pwm+dir, a+b or a+b+pwm';

/** The wiring the pins form, or undefined when they form none of the valid ones. */
export function wiringOf(pins: DriverPins): Wiring | undefined {
  const has = (p: keyof DriverPins) => typeof pins[p] === 'string' && pins[p] !== '';
  if (has('a') && has('b')) return has('dir') ? undefined : has('pwm') ? 'a+b+pwm' : 'a+b';
  if (has('pwm') && has('dir') && !has('a') && !has('b')) return 'pwm+dir';
  return undefined;
}

/** Describes the pins given, for the error message: "a, pwm" or "no pins". */
export function describePins(pins: DriverPins): string {
  const given = (['a', 'b', 'dir', 'pwm'] as const).filter((p) => pins[p]);
  return given.length ? given.join('+') : 'no pins';
}

/** pwm_freq when the config leaves it out; the driver warns about a replaced frequency only when it was set. */
export const DEFAULT_PWM_FREQ = 800;
