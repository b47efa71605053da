import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields } from '../audit/audit-event.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound, Unprocessable } from '../shared/problems.js';
import { idListField, stringField, unwrapRecord } from '../shared/request-body.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { UserGroup, UserGroupFields } from './user-group.js';
import { DuplicateGroupIdentifier, type UserGroupsRepository } from './user-groups.store.js';

const LABEL_MAX = 255;
const IDENTIFIER_MAX = 64;
const IDENTIFIER = /^[a-z0-9_][a-z0-9_.-]*$/;

/** An identifier made from a label, as for roles: lower case, runs of anything but letters and digits as one `_`. */
const identifierOf = (label: string) => label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, IDENTIFIER_MAX - 8) || 'user_group';

export const USER_GROUP_IN_USE_REFUSAL = 'A user group that users belong to cannot be deleted';

/** An id as JSON (a number or a digit string) or XML (digits) sends it; NaN for anything else. */
const idOf = (value: unknown): number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value
  : typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value) ? Number(value)
  : NaN;

/**
 * User groups (docs/api.md#user-groups). Bodies arrive as sent, wrapped in `user_group` or not (the
 * Go SDK's edits are unwrapped). `groupsChanged` runs after a change of what a group grants, or its
 * deletion, so cached credentials of its members go at once (docs/security.md#user-groups).
 */
export function userGroupsService(repository: UserGroupsRepository, clock: Clock, audit: AuditRecorder, groupsChanged: () => void = () => {}) {
  /** A group as the audit trail records it: its roles by id. */
  const audited = (group: UserGroup) => ({ label: group.label, identifier: group.identifier, role_ids: group.roles.map((role) => role.id), bucket_id: group.bucket_id });
  const recordGroup = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'user_group', target_id: id, changes });

  async function freeIdentifier(base: string): Promise<string> {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}_${n}`;
      if (!(await repository.identifierTaken(candidate))) return candidate;
    }
  }

  /**
   * The fields present in the body, every bad one named in one 422. Besides `role_ids` and
   * `bucket_id`, OnApp's older spellings: `role_id` (the Go SDK's edit: the group's one role) and
   * `bucket_ids` (the Go SDK's create: at most one bucket).
   */
  async function readFields(body: unknown, required: boolean, existing?: UserGroup): Promise<Partial<UserGroupFields>> {
    const fields = unwrapRecord(body ?? {}, 'user_group');
    const errors = new FieldErrors();
    const out: Partial<UserGroupFields> = {};
    const label = stringField(fields, 'label', errors, { required, max: LABEL_MAX });
    if (label !== undefined && label.trim() === '') errors.add('label', "can't be blank");
    else if (label !== undefined) out.label = label;
    const identifier = stringField(fields, 'identifier', errors, { required: false, max: IDENTIFIER_MAX });
    if (identifier !== undefined && !IDENTIFIER.test(identifier)) errors.add('identifier', 'must be lower-case letters, digits and _ . -, not starting with . or -');
    else if (identifier !== undefined && (await repository.identifierTaken(identifier, existing?.id))) errors.add('identifier', 'has already been taken');
    else if (identifier !== undefined) out.identifier = identifier;

    let roleIds = idListField(fields, 'role_ids', errors);
    const roleId = fields['role_id'];
    if (roleIds === undefined && roleId !== undefined && roleId !== null && roleId !== '') {
      if (Number.isNaN(idOf(roleId))) errors.add('role_id', 'must be an id');
      else roleIds = [idOf(roleId)];
    }
    if (roleIds !== undefined) {
      const unknown = await repository.unknownRoleIds(roleIds);
      if (unknown.length > 0) errors.add(fields['role_ids'] === undefined ? 'role_id' : 'role_ids', `names no role: ${unknown.join(', ')}`);
      else out.role_ids = [...new Set(roleIds)];
    }

    let bucket: unknown = fields['bucket_id'];
    let bucketField = 'bucket_id';
    if (bucket === undefined && fields['bucket_ids'] !== undefined) {
      const ids = idListField(fields, 'bucket_ids', errors);
      bucketField = 'bucket_ids';
      if (ids !== undefined && ids.length > 1) errors.add('bucket_ids', 'must name at most one bucket');
      else if (ids !== undefined) bucket = ids[0] ?? null;
    }
    if (bucket === null || bucket === '') out.bucket_id = null;
    else if (bucket !== undefined) {
      const id = idOf(bucket);
      if (Number.isNaN(id)) errors.add(bucketField, 'must be an id or null');
      else if (!(await repository.bucketExists(id))) errors.add(bucketField, `names no bucket: ${id}`);
      else out.bucket_id = id;
    }
    errors.throwIfAny();
    return out;
  }

  async function find(actor: Actor, id: number): Promise<UserGroup> {
    assertPermitted(actor, 'user_groups.read');
    const group = await repository.find(id);
    if (!group) throw new NotFound();
    return group;
  }

  const asUnprocessable = (error: unknown): never => {
    if (error instanceof DuplicateGroupIdentifier) throw new Unprocessable({ identifier: ['has already been taken'] });
    throw error;
  };

  return {
    async list(actor: Actor, limit: number, offset: number): Promise<Page<UserGroup>> {
      assertPermitted(actor, 'user_groups.read');
      return repository.page(limit, offset);
    },

    get: find,

    /** 404 unless the actor may see groups and group `id` exists (the group's users list asks first). */
    async assertVisible(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'user_groups.read');
      if (!(await repository.exists(id))) throw new NotFound();
    },

    async create(actor: Actor, body: unknown): Promise<UserGroup> {
      assertPermitted(actor, 'user_groups.create');
      const fields = await readFields(body, true);
      const label = fields.label as string;
      const group = await repository.create({
        label, identifier: fields.identifier ?? (await freeIdentifier(identifierOf(label))), role_ids: fields.role_ids ?? [], bucket_id: fields.bucket_id ?? null,
      }, clock()).catch(asUnprocessable);
      await recordGroup(actor, 'user_group.create', group.id, audited(group));
      return group;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<UserGroup> {
      assertPermitted(actor, 'user_groups.update');
      const existing = await repository.find(id);
      if (!existing) throw new NotFound();
      const fields = await readFields(body, false, existing);
      const group = await repository.update(id, fields, clock()).catch(asUnprocessable);
      // After the write: a credential check that began before it stores nothing (users/verification-cache.ts).
      if (fields.role_ids !== undefined) groupsChanged();
      if (!group) throw new NotFound();
      await recordGroup(actor, 'user_group.update', id, changedFields(audited(existing), audited(group)));
      return group;
    },

    /** A group users belong to is refused with 422, like a role users hold. */
    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'user_groups.delete');
      const existing = await repository.find(id);
      const outcome = await repository.remove(id);
      if (outcome === 'not_found') throw new NotFound();
      if (outcome === 'in_use') throw new Unprocessable({ base: [USER_GROUP_IN_USE_REFUSAL] });
      groupsChanged();
      await recordGroup(actor, 'user_group.delete', id, existing === undefined ? {} : audited(existing));
    },
  };
}

export type UserGroupsService = ReturnType<typeof userGroupsService>;
