// Saving what a server stream sends (a dataset zip, an MCAP file) as a download: the chunks are
// collected as they arrive, then handed to the browser as one file.
import { serverStream } from './stream.js';
import type { Method, Partial2 } from './client.js';

export async function saveStream<Req, Res extends { data: Uint8Array }>(m: Method<Req, Res>, request: Partial2<Req>, fileName: string): Promise<number> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  await serverStream(m, request, (message) => {
    chunks.push(message.data);
    bytes += message.data.length;
  });
  const url = URL.createObjectURL(new Blob(chunks as BlobPart[]));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return bytes;
}
