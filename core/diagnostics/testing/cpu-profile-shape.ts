// Test helper: the parts of a .cpuprofile that Chrome DevTools needs to load it.
export interface CpuProfileShape {
  nodes: unknown[];
  samples: number[];
  timeDeltas: number[];
}

/** Parses the file's text and throws naming the first part DevTools would reject. */
export function parseCpuProfile(text: string): CpuProfileShape {
  const profile = JSON.parse(text) as CpuProfileShape & { startTime: number; endTime: number };
  if (!Array.isArray(profile.nodes) || profile.nodes.length === 0) throw new Error('the profile has no nodes');
  if (!Array.isArray(profile.samples) || !Array.isArray(profile.timeDeltas)) throw new Error('the profile has no samples or timeDeltas');
  if (profile.samples.length !== profile.timeDeltas.length) throw new Error('samples and timeDeltas differ in length');
  if (!(profile.endTime >= profile.startTime)) throw new Error('endTime is before startTime');
  return profile;
}
