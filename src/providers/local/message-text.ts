import type { ChatMessage } from '../../protocol/chat.js';

/** The text of a message: a string content, or the text parts of an array content joined. */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (part.type === 'text' && typeof part['text'] === 'string' ? (part['text'] as string) : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index].role === 'user') return messageText(messages[index]);
  }
  return '';
}

export function truncateText(text: string, maxCharacters: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= maxCharacters ? flat : `${flat.slice(0, maxCharacters - 1)}…`;
}
