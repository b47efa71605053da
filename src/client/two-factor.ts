import { twoFactorEnrolmentResource, twoFactorResource } from '../users/two-factor.resource.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { RequestOptions, Transport } from './transport.js';

/** A second factor as GET shows it (docs/api.md#second-factor): never its secret. */
export type TwoFactorStatus = RecordOf<typeof twoFactorResource>;
/** The enrolment's one answer: the secret, its otpauth URI and the recovery codes. */
export interface TwoFactorEnrolment {
  otpauth_uri: string;
  secret: string;
  recovery_codes: string[];
  enabled: boolean;
}

/**
 * `client.users.twoFactor`: a user's TOTP second factor (docs/client.md#users). `enrol` and `confirm`
 * are the user's own; `disable` of one's own takes a current code or a recovery code. Calls go with
 * the credentials (an API key: Basic with the password of an account with a second factor is refused).
 */
export function twoFactorApi(http: Transport) {
  const path = (userId: number) => `/users/${userId}/two_factor`;
  const status = (body: unknown) => decodeRecord(twoFactorResource, http.format === 'json' ? unwrap(twoFactorResource, body) : body, http.format);
  return {
    async show(userId: number, call: RequestOptions = {}): Promise<TwoFactorStatus> {
      return status((await http.request('GET', path(userId), { ...call, credentials: true })).body);
    },

    /** A new pending second factor, answered this once (not retried: a second try would replace it). */
    async enrol(userId: number, call: RequestOptions = {}): Promise<TwoFactorEnrolment> {
      const answer = await http.request('POST', path(userId), { ...call, credentials: true, maxRetries: 0 });
      const record = decodeRecord(twoFactorEnrolmentResource, http.format === 'json' ? unwrap(twoFactorEnrolmentResource, answer.body) : answer.body, http.format);
      return { ...record, recovery_codes: record.recovery_codes as unknown as string[] };
    },

    async confirm(userId: number, code: string, call: RequestOptions = {}): Promise<TwoFactorStatus> {
      return status((await http.request('PUT', path(userId), { ...call, body: { two_factor: { code } }, credentials: true, maxRetries: 0 })).body);
    },

    /** Removes it: one's own with `code` (sent in X-Cmi-OTP), another user's as a holder of users.update. */
    async disable(userId: number, code?: string, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(userId), { ...call, credentials: true, maxRetries: 0, ...(code === undefined ? {} : { headers: { 'x-cmi-otp': code } }) });
    },
  };
}
