import { passwordPolicyResource } from '../users/password-policy.resource.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** The password policy (docs/api.md#password-policy). */
export type PasswordPolicy = RecordOf<typeof passwordPolicyResource>;

/** The fields of `PUT /settings/password_policy`: any of the policy's. */
export type PasswordPolicyChanges = Partial<PasswordPolicy>;

const PATH = '/settings/password_policy';

/** `client.passwordPolicy`: the installation's password policy, for holders of password_policy.manage (docs/client.md#methods). */
export function passwordPolicyApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(passwordPolicyResource, http.format === 'json' ? unwrap(passwordPolicyResource, answer.body) : answer.body, http.format);
  return {
    async get(call: RequestOptions = {}): Promise<PasswordPolicy> {
      return one(await http.request('GET', PATH, call));
    },

    /** Changes the fields given; answers the whole policy. A bad field is a `CmiValidationError` naming it. */
    async update(changes: PasswordPolicyChanges, call: RequestOptions = {}): Promise<PasswordPolicy> {
      return one(await http.request('PUT', PATH, { ...call, body: { password_policy: changes } }));
    },
  };
}
