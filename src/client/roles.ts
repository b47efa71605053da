import { permissionResource, roleResource } from '../roles/role.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** A role as `/roles` answers it: a user record's `Role` and `users_count` (docs/api.md#roles). */
export type RoleRecord = RecordOf<typeof roleResource>;
/** A permission of the catalogue (docs/api.md#permissions). */
export type Permission = RecordOf<typeof permissionResource>;

/** The fields of `POST /roles` (docs/api.md#roles): `identifier` is made from the label when not given. */
export interface NewRole {
  label: string;
  identifier?: string;
  /** The permissions the role grants, by id (`GET /permissions`). */
  permission_ids?: number[];
  /** Whether its holders must have a second factor (docs/security.md#second-factor); false when not given. */
  requires_two_factor?: boolean;
}

/** The fields of `PUT /roles/:id`: `permission_ids` replace the role's. */
export type RoleChanges = Partial<NewRole>;

/** `client.roles`: OnApp's roles (docs/client.md#methods). */
export function rolesApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(roleResource, http.format === 'json' ? unwrap(roleResource, answer.body) : answer.body, http.format);
  const path = (id: number) => `/roles/${id}`;

  return {
    list(params: PageParams = {}): Promise<Page<RoleRecord>> {
      return fetchPage(http, roleResource, '/roles', params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<RoleRecord, void, undefined> {
      return walkPages((page) => fetchPage(http, roleResource, '/roles', { ...params, page }), (role) => role.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<RoleRecord> {
      return one(await http.request('GET', path(id), call));
    },

    async create(fields: NewRole, call: RequestOptions = {}): Promise<RoleRecord> {
      return one(await http.request('POST', '/roles', { ...call, body: { role: fields } }));
    },

    /** Answers nothing (204); `get` reads the changed role. */
    async update(id: number, changes: RoleChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { role: changes } });
    },

    /** A system role, or one that users hold, is refused (`CmiValidationError`). */
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },

    /** A new role with the label and ` (copy)`, the identifier and `_copy`, and the same permissions. */
    async clone(id: number, call: RequestOptions = {}): Promise<RoleRecord> {
      return one(await http.request('POST', `${path(id)}/clone`, call));
    },
  };
}

/** `client.permissions`: the permission catalogue, by id (docs/api.md#permissions). */
export function permissionsApi(http: Transport) {
  return {
    list(params: PageParams = {}): Promise<Page<Permission>> {
      return fetchPage(http, permissionResource, '/permissions', params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<Permission, void, undefined> {
      return walkPages((page) => fetchPage(http, permissionResource, '/permissions', { ...params, page }), (permission) => permission.id);
    },
  };
}
