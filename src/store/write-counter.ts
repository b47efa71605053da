import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

const WRITES = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);

/**
 * Counts the writes this process has completed through kysely, so its own changes invalidate its
 * caches synchronously, before any notification from the database could arrive.
 */
export class WriteCounter implements KyselyPlugin {
  count = 0;
  private readonly writes = new WeakSet<object>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (WRITES.has(args.node.kind)) this.writes.add(args.queryId);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.writes.has(args.queryId)) this.count += 1;
    return args.result;
  }
}
