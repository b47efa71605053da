/** Limits of what cmi accepts, documented in docs/limits.md. */

/** The error tracker's text limits (docs/error-grouping.md#truncation): longer text is cut and marked, never refused. */
export const errorTrackerLimits = {
  /** A message, in characters (UTF-16 code units), the truncation marker included. */
  messageChars: 65_536,
  /** Lines of a backtrace; past it, the innermost and outermost frames are kept. */
  backtraceFrames: 256,
  innermostFrames: 200,
  outermostFrames: 50,
  /** One frame (line) of a backtrace, in characters. */
  frameChars: 1_024,
  /** An error class, in characters. */
  errorClassChars: 255,
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

/** The password policy's bounds (docs/security.md#password-policy): what PUT /settings/password_policy and the CMI_PASSWORD_* settings accept. */
export const passwordPolicyLimits = {
  /** min_length: from the house's minimum to a length any password manager makes. */
  minLengthMax: 128,
  /** history: earlier passwords checked on a change (each costs one argon2id verify). */
  historyMax: 24,
  /** expiry_months: ten years at most (0: never). */
  expiryMonthsMax: 120,
  lockoutAttemptsMax: 1_000,
  /** lockout_minutes: a day at most, as CMI_LOCKOUT_WINDOW. */
  lockoutMinutesMax: 1_440,
} as const;

/** A user's API keys (docs/limits.md#api-keys): as OnApp, at most 100 per user; a description of up to 255 characters. */
export const apiKeyLimits = {
  perUser: 100,
  description: 255,
} as const;

/** What a report of an error may carry besides its text (docs/limits.md#infrastructure-error-reports). */
export const errorReportLimits = {
  /** host, component, request_id. */
  nameChars: 255,
  /** Occurrences one report may stand for. */
  maxCount: 10_000,
  /** The context object, serialized as JSON. */
  contextBytes: 16_384,
  /** Levels of objects and arrays in the context, the context object counting as the first. */
  contextDepth: 32,
  /** Characters of a context or an occurrence's message one console page shows; the rest is downloaded. */
  shownChars: 2_000,
  /** How far ahead of the server's clock occurred_at may be. */
  futureSkewMs: 5 * 60_000,
} as const;

/** What a change to the cloud may hold (docs/changes.md, docs/limits.md#changes). */
export const changeLimits = {
  /** `kind`: one word. */
  kindChars: 64,
  titleChars: 255,
  releaseChars: 255,
  /** Each host and component, as the error reports carry them (docs/limits.md). */
  scopeItemChars: 255,
  /** Hosts, and components, one change names. */
  scopeItems: 100,
} as const;
