import { GatewayError } from '../errors/gateway-error.js';
import { nunjucksModule } from './nunjucks-module.js';

/**
 * Nunjucks compiles templates to JavaScript and lets an expression read any property and call any
 * function it reaches: `{{ range.constructor("return process")() }}` runs code. So before a template
 * is saved or rendered, its syntax tree is checked against an allow-list: output, literals,
 * variables, `a.b` / `a[0]` lookups with literal keys that are not `constructor`, `__proto__`,
 * `prototype` or `_`-prefixed, arithmetic, comparisons, if / for / set, and a list of pure filters.
 * Function calls, macros, includes, imports, blocks and dynamic lookups are rejected.
 * Returns the variable names the template needs (free names not bound by for/set and not guarded
 * by `is defined` or `| default`).
 */
export function checkTemplateSource(source: string): { requiredVariables: Set<string> } {
  let root: TemplateNode;
  try {
    root = (nunjucksModule() as unknown as { parser: { parse(source: string): TemplateNode } }).parser.parse(source);
  } catch (error) {
    throw templateError(`template syntax error: ${error instanceof Error ? error.message : String(error)}`);
  }
  const bound = new Set<string>(['loop']);
  const optional = new Set<string>();
  const used = new Set<string>();
  walk(root, { bound, optional, used });
  const requiredVariables = new Set([...used].filter((name) => !bound.has(name) && !optional.has(name)));
  return { requiredVariables };
}

interface TemplateNode {
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

interface Scope {
  bound: Set<string>;
  optional: Set<string>;
  used: Set<string>;
}

function walk(node: unknown, scope: Scope): void {
  if (node === null || node === undefined || typeof node !== 'object') return;
  const current = node as TemplateNode;
  if (!ALLOWED_NODES.has(current.typename)) throw templateError(`"${describe(current.typename)}" is not allowed in prompt templates`);
  switch (current.typename) {
    case 'Symbol':
      scope.used.add(String(current.value));
      return;
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
    case 'Filter': {
      const name = String((current.name as TemplateNode).value);
      if (!ALLOWED_FILTERS.has(name)) throw templateError(`the filter "${name}" is not allowed`);
      const args = (current.args as TemplateNode).children ?? [];
      const [subject, ...rest] = args;
      if ((name === 'default' || name === 'd') && subject?.typename === 'Symbol') scope.optional.add(String(subject.value));
      else walk(subject, scope);
      rest.forEach((arg) => walk(arg, scope));
      return;
    }
    case 'Is': {
      const test = current.right as TemplateNode;
      const testName = String(test?.typename === 'Symbol' ? test.value : (test?.name as TemplateNode | undefined)?.value);
      if (!ALLOWED_TESTS.has(testName)) throw templateError(`the test "${testName}" is not allowed`);
      const left = current.left as TemplateNode;
      if ((testName === 'defined' || testName === 'undefined') && left?.typename === 'Symbol') scope.optional.add(String(left.value));
      else walk(left, scope);
      if (test?.typename !== 'Symbol') walk((test?.args as TemplateNode | undefined) ?? null, scope);
      return;
    }
    case 'For':
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

function bindNames(node: TemplateNode | undefined, scope: Scope): void {
  if (!node) return;
  if (node.typename === 'Symbol') scope.bound.add(String(node.value));
  else (node.children ?? []).forEach((child) => bindNames(child, scope));
}

function describe(typename: string): string {
  const names: Record<string, string> = { FunCall: 'function calls', Include: 'include', Import: 'import', FromImport: 'import', Extends: 'extends', Macro: 'macro', Block: 'block', CallExtension: 'extensions' };
  return names[typename] ?? typename;
}

function templateError(message: string): GatewayError {
  return new GatewayError('invalid_request', `Unsafe or invalid prompt template: ${message}.`);
}
