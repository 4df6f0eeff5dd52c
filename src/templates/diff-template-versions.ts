import type { TemplateVersion } from './sql-template-store.js';

/**
 * A unified diff between two versions, over a readable rendering of model, parameters and messages.
 * The diff library loads on the first diff: most processes never serve one.
 */
export async function diffTemplateVersions(name: string, from: TemplateVersion, to: TemplateVersion): Promise<string> {
  const { createTwoFilesPatch } = await import('diff');
  return createTwoFilesPatch(`${name}@v${from.version}`, `${name}@v${to.version}`, versionText(from), versionText(to), `v${from.version}`, `v${to.version}`);
}

export function versionText(version: TemplateVersion): string {
  const lines = [`model: ${version.model ?? '(request model)'}`, `parameters: ${JSON.stringify(version.parameters ?? {}, null, 2)}`];
  version.messages.forEach((message, index) => {
    lines.push(`--- message ${index + 1} (${message.role}${message.name ? `, ${message.name}` : ''})`, message.content);
  });
  return `${lines.join('\n')}\n`;
}
