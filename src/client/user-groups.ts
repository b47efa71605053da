import { userGroupResource as resource } from '../user-groups/user-group.resource.js';
import { userResource } from '../users/user.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type User, type UserGroup, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';
import { splitUserListParams, type UserFilters } from './users.js';

/** The fields of `POST /user_groups` (docs/api.md#user-groups): the identifier is made from the label when not given. */
export interface NewUserGroup {
  label: string;
  identifier?: string;
  /** The roles the group holds; they apply to its members. */
  role_ids?: number[];
  bucket_id?: number | null;
}

/** The fields of `PUT /user_groups/:id`: any of those of a new group; `role_ids` replace the group's. */
export type UserGroupChanges = Partial<NewUserGroup>;

/** `client.userGroups`: OnApp's user groups (docs/client.md#methods). */
export function userGroupsApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(resource, http.format === 'json' ? unwrap(resource, answer.body) : answer.body, http.format);
  const path = (id: number) => `/user_groups/${id}`;
  const members = (id: number, params: PageParams & UserFilters) => {
    const { page, query } = splitUserListParams(params);
    return fetchPage(http, userResource, `${path(id)}/users`, { ...page, query });
  };

  return {
    /** One page: `{ items, total, page, limit }`. */
    list(params: PageParams = {}): Promise<Page<UserGroup>> {
      return fetchPage(http, resource, '/user_groups', params);
    },

    /** Every group, page by page. */
    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<UserGroup, void, undefined> {
      return walkPages((page) => fetchPage(http, resource, '/user_groups', { ...params, page }), (group) => group.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<UserGroup> {
      return one(await http.request('GET', path(id), call));
    },

    async create(fields: NewUserGroup, call: RequestOptions = {}): Promise<UserGroup> {
      return one(await http.request('POST', '/user_groups', { ...call, body: { user_group: fields } }));
    },

    /** Answers nothing (204); `get` reads the changed record. */
    async update(id: number, changes: UserGroupChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { user_group: changes } });
    },

    /** Refused (422) while users belong to the group. */
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },

    /** One page of the group's users (`GET /user_groups/:id/users`), narrowed by the users list's filters but the group. */
    users(id: number, params: PageParams & Omit<UserFilters, 'user_group_id'> = {}): Promise<Page<User>> {
      return members(id, params);
    },

    /** Every user of the group, page by page. */
    allUsers(id: number, params: Omit<PageParams, 'page'> & Omit<UserFilters, 'user_group_id'> = {}): AsyncGenerator<User, void, undefined> {
      return walkPages((page) => members(id, { ...params, page }), (user) => user.id);
    },
  };
}
