// Plain objects the three codec tests share: every kind of value, nested objects and lists, unicode
// keys, numbers the wire must keep bit for bit (-0, NaN, infinities, the extremes), empty objects,
// and the ts-proto rules (undefined keys left out, undefined list items as empty Values, the empty key).
export const cases: [string, Record<string, unknown>][] = [
  ['sensor readings', { readings: { temperature_c: 21.5, humidity_pct: 40.2, pressure_hpa: 1013.2 } }],
  ['an empty struct', {}],
  ['empty objects and lists inside', { a: {}, b: [], c: [{}, []], d: { e: {} } }],
  ['scalars of every kind', { n: -0.5, zero: 0, negZero: -0, big: 1e300, tiny: 5e-324, t: true, f: false, none: null, s: 'text', empty: '' }],
  ['numbers the wire keeps bit for bit', { nan: NaN, inf: Infinity, ninf: -Infinity, max: Number.MAX_VALUE, int: 2 ** 53 + 2 }],
  ['unicode keys and strings', { température: 'été ☀️', 日本: '語', '🤖': '🦾 bras', 'a\u0000b': '\u0000' }],
  ['nested structs and lists', { list: [1, 'two', [3, [4, [5]]], { five: 5, six: [6] }, null, true], deep: { a: { b: { c: { d: -2 } } } } }],
  ['undefined keys are left out, undefined list items are empty Values', { gone: undefined, kept: 1, list: [undefined, 2, undefined] }],
  ['the empty key', { '': 7, x: { '': '' } }],
  ['an own "__proto__" key is data', JSON.parse('{"__proto__": {"x": 1}, "10": "index", "b": [null, {"__proto__": [1]}]}') as Record<string, unknown>],
  [
    'long strings and keys (two-byte lengths, the C++ path)',
    { ['k'.repeat(200)]: 'x'.repeat(300), u: 'é'.repeat(100), list: Array.from({ length: 40 }, (_, i) => i) },
  ],
  ['short non-ASCII strings and lone surrogates', { é: 'ü', s: '\ud83e', t: '\udd16x', pair: '\ud83e\udd16', mixed: 'a\u07ffb\u0800c\uffff' }],
  ['a large struct (three-byte lengths)', { rows: Array.from({ length: 3000 }, (_, i) => ({ i, name: `row ${i}`, ok: i % 2 === 0 })) }],
];
