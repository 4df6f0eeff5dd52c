/** A timed piece of a transcription, in seconds from the start of the audio. */
export interface TimedText {
  start: number;
  end: number;
  text: string;
}

/**
 * A transcription as SubRip (`srt`) or WebVTT (`vtt`), the shapes OpenAI answers for those
 * `response_format`s: one numbered (srt) or plain (vtt) cue per segment, blank lines between.
 */
export function subtitleText(segments: readonly TimedText[], kind: 'srt' | 'vtt'): string {
  const separator = kind === 'srt' ? ',' : '.';
  const cues = segments.map((segment, index) => {
    const timing = `${cueTime(segment.start, separator)} --> ${cueTime(segment.end, separator)}`;
    const text = segment.text.trim();
    return kind === 'srt' ? `${index + 1}\n${timing}\n${text}\n` : `${timing}\n${text}\n`;
  });
  return kind === 'srt' ? `${cues.join('\n')}\n` : `WEBVTT\n\n${cues.join('\n')}\n`;
}

/** hh:mm:ss,mmm (SubRip) or hh:mm:ss.mmm (WebVTT), to the millisecond. */
function cueTime(seconds: number, separator: string): string {
  const totalMs = Math.max(0, Math.round(seconds * 1000));
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor(totalMs / 60_000) % 60;
  const wholeSeconds = Math.floor(totalMs / 1000) % 60;
  return `${pad(hours)}:${pad(minutes)}:${pad(wholeSeconds)}${separator}${pad(totalMs % 1000, 3)}`;
}
