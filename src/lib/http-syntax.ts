/** A header field name: an RFC 9110 token (§5.6.2), in either case. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A Content-Length value: digits only, at most 15 of them (exact as a JavaScript number). */
export const CONTENT_LENGTH_DIGITS = /^\d{1,15}$/;
