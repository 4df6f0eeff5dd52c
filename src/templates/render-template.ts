import type { Environment } from 'nunjucks';
import { GatewayError } from '../errors/gateway-error.js';
import { checkTemplateSource } from './check-template-source.js';
import { nunjucksModule } from './nunjucks-module.js';

export interface TemplateMessage {
  role: 'system' | 'user' | 'assistant' | 'developer';
  content: string;
  name?: string;
}

export interface TemplateRenderer {
  /** Renders every message; throws 400 missing_template_variable naming the first missing variable. */
  render(messages: readonly TemplateMessage[], variables: Record<string, unknown>): TemplateMessage[];
}

/**
 * A sandboxed nunjucks renderer: no loaders (no file system), no globals (no range/cycler/joiner
 * functions to climb from), autoescape off (the output is a prompt, not HTML), and each template is
 * admitted by checkTemplateSource first. Variables are copied through JSON, so they are plain data:
 * no functions, getters or prototypes a template could reach through them.
 */
export function createTemplateRenderer(): TemplateRenderer {
  let environment: Environment | undefined;
  const sandboxed = (): Environment => {
    if (environment) return environment;
    environment = new (nunjucksModule().Environment)([], { autoescape: false, throwOnUndefined: true });
    // The typings omit `globals`; it is this environment's own object (not shared), so emptying it is local.
    const globals = (environment as unknown as { globals: Record<string, unknown> }).globals;
    for (const name of Object.keys(globals)) delete globals[name];
    return environment;
  };
  return {
    render(messages, variables) {
      const data = JSON.parse(JSON.stringify(variables ?? {})) as Record<string, unknown>;
      return messages.map((message) => {
        const { requiredVariables } = checkTemplateSource(message.content);
        for (const name of requiredVariables) {
          if (!Object.hasOwn(data, name)) {
            throw new GatewayError('missing_template_variable', `Missing template variable "${name}" (send it in gw_prompt_variables).`, {
              param: 'gw_prompt_variables',
              details: { variable: name },
            });
          }
        }
        let content: string;
        try {
          content = sandboxed().renderString(message.content, data);
        } catch (error) {
          const reason = error instanceof Error ? error.message.split('\n').at(-1)?.trim() : String(error);
          throw new GatewayError('invalid_request', `The prompt template could not be rendered: ${reason}`, { param: 'gw_prompt_variables' });
        }
        return { ...message, content };
      });
    },
  };
}
