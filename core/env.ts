/** A positive duration in milliseconds from the environment, or `fallback` when unset or not a positive number. */
export function envMs(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}
