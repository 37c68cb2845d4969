// Per-frame working arrays, kept between frames: a 640x480 frame needs several 1.2 MB index arrays, and
// allocating them anew every frame churns the allocator (RSS creeps) and costs time. Only the arrays
// handed out of the Segmenter (the objects) are allocated per frame, because they leave the thread.
export class Scratch {
  private readonly int32s = new Map<string, Int32Array>();
  private readonly bytes = new Map<string, Uint8Array>();

  /** An Int32Array of exactly n elements, reused between calls with the same key; contents are stale. */
  int32(key: string, n: number): Int32Array {
    let array = this.int32s.get(key);
    if (!array || array.length < n) this.int32s.set(key, (array = new Int32Array(n)));
    return array.subarray(0, n);
  }

  /** A Uint8Array of exactly n elements, reused between calls with the same key; contents are stale. */
  uint8(key: string, n: number): Uint8Array {
    let array = this.bytes.get(key);
    if (!array || array.length < n) this.bytes.set(key, (array = new Uint8Array(n)));
    return array.subarray(0, n);
  }
}
