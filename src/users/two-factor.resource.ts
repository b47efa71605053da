import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** The enrolment's one answer (docs/api.md#second-factor): the secret and the recovery codes, shown this once. */
export const twoFactorEnrolmentResource = {
  root: 'two_factor',
  plural: 'two_factors',
  schema: 'two_factor_enrolment',
  fields: [
    ['otpauth_uri', 'string'],
    ['secret', 'string'],
    // A JSON array of strings; XML carries the array's text.
    ['recovery_codes', 'json'],
    ['enabled', 'boolean'],
  ],
} as const satisfies ResourceDefinition;

/** A second factor as it is shown after its enrolment: never its secret. */
export const twoFactorResource = {
  root: 'two_factor',
  plural: 'two_factors',
  fields: [
    ['enabled', 'boolean'],
    ['confirmed_at', 'datetime', 'nullable'],
    ['recovery_codes_left', 'integer'],
  ],
} as const satisfies ResourceDefinition;
