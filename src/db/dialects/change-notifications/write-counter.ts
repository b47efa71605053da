import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** What a cache serves: users' pages, or the error tracker's (docs/architecture.md#how-cached-pages-stay-right). */
export type CachedData = 'users' | 'tracker';

/** Tables whose rows are served from caches, by what they serve; writes to the others (login counters, sessions) change nothing cached. */
const CACHED_TABLES = new Map<string, CachedData>([
  ['users', 'users'],
  ['permissions', 'users'],
  ['roles', 'users'],
  ['role_permissions', 'users'],
  ['user_roles', 'users'],
  ['billing_buckets', 'users'],
  ['user_groups', 'users'],
  ['user_group_roles', 'users'],
  ['infrastructure_errors', 'tracker'],
  ['error_counts', 'tracker'],
  ['error_occurrences', 'tracker'],
  ['error_histogram', 'tracker'],
  ['error_breakdown', 'tracker'],
  ['error_triage', 'tracker'],
  ['error_notes', 'tracker'],
  ['error_activity', 'tracker'],
]);

type Node = OperationNode & Record<string, unknown>;

/** The table an insert, update or delete writes to; undefined for anything else. */
function writtenTable(node: RootOperationNode): string | undefined {
  const any = node as unknown as Node;
  const target = (node.kind === 'InsertQueryNode' ? any.into
    : node.kind === 'UpdateQueryNode' ? any.table
    : node.kind === 'DeleteQueryNode' ? (any.from as { froms: unknown[] } | undefined)?.froms[0]
    : undefined) as Node | undefined;
  if (target === undefined) return undefined;
  const table = (target.kind === 'AliasNode' ? target.node : target) as { table?: { identifier?: { name?: string } } };
  return table.table?.identifier?.name ?? '(unknown)';
}

/**
 * Counts the writes this process has completed through kysely to tables that caches serve, so its
 * own changes invalidate its caches synchronously, before any notice from the database could arrive.
 */
export class WriteCounter implements KyselyPlugin {
  /** Completed writes by what they change. */
  readonly counts: Record<CachedData, number> = { users: 0, tracker: 0 };
  private readonly writes = new WeakMap<object, CachedData | 'both'>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(args.node);
    // A write whose table cannot be told is counted for both: better a needless refresh than a stale page.
    const changes = table === '(unknown)' ? 'both' : table === undefined ? undefined : CACHED_TABLES.get(table);
    if (changes !== undefined) this.writes.set(args.queryId, changes);
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const changed = this.writes.get(args.queryId);
    if (changed === 'both') {
      this.counts.users += 1;
      this.counts.tracker += 1;
    } else if (changed !== undefined) this.counts[changed] += 1;
    return Promise.resolve(args.result);
  }
}
