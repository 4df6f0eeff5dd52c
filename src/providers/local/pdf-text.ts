import { inflateSync } from 'node:zlib';

/**
 * Text of a simple PDF, page by page: the content streams the page objects reference (inflated
 * when FlateDecode), read for the text-showing operators Tj, TJ, ' and " (PDF 32000-1:2008 §9.4.3),
 * with T*, Td and TD as line breaks. Fonts with custom encodings, object streams and cross-reference
 * streams are beyond it; such files yield no pages, and the caller reports that.
 */
export function pdfPageTexts(bytes: Buffer): string[] {
  const source = bytes.toString('latin1');
  const objects = new Map<number, string>();
  for (const match of source.matchAll(/(\d+)\s+\d+\s+obj\b([\s\S]*?)\bendobj/g)) objects.set(Number(match[1]), match[2]);
  const pages: string[] = [];
  for (const body of objects.values()) {
    if (!/\/Type\s*\/Page(?![a-zA-Z])/.test(body)) continue;
    const contents = /\/Contents\s*(?:\[([^\]]*)\]|(\d+)\s+\d+\s+R)/.exec(body);
    if (!contents) continue;
    const references = contents[1] ? [...contents[1].matchAll(/(\d+)\s+\d+\s+R/g)].map((match) => Number(match[1])) : [Number(contents[2])];
    const text = references.map((reference) => streamText(objects.get(reference))).join('\n');
    pages.push(text.trim());
  }
  if (pages.length === 0) {
    // No page tree we could follow: every stream with text operators is taken as one page.
    for (const body of objects.values()) {
      const text = streamText(body);
      if (text.trim()) pages.push(text.trim());
    }
  }
  return pages;
}

function streamText(objectBody: string | undefined): string {
  if (!objectBody) return '';
  const match = /^([\s\S]*?)stream\r?\n([\s\S]*?)\r?\n?endstream/.exec(objectBody);
  if (!match) return '';
  let content = match[2];
  if (/\/FlateDecode/.test(match[1])) {
    try {
      content = inflateSync(Buffer.from(content, 'latin1')).toString('latin1');
    } catch {
      return '';
    }
  }
  return contentText(content);
}

/** Walks a content stream's tokens and keeps the strings shown by text operators. */
function contentText(content: string): string {
  let output = '';
  let operands: string[] = [];
  let index = 0;
  while (index < content.length) {
    const character = content[index];
    if (character === '(') {
      const [text, next] = readLiteralString(content, index);
      operands.push(text);
      index = next;
    } else if (character === '<' && content[index + 1] !== '<') {
      const end = content.indexOf('>', index);
      const hex = content.slice(index + 1, end === -1 ? content.length : end).replace(/\s+/g, '');
      operands.push(Buffer.from(hex.length % 2 ? `${hex}0` : hex, 'hex').toString('latin1'));
      index = end === -1 ? content.length : end + 1;
    } else if (character === '%') {
      const end = content.indexOf('\n', index);
      index = end === -1 ? content.length : end + 1;
    } else if (/[A-Za-z'"*]/.test(character)) {
      let end = index + 1;
      while (end < content.length && /[A-Za-z*'"0-9]/.test(content[end])) end++;
      const operator = content.slice(index, end);
      if (operator === 'Tj' || operator === 'TJ') output += operands.join('');
      else if (operator === "'" || operator === '"') output += `\n${operands.join('')}`;
      else if (operator === 'T*' || operator === 'Td' || operator === 'TD') output += output.endsWith('\n') || output === '' ? '' : '\n';
      else if (operator === 'ET') output += output.endsWith('\n') || output === '' ? '' : '\n';
      operands = [];
      index = end;
    } else {
      index++;
    }
  }
  return output.replace(/\n+$/, '');
}

const ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', '(': '(', ')': ')', '\\': '\\' };

function readLiteralString(content: string, start: number): [string, number] {
  let depth = 0;
  let text = '';
  let index = start;
  while (index < content.length) {
    const character = content[index];
    if (character === '\\') {
      const next = content[index + 1];
      const octal = /^[0-7]{1,3}/.exec(content.slice(index + 1, index + 4));
      if (octal) {
        text += String.fromCharCode(parseInt(octal[0], 8));
        index += 1 + octal[0].length;
        continue;
      }
      if (next === '\n' || next === '\r') {
        index += next === '\r' && content[index + 2] === '\n' ? 3 : 2;
        continue;
      }
      text += ESCAPES[next] ?? next ?? '';
      index += 2;
      continue;
    }
    if (character === '(') {
      depth++;
      if (depth > 1) text += character;
    } else if (character === ')') {
      depth--;
      if (depth === 0) return [text, index + 1];
      text += character;
    } else {
      text += character;
    }
    index++;
  }
  return [text, index];
}
