// LZF, the compression of PCD `DATA binary_compressed` (PCL uses liblzf). Format, per control byte c:
//   c < 32          a literal run of c+1 bytes follows;
//   c >= 32         a back reference: length (c >> 5) + 2, or 7 + next byte + 2 when (c >> 5) == 7,
//                   at distance ((c & 31) << 8 | next byte) + 1 behind the output position.
// Written from that format description; no third-party code.

export class LzfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LzfError';
  }
}

/** Decompresses `input` into exactly `outputLength` bytes; throws LzfError on corrupt or short data. */
export function lzfDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  const out = new Uint8Array(outputLength);
  let ip = 0;
  let op = 0;
  const inEnd = input.length;
  while (ip < inEnd) {
    const ctrl = input[ip++];
    if (ctrl < 32) {
      const run = ctrl + 1;
      if (ip + run > inEnd) throw new LzfError(`literal run of ${run} bytes at input offset ${ip - 1} passes the end of the data`);
      if (op + run > outputLength) throw new LzfError(`output passes the declared size ${outputLength}`);
      out.set(input.subarray(ip, ip + run), op);
      ip += run;
      op += run;
      continue;
    }
    let len = ctrl >> 5;
    if (len === 7) {
      if (ip >= inEnd) throw new LzfError('truncated back reference length');
      len += input[ip++];
    }
    len += 2;
    if (ip >= inEnd) throw new LzfError('truncated back reference offset');
    let ref = op - ((ctrl & 0x1f) << 8) - input[ip++] - 1;
    if (ref < 0) throw new LzfError(`back reference before the start of the output at offset ${op}`);
    if (op + len > outputLength) throw new LzfError(`output passes the declared size ${outputLength}`);
    // Byte by byte: a reference may overlap the bytes it is producing (run-length style).
    for (const end = op + len; op < end;) out[op++] = out[ref++];
  }
  if (op !== outputLength) throw new LzfError(`decompressed ${op} bytes, header declared ${outputLength}`);
  return out;
}

const HASH_BITS = 14;
const MAX_OFFSET = 8191;
const MAX_REF_LEN = 264; // 7 + 255 + 2

/** Greedy LZF compression with a 3-byte hash table. Output always decompresses with lzfDecompress. */
export function lzfCompress(input: Uint8Array): Uint8Array {
  const n = input.length;
  // Worst case: all literals, one control byte per 32 bytes.
  const out = new Uint8Array(n + Math.ceil(n / 32) + 1);
  const table = new Int32Array(1 << HASH_BITS).fill(-1);
  let op = 0;
  let litStart = 0;
  let ip = 0;
  const flushLiterals = (end: number) => {
    while (litStart < end) {
      const run = Math.min(32, end - litStart);
      out[op++] = run - 1;
      out.set(input.subarray(litStart, litStart + run), op);
      op += run;
      litStart += run;
    }
  };
  while (ip + 2 < n) {
    const h = (((input[ip] << 16) | (input[ip + 1] << 8) | input[ip + 2]) * 2654435761) >>> (32 - HASH_BITS);
    const ref = table[h];
    table[h] = ip;
    const off = ip - ref - 1;
    if (ref >= 0 && off <= MAX_OFFSET && input[ref] === input[ip] && input[ref + 1] === input[ip + 1] && input[ref + 2] === input[ip + 2]) {
      let len = 3;
      const maxLen = Math.min(MAX_REF_LEN, n - ip);
      while (len < maxLen && input[ref + len] === input[ip + len]) len++;
      flushLiterals(ip);
      const code = len - 2;
      if (code < 7) out[op++] = (code << 5) | (off >> 8);
      else {
        out[op++] = (7 << 5) | (off >> 8);
        out[op++] = code - 7;
      }
      out[op++] = off & 0xff;
      ip += len;
      litStart = ip;
    } else ip++;
  }
  flushLiterals(n);
  return out.slice(0, op);
}
