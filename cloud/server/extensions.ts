// The extensions that platform-cloud starts, in order. Their contract is cloud/server/extension-contract.ts.
//
// To add one: write `export function createMyExtension(): CloudExtension` (or a const, when it holds
// nothing) in your folder, import it below and append it to the list (one line each; keep the list sorted by folder).
import type { CloudExtension } from '../kit/extension-contract.js';
import { agentExtension } from '../agent/extension.js';
import { createMlTrainingExtension } from '../mltraining/extension.js';
import { createPartsExtension } from '../parts/extension.js';
import { createQueryExtension } from '../query/extension.js';
import { createSignalingExtension } from '../signaling/extension.js';

/** A new set of extensions for one cloud: extensions that hold resources are factories. */
export function createExtensions(): CloudExtension[] {
  return [agentExtension, createMlTrainingExtension(), createPartsExtension(), createQueryExtension(), createSignalingExtension()];
}
