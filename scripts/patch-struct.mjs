// Keeps the key "__proto__" of a google.protobuf.Struct as data. ts-proto's generated Struct code builds
// plain objects by assignment (`fields[key] = value`), and assigning "__proto__" sets the object's
// prototype instead of adding a key: the entry was dropped without a word, and the object inherited the
// sender's values (issue 27). This rewrites those assignments in gen/google/protobuf/struct.ts to a
// helper that defines "__proto__" as an own property (plain assignment for every other key, which is
// faster). It fails loudly when a pattern is missing, so a ts-proto upgrade cannot silently undo it.
import { readFileSync, writeFileSync } from 'node:fs';

const REWRITES = [
  ['message.fields[entry1.key] = entry1.value;', 'setOwnField(message.fields, entry1.key, entry1.value);'],
  ['obj.fields[k] = v;', 'setOwnField(obj.fields, k, v);'],
  ['acc[key] = value;', 'setOwnField(acc, key, value);'],
  ['struct.fields[key] = object[key];', 'setOwnField(struct.fields, key, object[key]);'],
  ['object[key] = message.fields[key];', 'setOwnField(object, key, message.fields[key]);'],
];

const HELPER = `
/** Added by scripts/patch-struct.mjs: "__proto__" becomes an own key, never the object's prototype. */
function setOwnField(target: { [key: string]: any }, key: string, value: any): void {
  if (key === "__proto__") {
    globalThis.Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
  } else {
    target[key] = value;
  }
}
`;

/** Rewrites the generated struct.ts at `path` in place; a second run changes nothing. */
export function patchStruct(path) {
  let text = readFileSync(path, 'utf8');
  if (text.includes('function setOwnField(')) return;
  for (const [from, to] of REWRITES) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`patch-struct: expected "${from}" once in ${path}, found it ${count} times (did ts-proto change?)`);
    text = text.replace(from, to);
  }
  writeFileSync(path, text + HELPER);
}
