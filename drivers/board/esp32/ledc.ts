// The esp32's LEDC PWM peripheral: 8 channels (one per PWM pin) fed by 4 timers, each timer running at
// one frequency. Pins at the same frequency share a timer, so at most 4 distinct frequencies run at once.
export const ESP32_PWM_TIMERS = 4;
export const ESP32_PWM_CHANNELS = 8;

export class LedcAllocator {
  private readonly pins = new Map<string, number>();

  constructor(
    readonly timers = ESP32_PWM_TIMERS,
    readonly channels = ESP32_PWM_CHANNELS,
  ) {}

  /** Runs `pin` at `frequencyHz` (0 frees its channel); throws a RangeError when the hardware can't. */
  assign(pin: string, frequencyHz: number): void {
    if (frequencyHz === 0) {
      this.pins.delete(pin);
      return;
    }
    if (!this.pins.has(pin) && this.pins.size >= this.channels) {
      throw new RangeError(`pin ${pin}: no free PWM channel; the esp32 has ${this.channels}, used by pins ${[...this.pins.keys()].join(', ')}`);
    }
    const others = new Set([...this.pins].filter(([p]) => p !== pin).map(([, f]) => f));
    if (!others.has(frequencyHz) && others.size >= this.timers) {
      const inUse = [...others].sort((x, y) => x - y).join(', ');
      throw new RangeError(
        `frequency_hz ${frequencyHz} on pin ${pin}: needs a fifth PWM timer; the esp32 has ${this.timers}, all in use at ${inUse} Hz (pins at the same frequency share a timer)`,
      );
    }
    this.pins.set(pin, frequencyHz);
  }

  has(pin: string): boolean {
    return this.pins.has(pin);
  }

  /** Each running timer's frequency and the pins on it. */
  timersInUse(): Array<{ frequency_hz: number; pins: string[] }> {
    const byFrequency = new Map<number, string[]>();
    for (const [pin, f] of this.pins) byFrequency.set(f, [...(byFrequency.get(f) ?? []), pin]);
    return [...byFrequency].sort(([a], [b]) => a - b).map(([frequency_hz, pins]) => ({ frequency_hz, pins }));
  }
}
