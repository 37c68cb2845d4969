// Durations in the machine config are written as in the reference platform: a number with a unit,
// `500ms`, `2s`, `1.5m`. A bare number is refused: its unit would be a guess.
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;

/** Milliseconds of a duration string, or undefined when it does not have the shape `<number><ms|s|m>`. */
export function parseDurationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
