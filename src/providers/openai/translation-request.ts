/**
 * The canonical request a response answers, when the HTTP provider threads it into the
 * parseResponse context (`request`). Some upstream answers omit what metering or the canonical
 * body needs (characters spoken, the requested encoding, the prompt of a video), so translators
 * read it from there; without it they fall back to what the answer itself says.
 */
export function requestOf<Request>(context: object): Request | undefined {
  return (context as { request?: Request }).request;
}
