// Capture files: append-only, one open file per resource and method.
//
//   file   = frame(header) frame(record)*
//   frame  = u32 LE payload length | u32 LE CRC-32 of the payload | payload
//   header = UTF-8 JSON (CaptureFileHeader)
//   record = one platform.app.datasync.v1.SensorData message (protobuf): the sensor-data item of a
//            DataCaptureUploadRequest, so that an upload is the header's metadata plus the records as
//            they are on disk (see upload-body.ts), with no decoding.
//
// A file is written as `<name>.prog` and renamed to `<name>.capture` when it is closed (fdatasync, rename,
// folder fsync); only `.capture` files are synced. A `.prog` left by a crash is recovered at start: its
// records are checked frame by frame, a torn or corrupt tail (a record cut by the crash) is truncated,
// and the file is closed like any other.
//
// fsync policy: the records of one batch (at most 50 ms of a method's captures, see capture-loop.ts) are
// one write(2) as soon as the batch arrives, so a crash of the process (kill -9) loses at most the last
// 50 ms of captures; the data reaches the disk itself at the latest at the next
// fdatasync, which runs once per second for each open file that has new records, and when a file closes.
// A power cut therefore loses at most the last second of captures.
//
// A failed write (a full disk: ENOSPC, often after part of the batch was written) leaves the file as it
// was: the bytes of the failed batch are cut again (ftruncate to the last whole record), the caller counts
// the batch as errors, and later records follow the last whole one, so they stay readable. Writes give
// their position explicitly, so a cut never leaves a hole before the next record. Should the cut itself
// fail, the writer is `broken`: it takes no more records and the caller closes it and starts a new file.
import { closeSync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';

export const OPEN_SUFFIX = '.prog';
export const CLOSED_SUFFIX = '.capture';
const FRAME_HEAD = 8;
/** A record larger than this is corruption, not data (binary captures are well below it). */
const MAX_RECORD = 256 * 1024 * 1024;

export interface CaptureFileHeader {
  /** Unique per file; the cloud stores it with the data and ignores it when it comes again. */
  upload_id: string;
  component_type: string;
  component_name: string;
  method_name: string;
  method_parameters: Record<string, unknown>;
  tags: string[];
  kind: 'tabular' | 'binary';
}

export function frame(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEAD + payload.byteLength);
  out.writeUInt32LE(payload.byteLength, 0);
  out.writeUInt32LE(crc32(payload), 4);
  out.set(payload, FRAME_HEAD);
  return out;
}

export function fsyncFolder(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The file calls a writer makes that can fail on a full disk; tests inject failing ones. */
export interface CaptureFileIo {
  writeSync(fd: number, buffer: Buffer, offset: number, length: number, position: number): number;
  ftruncateSync(fd: number, length: number): void;
}

const realIo: CaptureFileIo = { writeSync, ftruncateSync };

export class CaptureFileWriter {
  private readonly fd: number;
  private dirty = false;
  /** Bytes of whole frames in the file: where the next record goes. */
  bytes = 0;
  records = 0;
  /** A failed write could not be cut away again: the file takes no more records (close it). */
  broken = false;

  /** Creates `<base>.prog` holding the header; on failure nothing is left behind. */
  constructor(
    readonly base: string,
    readonly header: CaptureFileHeader,
    private readonly io: CaptureFileIo = realIo,
  ) {
    this.fd = openSync(base + OPEN_SUFFIX, 'wx');
    try {
      this.write(frame(Buffer.from(JSON.stringify(header))));
    } catch (err) {
      closeSync(this.fd);
      try {
        unlinkSync(base + OPEN_SUFFIX);
      } catch {
        // Already gone; a .prog without a header is removed at the next start anyway.
      }
      throw err;
    }
  }

  /** Writes whole frames at the end of the last whole frame; a failure cuts what it wrote and throws. */
  private write(buffer: Buffer): void {
    if (this.broken) throw new Error(`${this.base}${OPEN_SUFFIX}: an earlier failed write could not be undone; the file takes no more records`);
    let offset = 0;
    try {
      while (offset < buffer.byteLength) offset += this.io.writeSync(this.fd, buffer, offset, buffer.byteLength - offset, this.bytes + offset);
    } catch (err) {
      // Always cut, even when nothing seems written: the file must end at its last whole frame.
      try {
        this.io.ftruncateSync(this.fd, this.bytes);
      } catch {
        this.broken = true;
      }
      throw err;
    }
    this.bytes += buffer.byteLength;
    this.dirty = true;
  }

  append(record: Uint8Array): void {
    this.write(frame(record));
    this.records++;
  }

  /** Appends already framed records (see frame()) with one write(2). */
  appendFrames(frames: Buffer[], count: number): void {
    if (count === 0) return;
    this.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    this.records += count;
  }

  /** Makes what was appended durable; cheap when nothing was. */
  sync(): void {
    if (!this.dirty) return;
    fdatasyncSync(this.fd);
    this.dirty = false;
  }

  /** Syncs and closes; a file with records becomes `<base>.capture`, one without is removed. */
  close(): string | undefined {
    this.sync();
    closeSync(this.fd);
    if (this.records === 0) {
      unlinkSync(this.base + OPEN_SUFFIX);
      return undefined;
    }
    renameSync(this.base + OPEN_SUFFIX, this.base + CLOSED_SUFFIX);
    fsyncFolder(dirname(this.base));
    return this.base + CLOSED_SUFFIX;
  }
}

export interface CaptureFileContents {
  header: CaptureFileHeader;
  /** The records, as on disk (SensorData encodings). */
  records: Buffer[];
  /** Bytes of whole, checked frames from the start; what follows them is a torn or corrupt tail. */
  validBytes: number;
  /** True when bytes follow the last good frame. */
  torn: boolean;
}

/** Reads a capture file, stopping at the first frame that is incomplete or fails its checksum. */
export function readCaptureFile(path: string): CaptureFileContents {
  const data = readFileSync(path);
  const frames: Buffer[] = [];
  let offset = 0;
  while (offset + FRAME_HEAD <= data.byteLength) {
    const length = data.readUInt32LE(offset);
    if (length > MAX_RECORD || offset + FRAME_HEAD + length > data.byteLength) break;
    const payload = data.subarray(offset + FRAME_HEAD, offset + FRAME_HEAD + length);
    if (crc32(payload) !== data.readUInt32LE(offset + 4)) break;
    frames.push(payload);
    offset += FRAME_HEAD + length;
  }
  if (frames.length === 0) throw new Error(`${path}: no valid header frame`);
  const header = JSON.parse(frames[0].toString('utf8')) as CaptureFileHeader;
  return { header, records: frames.slice(1), validBytes: offset, torn: offset < data.byteLength };
}

/**
 * Recovers a `.prog` file left by a crash: cuts a torn tail, then closes it. Returns the closed path and
 * how many bytes were cut, or undefined when the file held no record (it is removed).
 */
export function recoverCaptureFile(progPath: string): { path?: string; cutBytes: number; records: number } {
  let contents: CaptureFileContents;
  try {
    contents = readCaptureFile(progPath);
  } catch {
    // Not even a header survived: nothing was captured into it.
    unlinkSync(progPath);
    return { cutBytes: 0, records: 0 };
  }
  const size = readFileSync(progPath).byteLength;
  if (contents.records.length === 0) {
    unlinkSync(progPath);
    return { cutBytes: size - contents.validBytes, records: 0 };
  }
  const fd = openSync(progPath, 'r+');
  try {
    if (contents.torn) ftruncateSync(fd, contents.validBytes);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const closed = progPath.slice(0, -OPEN_SUFFIX.length) + CLOSED_SUFFIX;
  renameSync(progPath, closed);
  fsyncFolder(dirname(progPath));
  return { path: closed, cutBytes: size - contents.validBytes, records: contents.records.length };
}
