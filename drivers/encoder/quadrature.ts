// Quadrature decoding: channels a and b are 90 degrees apart, so each level change moves through the
// Gray sequence 00 -> 10 -> 11 -> 01 (a leads: forward) or back; one count per change, four per cycle.

/** Position of (a, b) in the forward Gray sequence. */
const index = (a: boolean, b: boolean) => (a ? (b ? 2 : 1) : b ? 3 : 0);

export class QuadratureDecoder {
  private a = false;
  private b = false;
  count = 0;
  /** Changes where both channels moved at once (a missed edge): counted as no movement. */
  skipped = 0;

  /** Starts from the current levels, e.g. after a reset of the edge stream. */
  init(a: boolean, b: boolean): void {
    this.a = a;
    this.b = b;
  }

  edge(channel: 'a' | 'b', high: boolean): void {
    const before = index(this.a, this.b);
    if (channel === 'a') this.a = high;
    else this.b = high;
    const step = (index(this.a, this.b) - before + 4) % 4;
    if (step === 1) this.count++;
    else if (step === 3) this.count--;
    else if (step === 2) this.skipped++;
  }
}
