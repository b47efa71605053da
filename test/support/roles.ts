import type { Database } from '../../src/db/database.js';

/** A permission as a role shows it. */
export interface PermissionJson {
  permission: { id: number; identifier: string; label: string; created_at: string; updated_at: string };
}

/** A role as a user record shows it (docs/api.md#users): its fields and permissions, in wire order. */
export interface RoleJson {
  id: number;
  label: string;
  identifier: string;
  system: boolean;
  created_at: string;
  updated_at: string;
  permissions: PermissionJson[];
}

/** A stored datetime as the API writes it. */
const wire = (stored: string) => `${stored.slice(0, 19)}+00:00`;

/** Role `id` as a user record shows it, read from what the database stores. */
export async function roleJson(database: Database, id: number): Promise<RoleJson> {
  const role = await database.db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const permissions = await database.db.selectFrom('role_permissions').innerJoin('permissions', 'permissions.id', 'role_permissions.permission_id')
    .select(['permissions.id', 'permissions.identifier', 'permissions.label', 'permissions.created_at', 'permissions.updated_at'])
    .where('role_permissions.role_id', '=', id).orderBy('permissions.id').execute();
  return {
    id, label: role.label, identifier: role.identifier, system: Number(role.system) === 1, created_at: wire(role.created_at), updated_at: wire(role.updated_at),
    permissions: permissions.map((p) => ({ permission: { id: Number(p.id), identifier: p.identifier, label: p.label, created_at: wire(p.created_at), updated_at: wire(p.updated_at) } })),
  };
}

/** The `<role>` element of a user record's `<roles>`, each line indented by `indent`. */
export function roleXml(role: RoleJson, indent: string): string {
  const lines = [
    '<role>',
    `  <id type="integer">${role.id}</id>`,
    `  <label>${role.label}</label>`,
    `  <identifier>${role.identifier}</identifier>`,
    `  <system type="boolean">${role.system}</system>`,
    `  <created_at type="datetime">${role.created_at}</created_at>`,
    `  <updated_at type="datetime">${role.updated_at}</updated_at>`,
    ...(role.permissions.length === 0 ? ['  <permissions type="array"/>'] : [
      '  <permissions type="array">',
      ...role.permissions.flatMap(({ permission: p }) => [
        '    <permission>',
        `      <id type="integer">${p.id}</id>`,
        `      <identifier>${p.identifier}</identifier>`,
        `      <label>${p.label}</label>`,
        `      <created_at type="datetime">${p.created_at}</created_at>`,
        `      <updated_at type="datetime">${p.updated_at}</updated_at>`,
        '    </permission>',
      ]),
      '  </permissions>',
    ]),
    '</role>',
  ];
  return lines.map((line) => `${indent}${line}\n`).join('');
}
