/**
 * The account settings config.ts reads and the users feature uses, declared once here, below both
 * (docs/architecture.md: config may not import users, nor users config).
 */

/**
 * The CMI_PASSWORD_* settings: the password policy's values while none is stored in the database
 * (docs/security.md#password-policy). Unset, the lockout's two follow CMI_LOCKOUT_MAX_FAILURES and
 * CMI_LOCKOUT_WINDOW, which then govern as they always have.
 */
export interface PasswordPolicyDefaults {
  minLength: number;
  requireUpper: boolean;
  requireLower: boolean;
  requireDigit: boolean;
  requireSymbol: boolean;
  history: number;
  expiryMonths: number;
  lockoutAttempts: number | undefined;
  lockoutMinutes: number | undefined;
  /** CMI_PASSWORD_POLICY_REFRESH: ms between two reads of the stored policy by each process. */
  refreshMs: number;
}

/** The SMTP server and From address of account mail (CMI_SMTP_URL, CMI_SMTP_PASSWORD, CMI_MAIL_FROM; docs/security.md#unlocking-by-mail). */
export interface AccountMailServer {
  host: string;
  port: number;
  /** TLS from the first byte (`smtps://`); else STARTTLS when the server offers it. */
  secure: boolean;
  user: string | null;
  password: string | null;
  from: string;
}
