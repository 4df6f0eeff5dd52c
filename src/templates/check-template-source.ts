import { GatewayError } from '../errors/gateway-error.js';
import { nunjucksModule } from './nunjucks-module.js';

/** What checking a template source learned: what rendering it needs and how to report a failure. */
export interface CheckedTemplate {
  /** The parsed syntax tree, compiled from as it is (so what was checked is what runs). */
  root: TemplateNode;
  /**
   * Variable names the template cannot render without: free names it prints, loops over or
   * computes with, unless bound by for/set or used only where a missing value is just false (see
   * checkTemplateSource).
   */
  requiredVariables: Set<string>;
  /** Whether any `for` loop runs: only then can rendering take more than one pass over the source. */
  hasLoops: boolean;
  /** `line:column` (1-based, as render errors give them) of each `{{ … }}` → the variable path it prints. */
  printedPaths: Map<string, string>;
}

/**
 * Nunjucks compiles templates to JavaScript and lets an expression read any property and call any
 * function it reaches: `{{ range.constructor("return process")() }}` runs code. So before a template
 * is saved or rendered, its syntax tree is checked against an allow-list: output, literals,
 * variables, `a.b` / `a[0]` lookups with literal keys that are not `constructor`, `__proto__`,
 * `prototype` or `_`-prefixed, arithmetic, comparisons, if / for / set, and a list of pure filters.
 * Function calls, macros, includes, imports, blocks and dynamic lookups are rejected.
 *
 * Required variables follow Jinja2's reading of a missing value as false: a name is not required
 * where it is only tested (`{% if name %}`, `{% if user.name and vip %}`, `x if x else y`,
 * `is defined`, `| default(…)`), nor inside the branch such a test guards
 * (`{% if name %}Hi {{ name }}{% endif %}`). Everywhere else (printed, looped over, compared,
 * filtered) a missing value is the caller's mistake, so it is required.
 */
export function checkTemplateSource(source: string): CheckedTemplate {
  let root: TemplateNode;
  try {
    root = (nunjucksModule() as unknown as { parser: { parse(source: string): TemplateNode } }).parser.parse(source);
  } catch (error) {
    throw templateError(`template syntax error: ${error instanceof Error ? error.message : String(error)}`);
  }
  const findings: Findings = { bound: new Set(['loop']), used: new Set(), hasLoops: false, printedPaths: new Map() };
  walk(root, { findings, guarded: new Set(), tested: false });
  const requiredVariables = new Set([...findings.used].filter((name) => !findings.bound.has(name)));
  return { root, requiredVariables, hasLoops: findings.hasLoops, printedPaths: findings.printedPaths };
}

export interface TemplateNode {
  typename: string;
  fields: string[];
  children?: TemplateNode[];
  value?: unknown;
  [field: string]: unknown;
}

const ALLOWED_NODES = new Set([
  'Root', 'NodeList', 'Output', 'TemplateData', 'Literal', 'Symbol', 'LookupVal', 'Group', 'Array', 'Dict', 'Pair',
  'If', 'InlineIf', 'For', 'Set', 'Switch', 'Case', 'Filter', 'KeywordArgs', 'Compare', 'CompareOperand',
  'In', 'Is', 'Or', 'And', 'Not', 'Add', 'Concat', 'Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow', 'Neg', 'Pos',
]);

/** Filters that only transform data and cannot blow up output size (no center/indent widths). */
export const ALLOWED_FILTERS = new Set([
  'abs', 'capitalize', 'default', 'd', 'dump', 'escape', 'e', 'first', 'float', 'int', 'join', 'last', 'length',
  'list', 'lower', 'nl2br', 'replace', 'reverse', 'round', 'safe', 'sort', 'string', 'striptags', 'sum', 'title',
  'trim', 'truncate', 'upper', 'urlencode', 'wordcount',
]);

const ALLOWED_TESTS = new Set(['defined', 'undefined', 'none', 'null', 'number', 'string', 'odd', 'even', 'truthy', 'falsy', 'divisibleby', 'equalto', 'eq', 'sameas', 'iterable', 'mapping', 'lower', 'upper']);

const DENIED_KEYS = new Set(['constructor', 'prototype', 'caller', 'callee', 'arguments', 'call', 'apply', 'bind', 'valueOf', 'toString', 'toLocaleString']);

/** What the walk collects over the whole template. */
interface Findings {
  bound: Set<string>;
  used: Set<string>;
  hasLoops: boolean;
  printedPaths: Map<string, string>;
}

/** Where in the template the walk is. */
interface Scope {
  findings: Findings;
  /** Names a test on the way here has shown to be set (the body of `{% if name %}`). */
  guarded: ReadonlySet<string>;
  /** Inside a truth test: a missing name here reads as false, so it is not required. */
  tested: boolean;
}

function walk(node: unknown, scope: Scope): void {
  if (node === null || node === undefined || typeof node !== 'object') return;
  const current = node as TemplateNode;
  if (!ALLOWED_NODES.has(current.typename)) throw templateError(`"${describe(current.typename)}" is not allowed in prompt templates`);
  switch (current.typename) {
    case 'Symbol': {
      const name = String(current.value);
      if (!scope.tested && !scope.guarded.has(name)) scope.findings.used.add(name);
      return;
    }
    case 'LookupVal': {
      const key = current.val as TemplateNode;
      if (key?.typename !== 'Literal' || (typeof key.value !== 'string' && typeof key.value !== 'number')) {
        throw templateError('only literal keys may be looked up (a.b or a[0])');
      }
      if (typeof key.value === 'string' && (key.value.startsWith('_') || DENIED_KEYS.has(key.value))) {
        throw templateError(`access to "${key.value}" is not allowed`);
      }
      walk(current.target, scope);
      return;
    }
    case 'Output':
      for (const child of current.children ?? []) {
        const path = variablePath(child);
        if (path) scope.findings.printedPaths.set(`${current.lineno as number + 1}:${current.colno as number + 1}`, path);
        walk(child, scope);
      }
      return;
    case 'If':
    case 'InlineIf':
      walkCondition(current.cond, scope);
      walk(current.body, { ...scope, guarded: new Set([...scope.guarded, ...namesShownSet(current.cond as TemplateNode)]) });
      walk(current.else_, scope);
      return;
    case 'Filter': {
      const name = String((current.name as TemplateNode).value);
      if (!ALLOWED_FILTERS.has(name)) throw templateError(`the filter "${name}" is not allowed`);
      const args = (current.args as TemplateNode).children ?? [];
      const [subject, ...rest] = args;
      // `x | default(…)` is how a template says x may be missing.
      walk(subject, (name === 'default' || name === 'd') && variablePath(subject) ? { ...scope, tested: true } : scope);
      rest.forEach((arg) => walk(arg, scope));
      return;
    }
    case 'Is': {
      const test = current.right as TemplateNode;
      const testName = String(test?.typename === 'Symbol' ? test.value : (test?.name as TemplateNode | undefined)?.value);
      if (!ALLOWED_TESTS.has(testName)) throw templateError(`the test "${testName}" is not allowed`);
      walk(current.left, (testName === 'defined' || testName === 'undefined') && variablePath(current.left as TemplateNode) ? { ...scope, tested: true } : scope);
      if (test?.typename !== 'Symbol') walk((test?.args as TemplateNode | undefined) ?? null, scope);
      return;
    }
    case 'For':
      scope.findings.hasLoops = true;
      bindNames(current.name as TemplateNode, scope);
      break;
    case 'Set':
      for (const target of (current.targets as TemplateNode[]) ?? []) bindNames(target, scope);
      walk(current.value, scope);
      walk(current.body, scope);
      return;
  }
  for (const field of current.fields ?? []) {
    const value = current[field];
    if (Array.isArray(value)) value.forEach((child) => walk(child, scope));
    else walk(value, scope);
  }
}

/** A condition: its bare names and lookups are truth tests (missing = false); anything else is walked as usual. */
function walkCondition(node: unknown, scope: Scope): void {
  const condition = node as TemplateNode | undefined;
  switch (condition?.typename) {
    case 'Symbol':
    case 'LookupVal':
      walk(condition, { ...scope, tested: true });
      return;
    case 'Not':
      walkCondition(condition.target, scope);
      return;
    case 'And':
    case 'Or':
      walkCondition(condition.left, scope);
      walkCondition(condition.right, scope);
      return;
    case 'Group':
      (condition.children ?? []).forEach((child) => walkCondition(child, scope));
      return;
    default:
      walk(condition, scope);
  }
}

/** The names a condition being true shows are set: `a`, `a.b`, `a is defined`, and both sides of `and`. */
function namesShownSet(condition: TemplateNode | undefined): string[] {
  switch (condition?.typename) {
    case 'Symbol':
    case 'LookupVal': {
      const root = variablePath(condition)?.split('.')[0];
      return root ? [root] : [];
    }
    case 'Is': {
      const test = condition.right as TemplateNode;
      return test?.typename === 'Symbol' && test.value === 'defined' ? namesShownSet(condition.left as TemplateNode) : [];
    }
    case 'And':
      return [...namesShownSet(condition.left as TemplateNode), ...namesShownSet(condition.right as TemplateNode)];
    case 'Group':
      return (condition.children ?? []).length === 1 ? namesShownSet(condition.children![0]) : [];
    default:
      return [];
  }
}

/** `user.name` / `items.0` for a variable or a lookup with literal keys; undefined for anything else. */
function variablePath(node: TemplateNode | undefined): string | undefined {
  if (node?.typename === 'Symbol') return String(node.value);
  if (node?.typename === 'LookupVal') {
    const target = variablePath(node.target as TemplateNode);
    const key = (node.val as TemplateNode | undefined)?.value;
    return target !== undefined && (typeof key === 'string' || typeof key === 'number') ? `${target}.${key}` : undefined;
  }
  return undefined;
}

function bindNames(node: TemplateNode | undefined, scope: Scope): void {
  if (!node) return;
  if (node.typename === 'Symbol') scope.findings.bound.add(String(node.value));
  else (node.children ?? []).forEach((child) => bindNames(child, scope));
}

function describe(typename: string): string {
  const names: Record<string, string> = { FunCall: 'function calls', Include: 'include', Import: 'import', FromImport: 'import', Extends: 'extends', Macro: 'macro', Block: 'block', CallExtension: 'extensions' };
  return names[typename] ?? typename;
}

function templateError(message: string): GatewayError {
  return new GatewayError('invalid_request', `Unsafe or invalid prompt template: ${message}.`);
}
