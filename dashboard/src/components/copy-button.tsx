import { useState } from 'preact/hooks';

/** Copies text to the clipboard; falls back to selecting a hidden field where the Clipboard API is missing. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      const field = document.createElement('textarea');
      field.value = text;
      document.body.appendChild(field);
      field.select();
      const copied = document.execCommand('copy');
      field.remove();
      setState(copied ? 'copied' : 'failed');
    }
  }
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span class="hint" role="status" aria-live="polite">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'Copy failed: select the text and copy it.' : ''}
      </span>
    </>
  );
}
