// The AST half of the contract: one iterative walk over the Babel AST that checks the program
// shape, allowlists node types, resolves scopes (host names are refused only as FREE references),
// checks member names, and gathers the quality lints. Iterative (explicit stack), so a deep AST
// that the parser survived cannot exhaust the host's stack here.
import type * as t from '@babel/types';
import { SOURCE_CONTRACT_CODES as C, type SourceContractCode } from '../errors.js';
import {
  DEFAULT_MEMBER_HINT,
  DEFAULT_UNKNOWN_GLOBAL_HINT,
  FORBIDDEN_GLOBALS,
  FORBIDDEN_MEMBER_HINT,
  FORBIDDEN_MEMBERS,
  isNodeModuleSpecifier,
  KNOWN_GLOBALS,
  PRELUDE_GLOBALS,
  prototypeMethodHint,
  UNKNOWN_GLOBAL_HINT,
} from '../policy.js';
import { AGENT_METHOD_NAMES, WF_METHOD_NAMES, WF_METHODS } from '../wf-methods.js';

export interface Finding {
  code: SourceContractCode;
  lint: boolean;
  message: string;
  hint: string;
  line: number;
  column: number;
}

type Node = t.Node;
/** The workflow's entry point: `async function run` or `const run = async (...) => ...`. */
type RunFunction = t.FunctionDeclaration | t.ArrowFunctionExpression | t.FunctionExpression;

/** A lexical scope. `fn` scopes receive `var` and parameters. Values are the declaring nodes. */
class Scope {
  /** Created on the first declaration: most block scopes declare nothing. */
  names: Map<string, Node> | null = null;
  constructor(
    readonly parent: Scope | null,
    readonly fn: boolean,
  ) {}
  declare(name: string, node: Node): void {
    this.names ??= new Map();
    if (!this.names.has(name)) this.names.set(name, node);
  }
  varScope(): Scope {
    let s: Scope = this;
    while (!s.fn && s.parent) s = s.parent;
    return s;
  }
  resolve(name: string): Node | undefined {
    for (let s: Scope | null = this; s; s = s.parent) {
      const found = s.names?.get(name);
      if (found) return found;
    }
    return undefined;
  }
}

const MODE_EXPR = 0;
const MODE_DECL = 1;
const MODE_ASSIGN = 2;
/** Stack entries that enter or leave a control frame (the node slot holds the Frame). */
const MODE_ENTER = 3;
const MODE_EXIT = 4;
type Mode = typeof MODE_EXPR | typeof MODE_DECL | typeof MODE_ASSIGN;
type StackMode = Mode | typeof MODE_ENTER | typeof MODE_EXIT;

/** Control frames for the unbounded-loop lint: which loops some exit statement leaves. */
interface Frame {
  kind: 'loop' | 'switch' | 'label' | 'function' | 'try';
  label?: string;
  exited?: boolean;
  /** For loops with a constant condition: reported on exit unless something left them. */
  unbounded?: t.Loop;
}

interface Ref {
  name: string;
  scope: Scope;
  node: t.Identifier;
}

interface WfMember {
  object: t.Identifier;
  scope: Scope;
  name: string;
  node: Node;
}

const MAX_KEY_FOLD_DEPTH = 32;
const MAX_KEY_CANDIDATES = 16;

function pos(node: Node): { line: number; column: number } {
  const start = node.loc?.start;
  return start ? { line: start.line, column: start.column + 1 } : { line: 1, column: 1 };
}

function isTruthyConstant(node: Node | null | undefined): boolean {
  if (!node) return true; // `for (;;)`
  switch (node.type) {
    case 'BooleanLiteral':
      return node.value;
    case 'NumericLiteral':
      return node.value !== 0 && !Number.isNaN(node.value);
    case 'StringLiteral':
      return node.value.length > 0;
    case 'UnaryExpression':
      return node.operator === '!' && isFalsyConstant(node.argument);
    default:
      return false;
  }
}

function isFalsyConstant(node: Node): boolean {
  switch (node.type) {
    case 'BooleanLiteral':
      return !node.value;
    case 'NumericLiteral':
      return node.value === 0;
    case 'StringLiteral':
      return node.value.length === 0;
    case 'NullLiteral':
      return true;
    default:
      return false;
  }
}

/**
 * Every string a key expression can evaluate to when it is built from literals only
 * (`'constr' + 'uctor'`, `` `${'__pro'}to__` ``, `c ? 'a' : 'constructor'`), or null when the
 * key depends on runtime values. Runtime-built keys are the sandbox's job (README: Non-guarantees).
 */
export function staticKeys(node: Node, depth = 0): string[] | null {
  if (depth > MAX_KEY_FOLD_DEPTH) return null;
  switch (node.type) {
    case 'StringLiteral':
      return [node.value];
    case 'NumericLiteral':
      return [String(node.value)];
    case 'BigIntLiteral':
      return [String(BigInt(node.value))];
    case 'TemplateLiteral': {
      let acc: string[] = [''];
      for (let i = 0; i < node.quasis.length; i++) {
        const cooked = node.quasis[i]?.value.cooked;
        if (cooked == null) return null;
        acc = acc.map((a) => a + cooked);
        const expr = node.expressions[i];
        if (expr) {
          const parts = staticKeys(expr, depth + 1);
          if (!parts) return null;
          acc = cross(acc, parts);
          if (acc.length > MAX_KEY_CANDIDATES) return null;
        }
      }
      return acc;
    }
    case 'BinaryExpression': {
      if (node.operator !== '+' || node.left.type === 'PrivateName') return null;
      const left = staticKeys(node.left, depth + 1);
      const right = left && staticKeys(node.right, depth + 1);
      if (!left || !right) return null;
      const out = cross(left, right);
      return out.length > MAX_KEY_CANDIDATES ? null : out;
    }
    case 'ConditionalExpression':
      return union(staticKeys(node.consequent, depth + 1), staticKeys(node.alternate, depth + 1));
    case 'LogicalExpression':
      return union(staticKeys(node.left, depth + 1), staticKeys(node.right, depth + 1));
    case 'SequenceExpression': {
      const last = node.expressions[node.expressions.length - 1];
      return last ? staticKeys(last, depth + 1) : null;
    }
    default:
      return null;
  }
}

function cross(a: string[], b: string[]): string[] {
  const out: string[] = [];
  for (const x of a) for (const y of b) out.push(x + y);
  return out;
}

function union(a: string[] | null, b: string[] | null): string[] | null {
  if (!a && !b) return null;
  const out = [...(a ?? []), ...(b ?? [])];
  return out.length > MAX_KEY_CANDIDATES ? out.slice(0, MAX_KEY_CANDIDATES) : out;
}

/** Name of the called method (`x.runAgent`, `x['runAgent']`, `runAgent`), or null. */
function calleeMethodName(callee: Node): string | null {
  if (callee.type === 'Identifier') return callee.name;
  if (callee.type === 'MemberExpression' || callee.type === 'OptionalMemberExpression') {
    if (!callee.computed && callee.property.type === 'Identifier') return callee.property.name;
    if (callee.computed && callee.property.type === 'StringLiteral') return callee.property.value;
  }
  return null;
}

function calleeText(callee: Node, name: string): string {
  if (callee.type === 'Identifier') return name;
  const object = (callee as t.MemberExpression).object;
  return `${object.type === 'Identifier' ? object.name : '(...)'}.${name}`;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] ?? 0;
      row[j] = Math.min(
        (row[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return row[b.length] ?? 0;
}

function closestWfMethod(name: string): string | null {
  let best: string | null = null;
  let bestDistance = 3;
  for (const m of WF_METHODS) {
    const d = editDistance(name.toLowerCase(), m.name.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = m.name;
    }
  }
  return best;
}

export class Analyzer {
  readonly findings: Finding[] = [];
  // The work stack as parallel arrays (one entry per pending node, no per-node allocation).
  private readonly stackNodes: (Node | Frame)[] = [];
  private readonly stackScopes: Scope[] = [];
  private readonly stackModes: StackMode[] = [];
  private readonly stackTargets: (Scope | null)[] = [];
  private readonly frames: Frame[] = [];
  private readonly refs: Ref[] = [];
  private readonly wfMembers: WfMember[] = [];
  private readonly global = new Scope(null, true);
  private agentCalls = 0;
  private readonly memberHints = new Map<Node, string>();
  private runParam: Node | null = null;
  private runNode: RunFunction | null = null;

  analyze(program: t.Program): Finding[] {
    this.checkProgramShape(program);
    for (let i = program.body.length - 1; i >= 0; i--) {
      const statement = program.body[i];
      if (statement) this.push(statement, this.global);
    }
    this.drain();
    this.resolveReferences();
    if (this.runNode && this.agentCalls === 0) {
      this.report(
        C.WF_SOURCE_LINT_NO_AGENT_WORK,
        (this.runNode.type === 'FunctionDeclaration' ? this.runNode.id : null) ?? this.runNode,
        '`run` never calls an agent method (runAgent, spawnAgent, synthesize, workflow)',
        'delegate the work to child agents with await wf.runAgent({ name, prompt })',
      );
    }
    return this.findings;
  }

  private report(
    code: SourceContractCode,
    node: Node | { line: number; column: number },
    message: string,
    hint: string,
  ): void {
    const at = 'type' in node ? pos(node) : node;
    this.findings.push({
      code,
      lint: code.startsWith('WF_SOURCE_LINT_'),
      message,
      hint,
      line: at.line,
      column: at.column,
    });
  }

  private entry(n: Node | Frame, s: Scope, m: StackMode, d: Scope | null): void {
    this.stackNodes.push(n);
    this.stackScopes.push(s);
    this.stackModes.push(m);
    this.stackTargets.push(d);
  }

  private push(n: Node, s: Scope, m: Mode = MODE_EXPR, d: Scope | null = null): void {
    this.entry(n, s, m, d);
  }

  private pushAll(
    nodes: readonly (Node | null | undefined)[],
    s: Scope,
    m: Mode = MODE_EXPR,
    d: Scope | null = null,
  ): void {
    for (let i = nodes.length - 1; i >= 0; i--) {
      const n = nodes[i];
      if (n) this.entry(n, s, m, d);
    }
  }

  private drain(): void {
    const { stackNodes, stackScopes, stackModes, stackTargets } = this;
    while (stackNodes.length > 0) {
      const n = stackNodes.pop() as Node | Frame;
      const s = stackScopes.pop() as Scope;
      const m = stackModes.pop() as StackMode;
      const d = stackTargets.pop() as Scope | null;
      if (m === MODE_EXPR) this.visit(n as Node, s);
      else if (m === MODE_ENTER) this.frames.push(n as Frame);
      else if (m === MODE_EXIT) this.leaveFrame(n as Frame);
      else this.visitPattern(n as Node, s, m, d);
    }
  }

  // ---- program shape -------------------------------------------------------------------------

  private checkProgramShape(program: t.Program): void {
    if (program.interpreter) {
      this.report(
        C.WF_SOURCE_UNSUPPORTED_SYNTAX,
        program.interpreter,
        'a `#!` line is not allowed in workflow source',
        'delete the first line starting with #!',
      );
    }
    // Directives ('use strict') are accepted: the program already runs as strict code, so a
    // directive changes nothing. A top-level class declaration is accepted like
    // `const X = class {}` (static blocks stay refused in both).
    let runs = 0;
    const countRun = (node: Node, fn: RunFunction): void => {
      runs++;
      if (runs > 1) {
        this.report(
          C.WF_SOURCE_SHAPE,
          node,
          '`run` is declared more than once',
          'keep exactly one `async function run(wf, args)`; rename the others',
        );
      } else this.checkRun(fn);
    };
    for (const statement of program.body) {
      switch (statement.type) {
        case 'FunctionDeclaration':
          if (statement.id?.name === 'run') countRun(statement, statement);
          break;
        case 'VariableDeclaration':
          if (statement.kind !== 'const') {
            // top-level mutable state stays refused (the hostile corpus holds it)
            this.report(
              C.WF_SOURCE_SHAPE,
              statement,
              `top-level \`${statement.kind}\` declarations are not allowed`,
              'use const at top level, or move the variable inside run',
            );
          }
          for (const d of statement.declarations) {
            if (d.id.type !== 'Identifier' || d.id.name !== 'run') continue;
            const init = d.init;
            if (
              statement.kind === 'const' &&
              (init?.type === 'ArrowFunctionExpression' || init?.type === 'FunctionExpression')
            ) {
              // `const run = async (wf, args) => { ... }` is the same program as the declaration.
              countRun(d, init);
            }
          }
          break;
        case 'ClassDeclaration':
          break;
        case 'EmptyStatement':
          break; // a stray `;` after a declaration runs nothing
        case 'ImportDeclaration':
        case 'ExportAllDeclaration':
        case 'ExportDefaultDeclaration':
        case 'ExportNamedDeclaration':
          this.report(
            C.WF_SOURCE_MODULE_SYNTAX,
            statement,
            'import/export declarations are not allowed',
            'remove it: a workflow is one script whose result is the return value of run',
          );
          break;
        default:
          this.report(
            C.WF_SOURCE_SHAPE,
            statement,
            `top-level ${describeStatement(statement)} would run when the workflow loads`,
            'move this code inside `async function run(wf, args) { ... }`',
          );
      }
    }
    if (runs === 0) {
      const otherRun = program.body.some(
        (s) =>
          s.type === 'VariableDeclaration' &&
          s.declarations.some((d) => d.id.type === 'Identifier' && d.id.name === 'run'),
      );
      this.report(
        C.WF_SOURCE_SHAPE,
        { line: 1, column: 1 },
        'the workflow has no top-level `async function run(wf, args)`',
        otherRun
          ? 'declare run as a function: `async function run(wf, args) { ... }` or `const run = async (wf, args) => { ... }`'
          : 'wrap the workflow in `async function run(wf, args) { ... }` and return its result',
      );
    }
  }

  private checkRun(run: RunFunction): void {
    this.runNode = run;
    if (!run.async || run.generator) {
      this.report(
        C.WF_SOURCE_SHAPE,
        run,
        run.generator ? '`run` must not be a generator' : '`run` must be an async function',
        'declare it exactly as `async function run(wf, args) { ... }`',
      );
    }
    if (run.params.length > 2) {
      this.report(
        C.WF_SOURCE_SHAPE,
        run.params[2] ?? run,
        `\`run\` takes at most 2 parameters (wf, args), found ${run.params.length}`,
        'read extra inputs from fields of args instead of extra parameters',
      );
    }
    for (const param of run.params) {
      if (param.type === 'RestElement') {
        this.report(
          C.WF_SOURCE_SHAPE,
          param,
          '`run` parameters cannot be a rest parameter',
          'name them: `async function run(wf, args)`',
        );
      }
    }
    const first = run.params[0];
    const wf = first?.type === 'AssignmentPattern' ? first.left : first;
    if (wf?.type === 'Identifier') this.runParam = wf;
    else if (wf?.type === 'ObjectPattern') {
      // `async function run({ runAgent, parallel }, args)`: the keys name wf methods.
      for (const p of wf.properties) {
        if (p.type !== 'ObjectProperty' || p.computed || p.key.type !== 'Identifier') continue;
        if (!WF_METHOD_NAMES.has(p.key.name)) this.unknownWfMethod('wf', p.key.name, p.key);
      }
    }
  }

  private unknownWfMethod(object: string, name: string, node: Node): void {
    const suggestion = closestWfMethod(name);
    this.report(
      C.WF_SOURCE_LINT_UNKNOWN_WF_METHOD,
      node,
      `\`${object}.${name}\` is not part of the workflow API`,
      suggestion
        ? `did you mean \`${object}.${suggestion}\`?`
        : `use one of: ${WF_METHODS.map((x) => x.name).join(', ')}`,
    );
  }

  // ---- control frames (unbounded-loop lint) --------------------------------------------------

  /**
   * Runs `children` (which push tasks) inside `frame`: the frame is entered when the first of
   * those tasks is about to run and left after the last, whatever else is on the stack.
   */
  private withFrame(frame: Frame, children: () => void): void {
    this.entry(frame, this.global, MODE_EXIT, null);
    children();
    this.entry(frame, this.global, MODE_ENTER, null);
  }

  private leaveFrame(frame: Frame): void {
    this.frames.pop();
    if (frame.unbounded && !frame.exited) {
      this.report(
        C.WF_SOURCE_LINT_UNBOUNDED_LOOP,
        frame.unbounded,
        'this loop has a constant condition and no break, return or throw that leaves it',
        'bound it: loop over a fixed count (for (let i = 0; i < max; i++)) or add a break',
      );
    }
  }

  /** Marks loops left by an exit; `until` picks the frame that stops the search. */
  private exitLoops(until: (f: Frame) => boolean, includeTarget: boolean): void {
    const loops: Frame[] = [];
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i] as Frame;
      if (until(f)) {
        if (includeTarget && f.kind === 'loop') loops.push(f);
        for (const l of loops) l.exited = true;
        return;
      }
      if (f.kind === 'function') return; // a label or loop never crosses a function boundary
      if (f.kind === 'loop') loops.push(f);
    }
    for (const l of loops) l.exited = true;
  }

  private onBreak(node: t.BreakStatement): void {
    const label = node.label?.name;
    if (label) this.exitLoops((f) => f.kind === 'label' && f.label === label, true);
    else this.exitLoops((f) => f.kind === 'loop' || f.kind === 'switch', true);
  }

  private onContinue(node: t.ContinueStatement): void {
    const label = node.label?.name;
    if (!label) return;
    // `continue L` leaves every loop above L's loop but not L's loop itself.
    const passed: Frame[] = [];
    for (let i = this.frames.length - 1; i >= 0; i--) {
      const f = this.frames[i] as Frame;
      if (f.kind === 'function') return;
      if (f.kind === 'label' && f.label === label) {
        passed.pop();
        for (const l of passed) l.exited = true;
        return;
      }
      if (f.kind === 'loop') passed.push(f);
    }
  }

  private loop(node: t.Loop, candidate: boolean, children: () => void): void {
    const frame: Frame = candidate ? { kind: 'loop', unbounded: node } : { kind: 'loop' };
    this.withFrame(frame, children);
  }

  // ---- functions and classes -----------------------------------------------------------------

  private fn(
    node:
      | t.FunctionDeclaration
      | t.FunctionExpression
      | t.ArrowFunctionExpression
      | t.ObjectMethod
      | t.ClassMethod
      | t.ClassPrivateMethod,
    outer: Scope,
  ): void {
    const params = new Scope(outer, true);
    if (node.type === 'FunctionExpression' && node.id) params.declare(node.id.name, node.id);
    if (node.type !== 'ArrowFunctionExpression') params.declare('arguments', node);
    // The body gets its own var scope: a default value (`a = process`) must not resolve to a
    // body declaration (`var process`), since at run time it reads the outer binding.
    const body = new Scope(params, true);
    this.withFrame({ kind: 'function' }, () => {
      const block = node.body;
      if (block.type === 'BlockStatement') this.pushAll(block.body, body);
      else this.push(block, body);
      for (let i = node.params.length - 1; i >= 0; i--) {
        const param = node.params[i];
        if (param) this.push(param, params, MODE_DECL, params);
      }
    });
  }

  private klass(node: t.ClassDeclaration | t.ClassExpression, outer: Scope): void {
    const scope = new Scope(outer, false);
    if (node.id) scope.declare(node.id.name, node.id);
    for (let i = node.body.body.length - 1; i >= 0; i--) {
      const member = node.body.body[i] as Node;
      switch (member.type) {
        case 'ClassMethod':
          this.fn(member, scope);
          if (member.computed) this.push(member.key, scope);
          break;
        case 'ClassPrivateMethod':
          this.fn(member, scope);
          break;
        case 'ClassProperty':
          if (member.value) this.push(member.value, new Scope(scope, true));
          if (member.computed) this.push(member.key, scope);
          break;
        case 'ClassPrivateProperty':
          if (member.value) this.push(member.value, new Scope(scope, true));
          break;
        case 'StaticBlock': {
          this.report(
            C.WF_SOURCE_SHAPE,
            member,
            'class static blocks are not allowed (they run code when the class is defined)',
            'move that code into a static method and call it from run',
          );
          const blockScope = new Scope(scope, true);
          this.withFrame({ kind: 'function' }, () => this.pushAll(member.body, blockScope));
          break;
        }
        default:
          this.unsupported(member);
      }
    }
    if (node.superClass) this.push(node.superClass, outer);
    if (node.decorators?.length) this.unsupported(node.decorators[0] as Node);
  }

  private unsupported(node: Node): void {
    this.report(
      C.WF_SOURCE_UNSUPPORTED_SYNTAX,
      node,
      `${node.type} syntax is not supported by the workflow runtime`,
      'rewrite it with plain ES2023 syntax (functions, classes, destructuring, async/await)',
    );
  }

  // ---- member names --------------------------------------------------------------------------

  private forbiddenMember(name: string, node: Node, how: string): void {
    this.report(
      C.WF_SOURCE_FORBIDDEN_MEMBER,
      node,
      `${how} \`${name}\` is not allowed`,
      this.memberHints.get(node) ?? FORBIDDEN_MEMBER_HINT.get(name) ?? DEFAULT_MEMBER_HINT,
    );
  }

  private checkComputedKey(key: Node, how: string, names: ReadonlySet<string>): void {
    const keys = staticKeys(key);
    if (!keys) return;
    for (const k of new Set(keys)) if (names.has(k)) this.forbiddenMember(k, key, how);
  }

  private checkLiteralKey(
    key: Node,
    computed: boolean,
    how: string,
    names: ReadonlySet<string>,
  ): void {
    if (computed) {
      this.checkComputedKey(key, how, names);
      return;
    }
    const name =
      key.type === 'Identifier' ? key.name : key.type === 'StringLiteral' ? key.value : null;
    if (name !== null && names.has(name)) this.forbiddenMember(name, key, how);
  }

  // ---- expressions and statements -------------------------------------------------------------

  private visit(node: Node, scope: Scope): void {
    switch (node.type) {
      // statements
      case 'ExpressionStatement':
        this.checkDiscarded(node.expression);
        this.push(node.expression, scope);
        return;
      case 'BlockStatement':
        this.pushAll(node.body, new Scope(scope, false));
        return;
      case 'EmptyStatement':
        return;
      case 'DebuggerStatement':
        this.report(
          C.WF_SOURCE_FORBIDDEN_STATEMENT,
          node,
          '`debugger` statements are not allowed',
          'remove it; use wf.log(...) to trace a workflow',
        );
        return;
      case 'WithStatement':
        this.report(
          C.WF_SOURCE_FORBIDDEN_STATEMENT,
          node,
          '`with` statements are not allowed',
          'name the object explicitly: obj.field instead of with (obj) { field }',
        );
        this.push(node.body, scope);
        this.push(node.object, scope);
        return;
      case 'ReturnStatement':
        this.exitLoops((f) => f.kind === 'function', false);
        if (node.argument) this.push(node.argument, scope);
        return;
      case 'ThrowStatement':
        this.exitLoops((f) => f.kind === 'function' || f.kind === 'try', false);
        this.push(node.argument, scope);
        return;
      case 'BreakStatement':
        this.onBreak(node);
        return;
      case 'ContinueStatement':
        this.onContinue(node);
        return;
      case 'LabeledStatement':
        this.withFrame({ kind: 'label', label: node.label.name }, () =>
          this.push(node.body, scope),
        );
        return;
      case 'IfStatement':
        this.pushAll([node.test, node.consequent, node.alternate], scope);
        return;
      case 'SwitchStatement': {
        const inner = new Scope(scope, false);
        this.withFrame({ kind: 'switch' }, () => {
          for (let i = node.cases.length - 1; i >= 0; i--) {
            const c = node.cases[i] as t.SwitchCase;
            this.pushAll(c.consequent, inner);
            if (c.test) this.push(c.test, inner);
          }
        });
        this.push(node.discriminant, scope);
        return;
      }
      case 'TryStatement':
        if (node.finalizer) this.push(node.finalizer, scope);
        if (node.handler) this.push(node.handler, scope);
        if (node.handler) this.withFrame({ kind: 'try' }, () => this.push(node.block, scope));
        else this.push(node.block, scope);
        return;
      case 'CatchClause': {
        const inner = new Scope(scope, false);
        this.push(node.body, inner);
        if (node.param) this.push(node.param, inner, MODE_DECL, inner);
        return;
      }
      case 'WhileStatement':
        this.loop(node, isTruthyConstant(node.test), () => this.push(node.body, scope));
        this.push(node.test, scope);
        return;
      case 'DoWhileStatement':
        this.push(node.test, scope);
        this.loop(node, isTruthyConstant(node.test), () => this.push(node.body, scope));
        return;
      case 'ForStatement': {
        const head = new Scope(scope, false);
        if (node.update) {
          this.checkDiscarded(node.update);
          this.push(node.update, head);
        }
        this.loop(node, isTruthyConstant(node.test), () => this.push(node.body, head));
        if (node.test) this.push(node.test, head);
        if (node.init) {
          if (node.init.type !== 'VariableDeclaration') this.checkDiscarded(node.init);
          this.push(node.init, head);
        }
        return;
      }
      case 'ForInStatement':
      case 'ForOfStatement': {
        const head = new Scope(scope, false);
        this.loop(node, false, () => this.push(node.body, head));
        this.push(node.right, head);
        if (node.left.type === 'VariableDeclaration') this.push(node.left, head);
        else this.push(node.left, head, MODE_ASSIGN);
        return;
      }
      case 'FunctionDeclaration':
        if (node.id) scope.declare(node.id.name, node.id);
        this.fn(node, scope);
        return;
      case 'VariableDeclaration': {
        const kind = node.kind as string;
        if (kind !== 'var' && kind !== 'let' && kind !== 'const') {
          this.report(
            C.WF_SOURCE_UNSUPPORTED_SYNTAX,
            node,
            `\`${kind}\` declarations are not supported by the workflow runtime`,
            'use const, and release resources explicitly in a finally block',
          );
        }
        const target = kind === 'var' ? scope.varScope() : scope;
        for (let i = node.declarations.length - 1; i >= 0; i--) {
          const d = node.declarations[i] as t.VariableDeclarator;
          if (d.init) this.push(d.init, scope);
          this.push(d.id, scope, MODE_DECL, target);
        }
        return;
      }
      case 'ClassDeclaration':
        if (node.id) scope.declare(node.id.name, node.id);
        this.klass(node, scope);
        return;
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
      case 'ExportDefaultDeclaration':
      case 'ExportNamedDeclaration':
        return; // reported by the shape check (they can only appear at top level)

      // expressions
      case 'Identifier':
        this.refs.push({ name: node.name, scope, node });
        return;
      case 'PrivateName':
      case 'ThisExpression':
      case 'Super':
      case 'StringLiteral':
      case 'NumericLiteral':
      case 'BigIntLiteral':
      case 'BooleanLiteral':
      case 'NullLiteral':
        return;
      case 'RegExpLiteral':
        this.checkRegExp(node);
        return;
      case 'TemplateLiteral':
        this.pushAll(node.expressions, scope);
        return;
      case 'TaggedTemplateExpression':
        this.push(node.quasi, scope);
        this.push(node.tag, scope);
        return;
      case 'ArrayExpression':
        this.pushAll(node.elements, scope);
        return;
      case 'ObjectExpression':
        for (let i = node.properties.length - 1; i >= 0; i--) {
          const p = node.properties[i] as Node;
          if (p.type === 'ObjectProperty') {
            this.checkLiteralKey(p.key, p.computed, 'object-literal key', PROTO_ONLY);
            this.push(p.value, scope);
            if (p.computed) this.push(p.key, scope);
          } else if (p.type === 'ObjectMethod') {
            this.checkLiteralKey(p.key, p.computed, 'object-literal key', PROTO_ONLY);
            this.fn(p, scope);
            if (p.computed) this.push(p.key, scope);
          } else this.push(p, scope);
        }
        return;
      case 'SpreadElement':
      case 'AwaitExpression':
        this.push(node.argument, scope);
        return;
      case 'YieldExpression':
        if (node.argument) this.push(node.argument, scope);
        return;
      case 'UnaryExpression':
        this.push(node.argument, scope);
        return;
      case 'UpdateExpression':
        this.push(node.argument, scope, MODE_ASSIGN);
        return;
      case 'BinaryExpression':
      case 'LogicalExpression':
        this.pushAll([node.left, node.right], scope);
        return;
      case 'AssignmentExpression':
        this.push(node.right, scope);
        this.push(node.left, scope, MODE_ASSIGN);
        return;
      case 'ConditionalExpression':
        this.pushAll([node.test, node.consequent, node.alternate], scope);
        return;
      case 'SequenceExpression':
        this.pushAll(node.expressions, scope);
        return;
      case 'ParenthesizedExpression':
        this.push(node.expression, scope);
        return;
      case 'MemberExpression':
      case 'OptionalMemberExpression':
        this.member(node, scope);
        return;
      case 'CallExpression':
      case 'OptionalCallExpression':
        this.call(node, scope);
        return;
      case 'NewExpression':
        this.pushAll(node.arguments, scope);
        this.push(node.callee, scope);
        return;
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        this.fn(node, scope);
        return;
      case 'ClassExpression':
        this.klass(node, scope);
        return;
      case 'MetaProperty':
        if (node.meta.name === 'import') {
          this.report(
            C.WF_SOURCE_MODULE_SYNTAX,
            node,
            '`import.meta` is not allowed',
            'workflows are scripts, not modules; take paths and settings from args',
          );
        }
        return;
      case 'Import':
      case 'ImportExpression':
        this.report(
          C.WF_SOURCE_MODULE_SYNTAX,
          node,
          'dynamic `import()` is not allowed',
          'workflows cannot load code; do the work with wf methods (wf.runAgent, wf.readFile)',
        );
        if (node.type === 'ImportExpression') {
          this.checkSpecifier(node.source);
          this.push(node.source, scope);
        }
        return;
      default:
        this.unsupported(node);
    }
  }

  private member(node: t.MemberExpression | t.OptionalMemberExpression, scope: Scope): void {
    const property = node.property;
    if (node.computed) {
      this.checkComputedKey(property, 'computed member', FORBIDDEN_MEMBERS);
      this.push(property, scope);
    } else if (property.type === 'Identifier') {
      // `X.prototype.method`: the outer member is visited first, so the inner `prototype`
      // finding can name the safe alternative for that method.
      const inner = node.object;
      if (
        (inner.type === 'MemberExpression' || inner.type === 'OptionalMemberExpression') &&
        !inner.computed &&
        inner.property.type === 'Identifier' &&
        inner.property.name === 'prototype'
      ) {
        const hint = prototypeMethodHint(
          inner.object.type === 'Identifier' ? inner.object.name : null,
          property.name,
        );
        if (hint !== undefined) this.memberHints.set(inner.property, hint);
      }
      if (FORBIDDEN_MEMBERS.has(property.name)) {
        this.forbiddenMember(property.name, property, 'member');
      }
      if (node.object.type === 'Identifier') {
        this.wfMembers.push({ object: node.object, scope, name: property.name, node: property });
      }
    }
    this.push(node.object, scope);
  }

  private call(node: t.CallExpression | t.OptionalCallExpression, scope: Scope): void {
    const callee = node.callee;
    const name = calleeMethodName(callee);
    if (name !== null && AGENT_METHOD_NAMES.has(name)) this.agentCalls++;
    if (callee.type === 'Import' || (callee.type === 'Identifier' && callee.name === 'require')) {
      const first = node.arguments[0];
      if (first) this.checkSpecifier(first);
    }
    this.pushAll(node.arguments, scope);
    this.push(callee, scope);
  }

  private checkSpecifier(node: Node): void {
    const values = staticKeys(node);
    if (!values) return;
    for (const value of values) {
      if (isNodeModuleSpecifier(value)) {
        this.report(
          C.WF_SOURCE_NODE_MODULE,
          node,
          `Node module '${value}' cannot be loaded in a workflow`,
          value.includes('fs')
            ? 'read files with await wf.readFile(path) instead of fs'
            : 'there are no Node modules in a workflow; delegate host work to a child agent',
        );
      }
    }
  }

  private checkRegExp(node: t.RegExpLiteral): void {
    try {
      new RegExp(node.pattern, node.flags);
    } catch (error) {
      // V8 repeats the whole pattern in its message; keep only the reason.
      const raw = error instanceof Error ? error.message : String(error);
      const detail = raw
        .replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, '')
        .slice(0, 120);
      this.report(
        C.WF_SOURCE_SYNTAX,
        node,
        `invalid regular expression: ${detail}`,
        'fix the regular expression pattern or flags (QuickJS rejects it at compile time)',
      );
    }
  }

  /** WF_SOURCE_LINT_UNAWAITED_AGENT: an agent call whose value the statement throws away. */
  private checkDiscarded(expression: Node): void {
    const pending: Node[] = [expression];
    while (pending.length > 0) {
      const e = pending.pop() as Node;
      switch (e.type) {
        case 'SequenceExpression':
          pending.push(...e.expressions);
          break;
        case 'ConditionalExpression':
          pending.push(e.consequent, e.alternate);
          break;
        case 'LogicalExpression':
          pending.push(e.left, e.right);
          break;
        case 'UnaryExpression':
          if (e.operator === 'void') pending.push(e.argument);
          break;
        case 'ParenthesizedExpression':
          pending.push(e.expression);
          break;
        case 'CallExpression':
        case 'OptionalCallExpression': {
          const name = calleeMethodName(e.callee);
          if (name !== null && AGENT_METHOD_NAMES.has(name)) {
            const text = calleeText(e.callee, name);
            this.report(
              C.WF_SOURCE_LINT_UNAWAITED_AGENT,
              e,
              `\`${text}(...)\` is not awaited, returned or stored; its result and failure are lost`,
              `write \`await ${text}(...)\`, or keep the promise and await it (Promise.all)`,
            );
          }
          break;
        }
      }
    }
  }

  // ---- patterns (declarations and assignment targets) -----------------------------------------

  private visitPattern(node: Node, scope: Scope, mode: Mode, target: Scope | null): void {
    switch (node.type) {
      case 'Identifier':
        if (mode === MODE_DECL) (target ?? scope).declare(node.name, node);
        else this.refs.push({ name: node.name, scope, node });
        return;
      case 'ObjectPattern':
        for (let i = node.properties.length - 1; i >= 0; i--) {
          const p = node.properties[i] as Node;
          if (p.type === 'ObjectProperty') {
            this.checkLiteralKey(p.key, p.computed, 'destructuring key', FORBIDDEN_MEMBERS);
            this.push(p.value, scope, mode, target);
            if (p.computed) this.push(p.key, scope);
          } else this.push(p, scope, mode, target);
        }
        return;
      case 'ArrayPattern':
        this.pushAll(node.elements, scope, mode, target);
        return;
      case 'AssignmentPattern':
        this.push(node.right, scope);
        this.push(node.left, scope, mode, target);
        return;
      case 'RestElement':
        this.push(node.argument, scope, mode, target);
        return;
      case 'VariableDeclaration':
        this.visit(node, scope);
        return;
      default:
        // Member expressions and anything else in target position are ordinary expressions.
        this.visit(node, scope);
    }
  }

  // ---- after the walk ------------------------------------------------------------------------

  private resolveReferences(): void {
    const unknown = new Map<string, { node: Node; count: number }>();
    for (const ref of this.refs) {
      if (ref.scope.resolve(ref.name)) continue;
      const hint = FORBIDDEN_GLOBALS.get(ref.name);
      if (hint !== undefined) {
        this.report(
          C.WF_SOURCE_FORBIDDEN_NAME,
          ref.node,
          `\`${ref.name}\` is a host name and is not available in a workflow`,
          hint,
        );
      } else if (!KNOWN_GLOBALS.has(ref.name) && !PRELUDE_GLOBALS.has(ref.name)) {
        const seen = unknown.get(ref.name);
        if (seen) seen.count++;
        else unknown.set(ref.name, { node: ref.node, count: 1 });
      }
    }
    for (const [name, { node, count }] of unknown) {
      this.report(
        C.WF_SOURCE_LINT_UNKNOWN_GLOBAL,
        node,
        `\`${name}\` is not defined in the workflow runtime${count > 1 ? ` (${count} uses)` : ''}`,
        UNKNOWN_GLOBAL_HINT.get(name) ?? DEFAULT_UNKNOWN_GLOBAL_HINT,
      );
    }
    // invariant: top-level declarations must not replace the runtime's globals.
    for (const [name, node] of this.global.names ?? []) {
      if (FORBIDDEN_GLOBALS.has(name) || KNOWN_GLOBALS.has(name)) {
        this.report(
          C.WF_SOURCE_FORBIDDEN_NAME,
          node,
          `top-level declaration \`${name}\` would replace a global of the workflow runtime`,
          `rename it (for example \`my${name[0]?.toUpperCase() ?? ''}${name.slice(1)}\`), or declare it inside run`,
        );
      }
    }
    if (this.runParam) {
      for (const m of this.wfMembers) {
        if (m.scope.resolve(m.object.name) !== this.runParam || WF_METHOD_NAMES.has(m.name)) {
          continue;
        }
        this.unknownWfMethod(m.object.name, m.name, m.node);
      }
    }
  }
}

const PROTO_ONLY: ReadonlySet<string> = new Set(['__proto__']);

const STATEMENT_NAMES: ReadonlyMap<string, string> = new Map([
  ['ExpressionStatement', 'expression statement'],
  ['BlockStatement', 'block'],
  ['IfStatement', '`if` statement'],
  ['ForStatement', '`for` loop'],
  ['ForInStatement', '`for...in` loop'],
  ['ForOfStatement', '`for...of` loop'],
  ['WhileStatement', '`while` loop'],
  ['DoWhileStatement', '`do...while` loop'],
  ['TryStatement', '`try` statement'],
  ['SwitchStatement', '`switch` statement'],
  ['LabeledStatement', 'labeled statement'],
  ['ThrowStatement', '`throw` statement'],
  ['DebuggerStatement', '`debugger` statement'],
]);

function describeStatement(statement: Node): string {
  return STATEMENT_NAMES.get(statement.type) ?? `${statement.type} node`;
}
