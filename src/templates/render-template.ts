import type { Environment, Template } from 'nunjucks';
import { GatewayError } from '../errors/gateway-error.js';
import { checkTemplateSource, type CheckedTemplate, type TemplateNode } from './check-template-source.js';
import { nunjucksModule, nunjucksTransformer } from './nunjucks-module.js';

export interface TemplateMessage {
  role: 'system' | 'user' | 'assistant' | 'developer';
  content: string;
  name?: string;
}

export interface TemplateRenderer {
  /**
   * Renders every message. Throws 400 missing_template_variable naming the first missing variable,
   * 400 invalid_request when rendering fails or runs past RENDER_TIME_LIMIT_MS, and 413 when the
   * rendered messages hold more than the renderer's character limit.
   */
  render(messages: readonly TemplateMessage[], variables: Record<string, unknown>): TemplateMessage[];
}

export interface TemplateRendererOptions {
  /** Most characters all rendered messages of one call may hold together (the gateway passes GW_BODY_LIMIT_BYTES). */
  renderedCharsLimit?: number;
}

/**
 * Longest one call's templates may render for. Only loops are timed: a loop over a caller's list
 * is the one construct whose work the caller sets (nested loops over a few thousand items are
 * billions of steps); everything else runs once per node, bounded by the source and the variables'
 * size. Every loop iteration first checks the clock (an internal filter compiled into the loop's
 * body), so a render stops within one iteration of the limit. Rendering is synchronous: without the
 * limit one call could hold the event loop from every other.
 */
export const RENDER_TIME_LIMIT_MS = 100;
const DEFAULT_RENDERED_CHARS_LIMIT = 10 * 1024 * 1024;
/** Compiled templates kept, by source, so a request does not parse and compile its template again. */
const COMPILED_CACHE_SOURCE_CHARS = 4 * 1024 * 1024;
/** The internal filter each loop iteration calls; not in ALLOWED_FILTERS, so no template can name it. */
const LOOP_TICK_FILTER = 'gw_loop_tick';

/** The render in progress (rendering is synchronous, so there is one at a time): when it must stop. */
let renderDeadline = Infinity;
let renderTimedOut = false;
function loopTick(): string {
  if (performance.now() > renderDeadline) {
    renderTimedOut = true;
    throw new Error('prompt template render time limit');
  }
  return '';
}

interface CompiledTemplate extends CheckedTemplate {
  template: Template;
}

/**
 * A sandboxed nunjucks renderer: no loaders (no file system), no globals (no range/cycler/joiner
 * functions to climb from), autoescape off (the output is a prompt, not HTML), and each template is
 * admitted by checkTemplateSource first and compiled from the very syntax tree it checked.
 * Variables are copied through JSON, so they are plain data: no functions, getters or prototypes a
 * template could reach through them.
 */
export function createTemplateRenderer(options: TemplateRendererOptions = {}): TemplateRenderer {
  const renderedCharsLimit = options.renderedCharsLimit ?? DEFAULT_RENDERED_CHARS_LIMIT;
  const compiled = new Map<string, CompiledTemplate>();
  let compiledSourceChars = 0;
  let environment: Environment | undefined;

  const sandboxed = (): Environment => {
    if (environment) return environment;
    environment = new (nunjucksModule().Environment)([], { autoescape: false, throwOnUndefined: true, dev: true });
    // The typings omit `globals`; it is this environment's own object (not shared), so emptying it is local.
    const globals = (environment as unknown as { globals: Record<string, unknown> }).globals;
    for (const name of Object.keys(globals)) delete globals[name];
    environment.addFilter(LOOP_TICK_FILTER, loopTick);
    return environment;
  };

  const compile = (source: string): CompiledTemplate => {
    const cached = compiled.get(source);
    if (cached) return cached;
    const checked = checkTemplateSource(source);
    const nunjucks = nunjucksModule() as unknown as NunjucksInternals;
    const compiler = new nunjucks.compiler.Compiler(undefined, true);
    if (checked.hasLoops) tickEveryIteration(checked.root, nunjucks.nodes);
    compiler.compile(nunjucksTransformer().transform(checked.root, []));
    // nunjucks' own compile() turns its generated code into functions the same way.
    const code = new Function(compiler.getCode())() as unknown;
    const template = new nunjucks.Template({ type: 'code', obj: code }, sandboxed(), undefined, true);
    const entry = { ...checked, template };
    compiled.set(source, entry);
    compiledSourceChars += source.length;
    for (const [oldest] of compiled) {
      if (compiledSourceChars <= COMPILED_CACHE_SOURCE_CHARS || oldest === source) break;
      compiled.delete(oldest);
      compiledSourceChars -= oldest.length;
    }
    return entry;
  };

  return {
    render(messages, variables) {
      const data = JSON.parse(JSON.stringify(variables ?? {})) as Record<string, unknown>;
      const templates = messages.map((message) => compile(message.content));
      for (const template of templates) {
        for (const name of template.requiredVariables) {
          if (!Object.hasOwn(data, name)) throw missingVariable(name);
        }
      }
      renderDeadline = performance.now() + RENDER_TIME_LIMIT_MS;
      renderTimedOut = false;
      let rendered: TemplateMessage[];
      try {
        rendered = messages.map((message, index) => ({ ...message, content: renderOne(templates[index]!, data) }));
      } finally {
        renderDeadline = Infinity;
      }
      const renderedChars = rendered.reduce((total, message) => total + message.content.length, 0);
      if (renderedChars > renderedCharsLimit) {
        throw new GatewayError(
          'payload_too_large',
          `The prompt template rendered ${renderedChars} characters; at most ${renderedCharsLimit} are accepted (GW_BODY_LIMIT_BYTES).`,
          { param: 'gw_prompt_variables' },
        );
      }
      return rendered;
    },
  };
}

function renderOne(compiled: CompiledTemplate, data: Record<string, unknown>): string {
  try {
    return compiled.template.render(data);
  } catch (error) {
    if (renderTimedOut) {
      throw new GatewayError('invalid_request', `The prompt template took longer than ${RENDER_TIME_LIMIT_MS} ms to render (its loops run too many times for these variables).`, {
        param: 'gw_prompt_variables',
      });
    }
    // throwOnUndefined: printing a value that is missing or null. Name what was printed.
    const located = error as { lineno?: number; colno?: number; cause?: unknown; message?: string };
    if (String(located.message).includes('attempted to output null or undefined value')) {
      const path = compiled.printedPaths.get(`${located.lineno}:${located.colno}`);
      throw missingVariable(path ?? `at line ${located.lineno}, column ${located.colno}`, path === undefined);
    }
    if (located.cause instanceof RangeError || error instanceof RangeError) {
      throw new GatewayError('payload_too_large', 'The prompt template rendered more text than a string can hold.', { param: 'gw_prompt_variables' });
    }
    const reason = error instanceof Error ? error.message.split('\n').at(-1)?.trim() : String(error);
    throw new GatewayError('invalid_request', `The prompt template could not be rendered: ${reason}`, { param: 'gw_prompt_variables' });
  }
}

function missingVariable(name: string, unnamed = false): GatewayError {
  const what = unnamed ? `A template variable printed ${name} is missing or null` : `Missing template variable "${name}"`;
  return new GatewayError('missing_template_variable', `${what} (send it in gw_prompt_variables).`, {
    param: 'gw_prompt_variables',
    details: unnamed ? {} : { variable: name },
  });
}

/** Puts a clock check (LOOP_TICK_FILTER) at the start of every loop body: `{{ '' | gw_loop_tick }}`. */
function tickEveryIteration(node: unknown, nodes: NunjucksNodes): void {
  if (node === null || typeof node !== 'object') return;
  const current = node as TemplateNode;
  if (current.typename === 'For') {
    const at = [current.lineno as number, current.colno as number] as const;
    const tick = new nodes.Output(...at, [new nodes.Filter(...at, new nodes.Symbol(...at, LOOP_TICK_FILTER), new nodes.NodeList(...at, [new nodes.Literal(...at, '')]))]);
    const body = current.body as TemplateNode;
    body.children = [tick, ...(body.children ?? [])];
  }
  for (const field of current.fields ?? []) {
    const value = current[field];
    if (Array.isArray(value)) value.forEach((child) => tickEveryIteration(child, nodes));
    else tickEveryIteration(value, nodes);
  }
}

type NodeConstructor = new (lineno: number, colno: number, ...fields: unknown[]) => TemplateNode;
interface NunjucksNodes {
  Output: NodeConstructor;
  Filter: NodeConstructor;
  Symbol: NodeConstructor;
  NodeList: NodeConstructor;
  Literal: NodeConstructor;
}

interface NunjucksInternals {
  nodes: NunjucksNodes;
  compiler: { Compiler: new (name: string | undefined, throwOnUndefined: boolean) => { compile(root: unknown): void; getCode(): string } };
  Template: new (source: { type: 'code'; obj: unknown }, environment: Environment, path: string | undefined, eagerCompile: boolean) => Template;
}
