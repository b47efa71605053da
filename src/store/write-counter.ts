import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** Tables whose rows are served from caches; writes to the others (login counters, the error tracker) change nothing cached. */
const CACHED_TABLES = new Set(['users']);

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
  count = 0;
  private readonly writes = new WeakSet<object>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(args.node);
    // A write whose table cannot be told is counted: better a needless refresh than a stale page.
    if (table !== undefined && (CACHED_TABLES.has(table) || table === '(unknown)')) this.writes.add(args.queryId);
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.writes.has(args.queryId)) this.count += 1;
    return Promise.resolve(args.result);
  }
}
