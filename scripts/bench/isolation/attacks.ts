// Every attack bench:isolation runs, in order. An attack of a hostile-tenant finding lives in its own
// file beside this one (attack-<name>.ts) and is listed here.
import { heavySql } from './attack-heavy-sql.js';
import { hugePosts } from './attack-huge-posts.js';
import { memoryInflation } from './attack-memory-inflation.js';
import { oversizedNames } from './attack-oversized-names.js';
import { pgLockout } from './attack-pg-lockout.js';
import { trainingFlood1, trainingFlood2 } from './attack-training-flood.js';
import { hugeCapture } from './attack-huge-capture.js';
import { hugeThumbnails } from './attack-huge-thumbnails.js';
import { logTails } from './attack-log-tails.js';
import { uploadStreams } from './attack-upload-streams.js';
import type { Attack } from './harness.js';

export const attacks: Attack[] = [
  heavySql,
  hugePosts,
  oversizedNames,
  pgLockout,
  memoryInflation,
  trainingFlood2,
  trainingFlood1,
  uploadStreams,
  hugeCapture,
  logTails,
  hugeThumbnails,
];
