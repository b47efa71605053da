import type { ResourceDefinition, ResourceRecord } from '../http/render/resource-definition.js';
import type { UserWhiteList } from './user-white-lists.store.js';

/** One of a user's allowed addresses, as OnApp shapes it (docs/api.md#allowed-addresses). */
export const userWhiteListResource = {
  root: 'user_white_list',
  plural: 'user_white_lists',
  fields: [
    ['id', 'integer'],
    ['user_id', 'integer'],
    ['ip', 'string'],
    ['description', 'string'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;

export function presentWhiteList(entry: UserWhiteList): ResourceRecord {
  const { id, user_id, ip, description, created_at, updated_at } = entry;
  return { id, user_id, ip, description, created_at, updated_at };
}
