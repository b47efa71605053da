import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields } from '../audit/audit-event.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound, Unprocessable } from '../shared/problems.js';
import { idListField, stringField, unwrapRecord } from '../shared/request-body.js';
import { type Actor, assertPermitted } from './authorization.js';
import { ADMIN_ROLE_ID } from './permissions.js';
import type { PermissionRecord, Role } from './role.js';
import { DuplicateIdentifier, type RoleFields, type RolesRepository } from './roles.store.js';

const LABEL_MAX = 255;
const IDENTIFIER_MAX = 64;
const IDENTIFIER = /^[a-z0-9_][a-z0-9_.-]*$/;

/** An identifier made from a label: lower case, runs of anything but letters and digits as one `_`. */
const identifierOf = (label: string) => label.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, IDENTIFIER_MAX - 8) || 'role';

export const SYSTEM_ROLE_REFUSAL = 'A system role cannot be deleted';
export const ROLE_IN_USE_REFUSAL = 'A role that users hold cannot be deleted';
export const ROLE_IN_GROUP_REFUSAL = 'A role that user groups hold cannot be deleted';

/**
 * Roles and the permission catalogue (docs/api.md#roles). Bodies arrive as sent, wrapped in `role`
 * or not (the Go SDK's edits are unwrapped). `rolesChanged` runs after a change of what a role grants,
 * so cached credentials of its holders go at once (docs/security.md#authorisation-by-permission).
 */
export function rolesService(repository: RolesRepository, clock: Clock, audit: AuditRecorder, rolesChanged: () => void = () => {}) {
  /** A role as the audit trail records it: its permissions by id. */
  const audited = (role: Role) => ({ label: role.label, identifier: role.identifier, requires_two_factor: role.requires_two_factor, permission_ids: role.permissions.map((p) => p.id) });
  const recordRole = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'role', target_id: id, changes });

  /** A free identifier: `base`, else `base_2`, `base_3` ... */
  async function freeIdentifier(base: string): Promise<string> {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}_${n}`;
      if (!(await repository.identifierTaken(candidate))) return candidate;
    }
  }

  async function readRoleFields(body: unknown, required: boolean, existing?: Role): Promise<Partial<RoleFields>> {
    const fields = unwrapRecord(body ?? {}, 'role');
    const errors = new FieldErrors();
    const out: Partial<RoleFields> = {};
    const label = stringField(fields, 'label', errors, { required, max: LABEL_MAX });
    if (label !== undefined && label.trim() === '') errors.add('label', "can't be blank");
    else if (label !== undefined) out.label = label;
    const identifier = stringField(fields, 'identifier', errors, { required: false, max: IDENTIFIER_MAX });
    if (identifier !== undefined && existing?.system && identifier !== existing.identifier) errors.add('identifier', 'of a system role cannot be changed');
    else if (identifier !== undefined && !IDENTIFIER.test(identifier)) errors.add('identifier', 'must be lower-case letters, digits and _ . -, not starting with . or -');
    else if (identifier !== undefined && (await repository.identifierTaken(identifier, existing?.id))) errors.add('identifier', 'has already been taken');
    else if (identifier !== undefined) out.identifier = identifier;
    const permissionIds = idListField(fields, 'permission_ids', errors);
    if (permissionIds !== undefined) {
      const unknown = await repository.unknownPermissionIds(permissionIds);
      if (unknown.length > 0) errors.add('permission_ids', `names no permission: ${unknown.join(', ')}`);
      else if (existing?.id === ADMIN_ROLE_ID && !sameSet(permissionIds, existing.permissions.map((p) => p.id))) errors.add('permission_ids', 'of the admin role are every permission');
      else out.permission_ids = [...new Set(permissionIds)];
    }
    const requiresTwoFactor = fields['requires_two_factor'];
    if (requiresTwoFactor !== undefined && requiresTwoFactor !== null) {
      const flag = booleanValue(requiresTwoFactor);
      if (flag === undefined) errors.add('requires_two_factor', 'must be true or false');
      else out.requires_two_factor = flag;
    }
    errors.throwIfAny();
    return out;
  }

  /** true/false as JSON gives them, or as XML and forms do ("true", "false", "1", "0"). */
  const booleanValue = (value: unknown): boolean | undefined =>
    value === true || value === 1 || value === 'true' || value === '1' ? true : value === false || value === 0 || value === 'false' || value === '0' ? false : undefined;

  const sameSet = (a: readonly number[], b: readonly number[]) => new Set(a).size === new Set(b).size && a.every((id) => b.includes(id));

  async function find(actor: Actor, id: number): Promise<Role> {
    assertPermitted(actor, 'roles.read');
    const role = await repository.find(id);
    if (!role) throw new NotFound();
    return role;
  }

  async function create(fields: RoleFields): Promise<Role> {
    try {
      return await repository.create(fields, clock());
    } catch (error) {
      if (error instanceof DuplicateIdentifier) throw new Unprocessable({ identifier: ['has already been taken'] });
      throw error;
    }
  }

  return {
    async list(actor: Actor, limit: number, offset: number): Promise<Page<Role>> {
      assertPermitted(actor, 'roles.read');
      return repository.page(limit, offset);
    },

    get: find,

    async create(actor: Actor, body: unknown): Promise<Role> {
      assertPermitted(actor, 'roles.create');
      const fields = await readRoleFields(body, true);
      const label = fields.label as string;
      const role = await create({ label, identifier: fields.identifier ?? (await freeIdentifier(identifierOf(label))), permission_ids: fields.permission_ids ?? [], requires_two_factor: fields.requires_two_factor ?? false });
      await recordRole(actor, 'role.create', role.id, audited(role));
      return role;
    },

    /** A new role with the label, with " (copy)", and the permissions of role `id`. */
    async clone(actor: Actor, id: number): Promise<Role> {
      assertPermitted(actor, 'roles.create');
      const source = await find(actor, id);
      const label = `${source.label} (copy)`.slice(0, LABEL_MAX);
      const role = await create({ label, identifier: await freeIdentifier(`${source.identifier}_copy`.slice(0, IDENTIFIER_MAX - 8)), permission_ids: source.permissions.map((p) => p.id), requires_two_factor: source.requires_two_factor });
      await recordRole(actor, 'role.clone', role.id, { ...audited(role), source_id: source.id });
      return role;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<Role> {
      assertPermitted(actor, 'roles.update');
      const existing = await repository.find(id);
      if (!existing) throw new NotFound();
      const fields = await readRoleFields(body, false, existing);
      let role: Role | undefined;
      try {
        role = await repository.update(id, fields, clock());
      } catch (error) {
        if (error instanceof DuplicateIdentifier) throw new Unprocessable({ identifier: ['has already been taken'] });
        throw error;
      }
      if (fields.permission_ids !== undefined || fields.requires_two_factor !== undefined) rolesChanged();
      if (!role) throw new NotFound();
      await recordRole(actor, 'role.update', id, changedFields(audited(existing), audited(role)));
      return role;
    },

    /** System roles and roles users or user groups hold are refused with 422. */
    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'roles.delete');
      const existing = await repository.find(id);
      const outcome = await repository.remove(id);
      if (outcome === 'not_found') throw new NotFound();
      if (outcome === 'system') throw new Unprocessable({ base: [SYSTEM_ROLE_REFUSAL] });
      if (outcome === 'in_use') throw new Unprocessable({ base: [ROLE_IN_USE_REFUSAL] });
      if (outcome === 'in_group') throw new Unprocessable({ base: [ROLE_IN_GROUP_REFUSAL] });
      await recordRole(actor, 'role.delete', id, existing === undefined ? {} : audited(existing));
    },

    async permissions(actor: Actor, limit: number, offset: number): Promise<Page<PermissionRecord>> {
      assertPermitted(actor, 'roles.read');
      return repository.permissions(limit, offset);
    },
  };
}

export type RolesService = ReturnType<typeof rolesService>;
