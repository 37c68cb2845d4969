// The train/valid/test split of a dataset version. Members are ordered by a hash of the seed and their
// binary data id (not by a random draw), so the same members and seed give the same split on any
// machine, and adding one member moves no other member to another part.
import { createHash } from 'node:crypto';
import { invalidArgument } from '../../core/serving/status-error.js';

export type SplitName = 'train' | 'valid' | 'test';

export interface SplitSpec {
  train: number;
  valid: number;
  test: number;
  seed: number;
}

/** Roboflow's default shares, used when a request gives none. */
export const defaultSplit: SplitSpec = { train: 0.7, valid: 0.2, test: 0.1, seed: 0 };

/** Checks the request's split (field names as in the proto) and fills in the default for an empty one. */
export function checkSplit(split: Partial<SplitSpec> | undefined): SplitSpec {
  const s = { train: split?.train ?? 0, valid: split?.valid ?? 0, test: split?.test ?? 0, seed: split?.seed ?? 0 };
  if (!Number.isInteger(s.seed) || s.seed < 0 || s.seed > 0xffffffff) throw invalidArgument(`split.seed must be an integer in [0, 4294967295], got ${s.seed}`);
  if (s.train === 0 && s.valid === 0 && s.test === 0) return { ...defaultSplit, seed: s.seed };
  for (const field of ['train', 'valid', 'test'] as const) {
    const v = s[field];
    if (!Number.isFinite(v) || v < 0 || v > 1) throw invalidArgument(`split.${field} must be a share in [0, 1], got ${v}`);
  }
  const sum = s.train + s.valid + s.test;
  if (Math.abs(sum - 1) > 1e-9) throw invalidArgument(`split.train + split.valid + split.test must be 1, got ${sum}`);
  return s;
}

/** Assigns each id its part: the first round(train·n) ids in hash order train, the next round(valid·n) valid, the rest test. */
export function splitMembers(ids: readonly string[], spec: SplitSpec): Map<string, SplitName> {
  const keyed = ids.map((id) => ({ id, key: createHash('sha256').update(`${spec.seed}:${id}`).digest('hex') }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.id < b.id ? -1 : 1));
  const n = keyed.length;
  const train = Math.round(spec.train * n);
  const valid = Math.min(n - train, Math.round(spec.valid * n));
  const out = new Map<string, SplitName>();
  keyed.forEach(({ id }, i) => out.set(id, i < train ? 'train' : i < train + valid ? 'valid' : 'test'));
  return out;
}
