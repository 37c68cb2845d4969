// gRPC-Web framing of a streamed reply: message frames (flag 0) and the trailer frame (flag 0x80).

/** Reads length-prefixed gRPC-Web frames from a byte stream that arrives in arbitrary pieces. */
export class FrameReader {
  private buffered = new Uint8Array(0);

  /** Adds bytes; returns the frames completed by them. */
  push(bytes: Uint8Array): { flag: number; payload: Uint8Array }[] {
    const joined = new Uint8Array(this.buffered.length + bytes.length);
    joined.set(this.buffered);
    joined.set(bytes, this.buffered.length);
    const out = [];
    let at = 0;
    while (at + 5 <= joined.length) {
      const length = new DataView(joined.buffer, at + 1, 4).getUint32(0);
      if (at + 5 + length > joined.length) break;
      out.push({ flag: joined[at], payload: joined.slice(at + 5, at + 5 + length) });
      at += 5 + length;
    }
    this.buffered = joined.slice(at);
    return out;
  }
}

/** The grpc-status and grpc-message of a trailer frame. */
export function trailerStatus(payload: Uint8Array): { code: number; detail: string } {
  let code = 2;
  let detail = 'the reply had no status';
  for (const line of new TextDecoder().decode(payload).split('\r\n')) {
    const colon = line.indexOf(':');
    const key = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (key === 'grpc-status') code = Number(value);
    if (key === 'grpc-message') detail = decodeURIComponent(value);
  }
  return { code, detail };
}
