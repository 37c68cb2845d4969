// Reads an MCAP file back the two ways Foxglove's tools do, with every CRC checked: the indexed reader
// (summary, chunk indexes, chunk CRCs) and the stream reader (every record in file order, the data
// section CRC). Tests use it to check what ExportMcap wrote.
import * as zstd from '@foxglove/wasm-zstd';
import { McapIndexedReader, McapStreamReader, type McapTypes } from '@mcap/core';

export interface ReadMcap {
  messageCount: bigint;
  schemas: string[];
  channels: { topic: string; schema: string; messageEncoding: string }[];
  /** Messages in file order (the stream reader's), each with its channel's topic and schema. */
  messages: { topic: string; schema: string; logTime: bigint; body: Record<string, unknown> }[];
  /** Messages as the indexed reader returns them (log-time order). */
  indexed: number;
  chunkCompressions: string[];
}

export async function readMcap(bytes: Uint8Array): Promise<ReadMcap> {
  await zstd.isLoaded;
  const decompressHandlers = { zstd: (data: Uint8Array, size: bigint) => zstd.decompress(data, Number(size)) };
  const reader = await McapIndexedReader.Initialize({
    readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, length) => bytes.subarray(Number(offset), Number(offset + length)) },
    decompressHandlers,
  });
  let indexed = 0;
  for await (const _message of reader.readMessages({ validateCrcs: true })) indexed++;
  const stream = new McapStreamReader({ validateCrcs: true, decompressHandlers });
  stream.append(bytes);
  const schemas = new Map<number, string>();
  const channels = new Map<number, { topic: string; schema: string; messageEncoding: string }>();
  const messages: ReadMcap['messages'] = [];
  for (let record: McapTypes.TypedMcapRecord | undefined; (record = stream.nextRecord());) {
    if (record.type === 'Schema') schemas.set(record.id, record.name);
    if (record.type === 'Channel')
      channels.set(record.id, { topic: record.topic, schema: schemas.get(record.schemaId) ?? '', messageEncoding: record.messageEncoding });
    if (record.type === 'Message') {
      const channel = channels.get(record.channelId)!;
      messages.push({ topic: channel.topic, schema: channel.schema, logTime: record.logTime, body: JSON.parse(Buffer.from(record.data).toString('utf8')) });
    }
  }
  if (!stream.done()) throw new Error('the MCAP stream did not end with its footer and magic');
  return {
    messageCount: reader.statistics?.messageCount ?? -1n,
    schemas: [...reader.schemasById.values()].map((s) => s.name).sort(),
    channels: [...channels.values()],
    messages,
    indexed,
    chunkCompressions: [...new Set(reader.chunkIndexes.map((c) => c.compression))],
  };
}
