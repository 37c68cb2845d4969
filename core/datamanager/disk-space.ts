// Disk-full deletion: when the disk holding capture_dir is at least disk_usage_deletion_threshold full
// and capture_dir holds at least capture_dir_deletion_threshold of what is used on it, every nth closed
// capture file (oldest first) is deleted, so capture keeps a thinned history instead of filling the disk.
import { statfsSync, unlinkSync } from 'node:fs';
import { closedCaptureFiles } from './sync.js';

export interface DiskThresholds {
  deleteEveryNth: number;
  diskUsage: number;
  captureDirShare: number;
}

export interface DiskUsage {
  usedBytes: number;
  totalBytes: number;
}

export function diskUsage(dir: string): DiskUsage {
  const s = statfsSync(dir);
  const total = s.blocks * s.bsize;
  return { totalBytes: total, usedBytes: total - s.bavail * s.bsize };
}

export interface DeletionReport {
  deleted: number;
  kept: number;
  freedBytes: number;
  diskUsedFraction: number;
  captureDirFraction: number;
}

/** Deletes every nth closed capture file when both thresholds are reached; undefined when they are not. */
export function deleteWhenDiskFull(captureDir: string, thresholds: DiskThresholds, usage: DiskUsage = diskUsage(captureDir)): DeletionReport | undefined {
  if (usage.totalBytes <= 0) return undefined;
  const diskUsedFraction = usage.usedBytes / usage.totalBytes;
  if (diskUsedFraction < thresholds.diskUsage) return undefined;
  const files = closedCaptureFiles(captureDir);
  const captureBytes = files.reduce((sum, f) => sum + f.bytes, 0);
  const captureDirFraction = usage.usedBytes > 0 ? captureBytes / usage.usedBytes : 0;
  if (captureDirFraction < thresholds.captureDirShare || files.length === 0) return undefined;
  let deleted = 0;
  let freedBytes = 0;
  files.forEach((file, i) => {
    if ((i + 1) % thresholds.deleteEveryNth !== 0) return;
    try {
      unlinkSync(file.path);
      deleted++;
      freedBytes += file.bytes;
    } catch {
      // Synced and deleted meanwhile: nothing to free.
    }
  });
  return { deleted, kept: files.length - deleted, freedBytes, diskUsedFraction, captureDirFraction };
}
