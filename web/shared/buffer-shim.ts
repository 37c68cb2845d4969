// Injected into the browser bundle in place of Node's Buffer, for the few uses in code the page shares:
// the generated protos build `bytes` fields with Buffer.alloc/Buffer.from, and the PCD header reader
// decodes its lines with Buffer.from(arrayBuffer, offset, length).toString('latin1').
class BrowserBuffer extends Uint8Array {
  override toString(encoding?: string): string {
    if (encoding === 'latin1' || encoding === 'binary') return Array.from(this, (b) => String.fromCharCode(b)).join('');
    return new TextDecoder().decode(this);
  }
}

export const Buffer = {
  alloc: (size: number) => new BrowserBuffer(size),
  from(source: ArrayBufferLike | ArrayLike<number>, offset?: number, length?: number): BrowserBuffer {
    if (source instanceof ArrayBuffer) {
      return new BrowserBuffer(source, offset ?? 0, length ?? source.byteLength - (offset ?? 0));
    }
    const view = source as ArrayLike<number>;
    return view instanceof Uint8Array ? new BrowserBuffer(view.buffer as ArrayBuffer, view.byteOffset, view.byteLength) : new BrowserBuffer(Array.from(view));
  },
};
