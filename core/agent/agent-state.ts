// What the agent keeps between runs and how it notices a changed file: its saved state (the cloud's last
// agent config and the installed versions, so an offline start uses them), and file stamps.
import { readFile, stat } from 'node:fs/promises';
import type { Layer } from './config-layers.js';
import type { Subsystem } from './errors.js';

export interface SavedState {
  cloud?: { agentConfig: Layer; maintenance?: unknown; checkIntervalSeconds?: number };
  versions?: Partial<Record<Subsystem, string>>;
}

export function layerOf(value: unknown): Layer {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Layer) : {};
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export async function stampOf(path: string): Promise<string> {
  const st = await stat(path).catch(() => undefined);
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'missing';
}

export async function readState(path: string): Promise<SavedState> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as SavedState;
  } catch {
    return {};
  }
}
