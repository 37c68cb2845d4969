// The body of bench:runtime's floor workers: a Piscina worker that does nothing.
export default function noop(): null {
  return null;
}
