// fast-check generators of workflow-shaped programs that mix legitimate code with forbidden
// names and members in many spellings, plus an independent AST oracle for "forbidden".
import { parse } from '@babel/parser';
import fc from 'fast-check';
import { FORBIDDEN_GLOBALS, FORBIDDEN_MEMBERS } from '../src/index.js';

const HOST_NAMES = [...FORBIDDEN_GLOBALS.keys()];
const MEMBER_NAMES = [...FORBIDDEN_MEMBERS];
const SAFE_NAMES = ['wf', 'args', 'x', 'y', 'Object', 'JSON', 'Math', 'Promise'];
const SAFE_PROPS = [
  'runAgent',
  'length',
  'map',
  'text',
  'name',
  'constructorName',
  'prototypes',
  'then',
];

function hex(c: string): string {
  return c.charCodeAt(0).toString(16).padStart(4, '0');
}

/** A name spelled as a JS identifier, maybe with a unicode escape. */
const identSpelling = (name: string) =>
  fc.constantFrom(
    name,
    `\\u${hex(name[0] ?? 'a')}${name.slice(1)}`,
    `\\u{${hex(name[0] ?? 'a')}}${name.slice(1)}`,
  );

/** A name spelled as a string-valued key expression. */
const keySpelling = (name: string) =>
  fc.constantFrom(
    `'${name}'`,
    `"${name}"`,
    `'\\u${hex(name[0] ?? 'a')}${name.slice(1)}'`,
    `'\\x${hex(name[0] ?? 'a').slice(2)}${name.slice(1)}'`,
    `\`${name}\``,
    `'${name.slice(0, 2)}' + '${name.slice(2)}'`,
    `(args.f ? '${name}' : 'ok')`,
  );

const hostIdent = fc.constantFrom(...HOST_NAMES).chain(identSpelling);
const safeIdent = fc.constantFrom(...SAFE_NAMES);
const memberName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...SAFE_PROPS) },
  { weight: 1, arbitrary: fc.constantFrom(...MEMBER_NAMES) },
);

export const expression: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 6, arbitrary: safeIdent },
    { weight: 1, arbitrary: hostIdent },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 99 }).map(String) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...MEMBER_NAMES, ...HOST_NAMES, 'fs', 'ok').map((s) => `'${s}'`),
    },
    { weight: 3, arbitrary: fc.tuple(tie('expr'), memberName).map(([e, m]) => `(${e}).${m}`) },
    { weight: 1, arbitrary: fc.tuple(tie('expr'), memberName).map(([e, m]) => `(${e})?.${m}`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(tie('expr'), fc.oneof(memberName.chain(keySpelling), tie('expr')))
        .map(([e, k]) => `(${e})[${k}]`),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(tie('expr'), fc.array(tie('expr'), { maxLength: 2 }))
        .map(([f, a]) => `(${f})(${a.join(', ')})`),
    },
    { weight: 1, arbitrary: tie('expr').map((e) => `(async (p) => ${e})`) },
    { weight: 1, arbitrary: fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a} + ${b})`) },
    { weight: 1, arbitrary: tie('expr').map((e) => `\`t\${${e}}\``) },
    { weight: 1, arbitrary: tie('expr').map((e) => `typeof (${e})`) },
    { weight: 1, arbitrary: tie('expr').map((e) => `(await ${e})`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('a', 'b', '__proto__', "'__proto__'", 'constructor', '[args.k]'),
          tie('expr'),
        )
        .map(([k, e]) => `({ ${k}: ${e} })`),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('require', 'import'),
          fc.constantFrom("'fs'", "'node:os'", "'./x'", 'args.m'),
        )
        .map(([f, s]) => `${f}(${s})`),
    },
  ),
})).expr;

export const statement: fc.Arbitrary<string> = fc.oneof(
  expression.map((e) => `wf.log(${e});`),
  fc
    .tuple(
      fc.constantFrom('a', 'constructor', 'prototype', "'__proto__'", 'b: { caller: c }'),
      expression,
    )
    .map(([k, e]) => `{ const { ${k.includes(':') ? k : `${k}: z`} } = ${e} ?? {}; }`),
  expression.map((e) => `if (${e}) { await wf.runAgent({ prompt: 'p' }); }`),
  expression.map((e) => `for (const item of [${e}]) { wf.log(item); }`),
  fc.constant('debugger;'),
);

/** A whole workflow: run with a const prelude, statements and a returned expression. */
export const program: fc.Arbitrary<string> = fc
  .tuple(fc.array(statement, { maxLength: 4 }), expression)
  .map(
    ([body, result]) =>
      `async function run(wf, args) {\n  const x = 1;\n  const y = [x];\n  ${body.join('\n  ')}\n  await wf.runAgent({ prompt: 'go' });\n  return ${result};\n}\n`,
  );

/** A small JS token vocabulary for syntax-soup inputs. */
export const tokenSoup: fc.Arbitrary<string> = fc
  .array(
    fc.constantFrom(
      'async',
      'function',
      'run',
      '(',
      ')',
      '{',
      '}',
      '[',
      ']',
      ',',
      ';',
      '=>',
      '=',
      '.',
      '?.',
      '`',
      '${',
      "'",
      '"',
      '/',
      '*',
      '//',
      '/*',
      '*/',
      '\n',
      ' ',
      'wf',
      'args',
      'const',
      'let',
      'return',
      'await',
      'process',
      'constructor',
      '__proto__',
      'import',
      'export',
      'class',
      'static',
      'with',
      'using',
      '#!',
      '\\u0065',
      'eval',
      '1',
      '0x',
      'n',
      'for',
      'while',
      'true',
      '...',
      '@',
      '#x',
      '\u2028',
      '\uD800',
    ),
    { maxLength: 60 },
  )
  .map((t) => t.join(''));

const HOST = new Set(HOST_NAMES);
const MEMBERS = new Set(MEMBER_NAMES);

function literalKey(node: Record<string, unknown>): string | null {
  if (node.type === 'StringLiteral') return node.value as string;
  if (node.type === 'TemplateLiteral' && (node.expressions as unknown[]).length === 0) {
    return ((node.quasis as { value: { cooked: string } }[])[0]?.value.cooked ?? null) as
      | string
      | null;
  }
  return null;
}

/**
 * Independent oracle (a plain recursive walk, no scopes: the generators never bind host names):
 * the forbidden things a generated program may contain, as readable strings.
 */
export function forbiddenInAst(source: string): string[] | null {
  let ast: ReturnType<typeof parse>;
  try {
    ast = parse(source, { sourceType: 'script', strictMode: true });
  } catch {
    return null; // not a program at all
  }
  const found: string[] = [];
  const walk = (node: unknown, parent: Record<string, unknown> | null, key: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n, parent, key);
      return;
    }
    if (!node || typeof node !== 'object' || typeof (node as { type?: unknown }).type !== 'string')
      return;
    const n = node as Record<string, unknown>;
    const type = n.type as string;
    if (type === 'Identifier' && HOST.has(n.name as string)) {
      const isMemberProp =
        parent &&
        (parent.type === 'MemberExpression' || parent.type === 'OptionalMemberExpression') &&
        key === 'property' &&
        !parent.computed;
      const isKey = parent && parent.type === 'ObjectProperty' && key === 'key' && !parent.computed;
      if (!isMemberProp && !isKey) found.push(`identifier ${n.name}`);
    }
    if (type === 'MemberExpression' || type === 'OptionalMemberExpression') {
      const p = n.property as Record<string, unknown>;
      const name = n.computed ? literalKey(p) : p.type === 'Identifier' ? (p.name as string) : null;
      if (name !== null && MEMBERS.has(name)) found.push(`member ${name}`);
    }
    if (type === 'ObjectPattern') {
      for (const prop of n.properties as Record<string, unknown>[]) {
        if (prop.type !== 'ObjectProperty') continue;
        const k = prop.key as Record<string, unknown>;
        const name = prop.computed
          ? literalKey(k)
          : k.type === 'Identifier'
            ? (k.name as string)
            : literalKey(k);
        if (name !== null && MEMBERS.has(name)) found.push(`pattern key ${name}`);
      }
    }
    if (type === 'ObjectExpression') {
      for (const prop of n.properties as Record<string, unknown>[]) {
        const k = prop.key as Record<string, unknown> | undefined;
        if (!k) continue;
        const name = k.type === 'Identifier' && !prop.computed ? (k.name as string) : literalKey(k);
        if (name === '__proto__') found.push('object key __proto__');
      }
    }
    if (
      type === 'Import' ||
      type === 'ImportExpression' ||
      type === 'DebuggerStatement' ||
      type === 'WithStatement'
    ) {
      found.push(type);
    }
    for (const [k, v] of Object.entries(n)) {
      if (k === 'loc' || k === 'start' || k === 'end' || k === 'extra') continue;
      walk(v, n, k);
    }
  };
  walk(ast.program, null, 'program');
  return found;
}

/** Mutations of real workflows: a slice cut out, or replaced by a hostile or syntax fragment. */
export function mutatedFixture(sources: string[]): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.constantFrom(...sources),
      fc.nat(),
      fc.nat(),
      fc.constantFrom(
        '',
        '(',
        ')',
        '{',
        '}',
        '`${',
        '/',
        "'",
        ';',
        ',',
        '\n',
        'process',
        '.constructor',
        '__proto__:',
        '*/',
        'import(',
        ' await ',
        ' => ',
        '/(?<a>x)/',
        '\u0065',
        '#x',
      ),
    )
    .map(([src, a, b, insert]) => {
      const i = a % (src.length + 1);
      const j = Math.min(src.length, i + (b % 12));
      return src.slice(0, i) + insert + src.slice(j);
    });
}
