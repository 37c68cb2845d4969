// Decoding a RobotService/Log request without holding the thread: a 10,000-entry request took 70 to
// 110 ms of the JavaScript thread in one piece (the generated decoder, on a loaded 2-core machine), and
// every other organization's calls waited for it (issue 27, finding 7). Here the entries are decoded a
// slice at a time, one slice per turn of the event loop; the result is the generated decoder's.
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { LogEntry, type LogRequest } from '../../gen/platform/app/v1/robot_part.js';

/** Entries decoded per turn: a few milliseconds of the thread. */
export const LOG_DECODE_SLICE = 500;

/** LogRequest.decode(bytes), a slice of `slice` entries per turn of the event loop. */
export async function decodeLogRequest(bytes: Uint8Array, slice = LOG_DECODE_SLICE): Promise<LogRequest> {
  const reader = new BinaryReader(bytes);
  const request: LogRequest = { id: '', logs: [] };
  let inSlice = 0;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag === 10) {
      request.id = reader.string();
    } else if (tag === 18) {
      if (inSlice === slice) {
        inSlice = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
      request.logs.push(LogEntry.decode(reader, reader.uint32()));
      inSlice++;
    } else if ((tag & 7) === 4 || tag === 0) {
      break;
    } else {
      reader.skip(tag & 7);
    }
  }
  return request;
}
