import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Page } from '../shared/page.js';
import { FieldErrors } from '../shared/problems.js';
import type { LogSource, LogSourcesRepository, SourceFilters } from './log-sources.store.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** Every parameter the list understands. */
const KNOWN = new Set(['page', 'per_page', 'host', 'program', 'component']);
const MAX_FILTER_CHARS = 255;

/**
 * Who may see the sources (docs/log-sources.md#sources-and-silence): holders of
 * `infrastructure_errors.read`. A source is a host and program that sent records, what the errors'
 * breakdowns already show their readers, so it needs no permission of its own.
 */
export function logSourcesService(repository: LogSourcesRepository) {
  return {
    async list(actor: Actor, query: Query, limit: number, offset: number): Promise<Page<LogSource>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const errors = new FieldErrors();
      const filters: SourceFilters = {};
      for (const [name, value] of Object.entries(query)) {
        if (name === '') continue;
        if (!KNOWN.has(name)) {
          errors.add(name, 'is not a parameter of this list');
          continue;
        }
        if (name === 'page' || name === 'per_page') continue;
        if (typeof value !== 'string') errors.add(name, 'must be given once');
        else if (value.length > MAX_FILTER_CHARS) errors.add(name, `is too long (maximum is ${MAX_FILTER_CHARS} characters)`);
        else filters[name as keyof SourceFilters] = value;
      }
      errors.throwIfAny();
      return repository.page(limit, offset, filters);
    },

    /** The sources silent now, by an alert rule's silence (docs/log-sources.md#sources-and-silence): the longest silent first. */
    async silent(actor: Actor, limit: number): Promise<Page<LogSource>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      return repository.silent(limit);
    },
  };
}

export type LogSourcesService = ReturnType<typeof logSourcesService>;
