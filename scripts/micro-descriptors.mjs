// The part of the platform's descriptor set (gen/descriptors.binpb) that platform-micro-server's bundle
// carries for server reflection: the .proto files whose generated code the bundle links (the APIs it
// serves and the cloud APIs it calls), and every file they import. The cloud's own protos, which no
// runtime serves, stay out. Reads the FileDescriptorSet's wire format directly: each file is field 1 of
// the set, and inside it `name` is field 1 and `dependency` field 3; the kept files are copied byte for byte.

function varint(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[at++];
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return [value, at];
    shift += 7;
  }
}

/** The fields of a message, as [field number, wire type, start, end] where start..end is the payload. */
function* fields(bytes) {
  let at = 0;
  while (at < bytes.length) {
    const [key, next] = varint(bytes, at);
    const field = Math.floor(key / 8);
    const wire = key & 7;
    let start = next;
    let end;
    if (wire === 0) end = varint(bytes, next)[1];
    else if (wire === 1) end = next + 8;
    else if (wire === 5) end = next + 4;
    else if (wire === 2) {
      const [length, body] = varint(bytes, next);
      start = body;
      end = body + length;
    } else throw new Error(`descriptor set: wire type ${wire} of field ${field} is not supported`);
    yield [field, wire, start, end, at];
    at = end;
  }
}

/** The files of a FileDescriptorSet: name, imports, and the whole encoded entry (key, length, bytes). */
export function descriptorFiles(set) {
  const files = [];
  for (const [field, wire, start, end, entryStart] of fields(set)) {
    if (field !== 1 || wire !== 2) continue;
    const file = set.subarray(start, end);
    const text = (s, e) => Buffer.from(file.subarray(s, e)).toString('utf8');
    let name = '';
    const dependencies = [];
    for (const [f, w, s, e] of fields(file)) {
      if (f === 1 && w === 2) name = text(s, e);
      else if (f === 3 && w === 2) dependencies.push(text(s, e));
    }
    files.push({ name, dependencies, entry: set.subarray(entryStart, end) });
  }
  return files;
}

/** The set with only the files named and what they import, transitively, in the set's order. */
export function descriptorSubset(set, wanted) {
  const files = descriptorFiles(set);
  const byName = new Map(files.map((f) => [f.name, f]));
  const keep = new Set();
  const visit = (name) => {
    if (keep.has(name)) return;
    const file = byName.get(name);
    if (!file) throw new Error(`descriptor set: ${name} is not in it (run npm run gen)`);
    keep.add(name);
    file.dependencies.forEach(visit);
  };
  wanted.forEach(visit);
  return Buffer.concat(files.filter((f) => keep.has(f.name)).map((f) => f.entry));
}

/** The .proto files whose generated TypeScript (gen/<name>.ts) an esbuild metafile lists among its inputs. */
export function protosLinked(metafile) {
  const protos = [];
  for (const input of Object.keys(metafile.inputs)) {
    const m = /(?:^|[\\/])gen[\\/](.+)\.ts$/.exec(input);
    if (m) protos.push(`${m[1].replaceAll('\\', '/')}.proto`);
  }
  return protos;
}
