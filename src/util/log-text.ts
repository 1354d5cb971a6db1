/**
 * Text a client chose (a user name, a group, a token claim) made safe for a log line: control
 * characters are escaped, so a newline in it cannot start a forged line, and it is cut to a
 * bound, so a client cannot make one line as long as it likes.
 */

/** The longest client-chosen text a log line carries. */
export const LOG_TEXT_CHARS_MAX = 256;

// Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

export function logText(text: string): string {
  const cut = text.length > LOG_TEXT_CHARS_MAX ? `${text.slice(0, LOG_TEXT_CHARS_MAX)}...` : text;
  return cut.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
