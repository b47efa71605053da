/** How a database compares text: what the error list's `q` (a case-insensitive substring) needs. */
export interface TextFunctions {
  /** The SQL function that lower-cases every letter, not only ASCII ones. */
  readonly lowerFunction: string;
}

/** `text` as a LIKE pattern matching it literally anywhere, with `\` as the escape character (both databases). */
export const likeContaining = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
