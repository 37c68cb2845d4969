// The submit form's arguments field as a training job's arguments map.
/** `key=value` lines (or commas) as the job's arguments; an error names the line. */
export function parseArguments(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(/[\n,]/).map((p) => p.trim())) {
    if (!part) continue;
    const eq = part.indexOf('=');
    if (eq <= 0) throw new Error(`arguments: "${part}" must have the form key=value`);
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}
