/**
 * Incremental parser for server-sent events (WHATWG HTML "Parsing an event stream"): lines end
 * in CRLF, LF or CR; `data:` lines of one event are joined with "\n"; a blank line dispatches;
 * comment lines (":") are ignored. Input may be split anywhere, even inside a UTF-8 sequence.
 */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}

export interface SseParser {
  /** Feeds bytes; returns the events completed by them. */
  push(chunk: Uint8Array | string): SseMessage[];
  /** Ends the input; an event without its blank line is dispatched too (lenient, as most clients are). */
  end(): SseMessage[];
}

export function createSseParser(): SseParser {
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  let dataLines: string[] = [];
  let eventName: string | undefined;
  let lastId: string | undefined;
  let skipLeadingLf = false;

  function dispatch(output: SseMessage[]): void {
    if (dataLines.length > 0) {
      const message: SseMessage = { data: dataLines.length === 1 ? dataLines[0] : dataLines.join('\n') };
      if (eventName !== undefined) message.event = eventName;
      if (lastId !== undefined) message.id = lastId;
      output.push(message);
    }
    dataLines = [];
    eventName = undefined;
  }

  function processLine(line: string, output: SseMessage[]): void {
    if (line === '') return dispatch(output);
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') dataLines.push(value);
    else if (field === 'event') eventName = value;
    else if (field === 'id') lastId = value;
  }

  function drain(output: SseMessage[]): void {
    if (skipLeadingLf && buffer.length > 0) {
      skipLeadingLf = false;
      if (buffer.charCodeAt(0) === 10) buffer = buffer.slice(1);
    }
    // Streams from OpenAI-style upstreams end lines in LF only: then the native indexOf finds each
    // line end, several times faster than testing every character in JavaScript (this loop runs
    // for every event of every stream).
    if (buffer.indexOf('\r') === -1) {
      let start = 0;
      let end = buffer.indexOf('\n');
      while (end !== -1) {
        processLine(buffer.slice(start, end), output);
        start = end + 1;
        end = buffer.indexOf('\n', start);
      }
      if (start > 0) buffer = buffer.slice(start);
      return;
    }
    // Any CR: every character is looked at (CRLF, or CR alone, ends a line).
    let start = 0;
    for (let index = 0; index < buffer.length; index++) {
      const code = buffer.charCodeAt(index);
      if (code === 10 || code === 13) {
        processLine(buffer.slice(start, index), output);
        start = index + 1;
        if (code === 13) {
          if (index + 1 < buffer.length) {
            if (buffer.charCodeAt(index + 1) === 10) {
              index++;
              start = index + 1;
            }
          } else {
            skipLeadingLf = true;
          }
        }
      }
    }
    buffer = buffer.slice(start);
  }

  return {
    push(chunk) {
      buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      const output: SseMessage[] = [];
      drain(output);
      return output;
    },
    end() {
      buffer += decoder.decode();
      const output: SseMessage[] = [];
      drain(output);
      if (buffer.length > 0) processLine(buffer, output);
      buffer = '';
      dispatch(output);
      return output;
    },
  };
}
