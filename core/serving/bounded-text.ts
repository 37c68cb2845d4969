// Bounds on what a caller's input can make an error message (and so a gRPC status) grow to. Messages
// echo inputs ("invalid credentials for entity <entity>", "no resource named <name>"), and a status'
// message travels in an HTTP/2 header: a header block over 64 KiB stops Node's HTTP/2 client from
// reading its connection at all (no error, no close, pings unanswered), so one 128 KiB name once wedged
// the web port's shared channel, and with it every later call of every visitor (issue 27, finding 3).
// Every message is therefore bounded here, in one place, whoever built it.

/** Longest run of one echoed value (a run of characters without white space) kept in a message. */
export const MAX_ECHO_CHARS = 200;
/** Longest status message, whatever it holds (multi-line validation errors stay whole below this). */
export const MAX_MESSAGE_CHARS = 4096;

/**
 * `value` as a message may quote it: its first characters and an ellipsis, MAX_ECHO_CHARS in all, then
 * how many were left out. Bounding a bounded value changes nothing.
 */
export function echo(value: string, max = MAX_ECHO_CHARS): string {
  if (value.length <= max) return value;
  return `${keep(value, max - 1)}… (${value.length - keep(value, max - 1).length} more characters)`;
}

/** The first `count` characters of `text`, one fewer when the last would be half a surrogate pair. */
function keep(text: string, count: number): string {
  return /[\uD800-\uDBFF]/.test(text[count - 1] ?? '') ? text.slice(0, count - 1) : text.slice(0, count);
}

// Runs longer than the echo limit, of anything but white space: the shape of an echoed name, id or token.
const LONG_RUN = new RegExp(`\\S{${MAX_ECHO_CHARS + 1},}`, 'g');

/**
 * A message with every overlong run of non-space characters cut to MAX_ECHO_CHARS (see echo), and the
 * whole cut to MAX_MESSAGE_CHARS. Short messages come back unchanged; bounding twice changes nothing.
 */
export function boundMessage(message: string): string {
  if (message.length <= MAX_ECHO_CHARS) return message;
  const runsCut = message.replace(LONG_RUN, (run) => echo(run));
  if (runsCut.length <= MAX_MESSAGE_CHARS) return runsCut;
  // The suffix's own length counts: the result is at most MAX_MESSAGE_CHARS long.
  const suffix = (left: number) => `… (message cut: ${left} more characters)`;
  const kept = keep(runsCut, MAX_MESSAGE_CHARS - suffix(runsCut.length).length);
  return kept + suffix(runsCut.length - kept.length);
}
