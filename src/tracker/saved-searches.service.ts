import type { AuditRecorder } from '../audit/audit-trail.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { Forbidden, NotFound, Unprocessable } from '../shared/problems.js';
import { parseSavedSearchBody, type SavedSearch } from './saved-search.js';
import { DuplicateSavedSearchName, type SavedSearchesRepository } from './saved-searches.store.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** The owner of what a user saves; the operator at the command line (no user) saves none and sees the shared ones. */
const ownerOf = (actor: Actor) => actor.id ?? 0;

/**
 * Saved searches (docs/search.md#saved-searches): anyone who may read errors (infrastructure_errors.read)
 * keeps their own, sees the shared ones of others, and changes or deletes only their own (another's
 * shared one is a 403, one not shared a 404: it is not there for them).
 */
export function savedSearchesService(repository: SavedSearchesRepository, clock: Clock, audit: AuditRecorder) {
  const record = (actor: Actor, action: string, search: SavedSearch, changes: Record<string, unknown>) =>
    audit.record(actor, { action: `saved_search.${action}`, target_type: 'saved_search', target_id: search.id, changes });
  const duplicate = (error: unknown) => (error instanceof DuplicateSavedSearchName ? new Unprocessable({ name: ['has already been taken'] }) : error);

  /** One of the actor's own, or why not. */
  async function own(actor: Actor, id: number): Promise<SavedSearch> {
    const search = await repository.find(ownerOf(actor), id);
    if (!search) throw new NotFound();
    if (search.user_id !== actor.id) throw new Forbidden('Only its owner changes or deletes a saved search');
    return search;
  }

  return {
    async list(actor: Actor, limit: number, offset: number) {
      assertPermitted(actor, 'infrastructure_errors.read');
      return repository.list(ownerOf(actor), limit, offset);
    },

    async get(actor: Actor, id: number): Promise<SavedSearch> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const search = await repository.find(ownerOf(actor), id);
      if (!search) throw new NotFound();
      return search;
    },

    async create(actor: Actor, body: unknown): Promise<SavedSearch> {
      assertPermitted(actor, 'infrastructure_errors.read');
      if (actor.id === null) throw new Forbidden('A saved search belongs to a user: sign in as one');
      const fields = parseSavedSearchBody(body, { creating: true, context: { now: clock(), viewerId: actor.id } });
      const search = await repository.create(actor.id, { ...fields, name: fields.name!, query: fields.query! }, clock()).catch((error: unknown) => { throw duplicate(error); });
      await record(actor, 'create', search, { name: search.name, query: search.query, shared: search.shared });
      return search;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<void> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const before = await own(actor, id);
      const fields = parseSavedSearchBody(body, { creating: false, context: { now: clock(), viewerId: actor.id } });
      const after = await repository.update(before.user_id, id, fields, clock()).catch((error: unknown) => { throw duplicate(error); });
      if (!after) throw new NotFound();
      const changes = Object.fromEntries((['name', 'query', 'shared'] as const).filter((key) => before[key] !== after[key]).map((key) => [key, [before[key], after[key]]]));
      await record(actor, 'update', after, changes);
    },

    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const search = await own(actor, id);
      if (!(await repository.delete(search.user_id, id))) throw new NotFound();
      await record(actor, 'delete', search, { name: search.name });
    },

    /**
     * The errors list's query with `saved` (an id, else a name: the actor's own first, then a shared one)
     * replaced by its search: `q` becomes the saved query, and a `q` given beside it narrows it further.
     */
    async expand(actor: Actor, query: Query): Promise<Query> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const { saved, ...rest } = query;
      if (saved === undefined) return query;
      if (typeof saved !== 'string') throw new Unprocessable({ saved: ['must be given only once'] });
      const found = /^[1-9]\d{0,9}$/.test(saved) ? await repository.find(ownerOf(actor), Number(saved)) : (await repository.findByName(ownerOf(actor), saved))[0];
      if (!found) throw new Unprocessable({ saved: ['must be the id or name of a saved search you can see'] });
      const q = typeof rest.q === 'string' && rest.q.trim() !== '' ? `${found.query} ${rest.q}` : found.query;
      return { ...rest, q };
    },
  };
}

export type SavedSearchesService = ReturnType<typeof savedSearchesService>;
