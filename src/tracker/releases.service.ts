import type { AuditRecorder } from '../audit/audit-trail.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { FieldErrors } from '../shared/problems.js';
import { unwrapRecord } from '../shared/request-body.js';
import type { ReleasesRepository } from './releases.store.js';
import { RELEASE_MAX_CHARS } from './triage.js';

/** A declared release's name: as a release an occurrence carries (tracker/infrastructure-error.ts facetsOf), trimmed. */
export function parseReleaseBody(body: unknown): string {
  const fields = unwrapRecord(body ?? {}, 'release');
  const errors = new FieldErrors();
  for (const name of Object.keys(fields)) if (name !== 'name') errors.add(name, 'is not a field of a release');
  const name = fields['name'];
  if (name === undefined || name === null || (typeof name === 'string' && name.trim() === '')) errors.add('name', "can't be blank");
  else if (typeof name !== 'string') errors.add('name', 'must be a string');
  else if (name.includes('\u0000')) errors.add('name', 'must not contain the NUL character (U+0000)');
  else if (name.trim().length > RELEASE_MAX_CHARS) errors.add('name', `is too long (maximum is ${RELEASE_MAX_CHARS} characters)`);
  errors.throwIfAny();
  return (name as string).trim();
}

/**
 * Releases (docs/api.md#releases): those the errors' occurrences carried, with what each brought,
 * read by holders of infrastructure_errors.read; declared ahead of their first event by holders of
 * infrastructure_errors.triage (who resolve errors in them).
 */
export function releasesService(repository: ReleasesRepository, clock: Clock, audit: AuditRecorder) {
  return {
    async list(actor: Actor, limit: number, offset: number) {
      assertPermitted(actor, 'infrastructure_errors.read');
      return repository.list(limit, offset);
    },

    async declare(actor: Actor, body: unknown) {
      assertPermitted(actor, 'infrastructure_errors.triage');
      const name = parseReleaseBody(body);
      const declared = await repository.declare(name, clock());
      if (declared.created) await audit.record(actor, { action: 'release.declare', target_type: 'release', target_id: null, changes: { name } });
      return declared;
    },
  };
}

export type ReleasesService = ReturnType<typeof releasesService>;
