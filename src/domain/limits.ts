/** Length limits of string fields, in characters. Documented in docs/limits.md. */
export const infrastructureErrorLimits = {
  errorClass: 255,
  errorMessage: 16_384,
  backtrace: 65_536,
} as const;

/** User fields. */
export const userLimits = {
  loginMin: 2,
  loginMax: 40,
  email: 254,
  name: 255,
  passwordMinChars: 8,
  passwordMaxBytes: 256,
  timeZone: 64,
  locale: 16,
} as const;
