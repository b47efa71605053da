import { isBesideApi, type RouteSpec } from './route-spec.js';

/**
 * Holds the app to the table: every route registered (HEAD aside, which fastify adds for each GET, and
 * what is served beside the API, isBesideApi) must be a row of `routes` (http/route-spec.ts), and the
 * returned check, called once all are registered, that every row has its route. Start-up work only:
 * no request pays for it.
 */
export function holdToRouteTable(app: { addHook(name: 'onRoute', hook: (route: { method: string | string[]; url: string }) => void): unknown }, routes: readonly RouteSpec[]): () => void {
  const declared = new Set(routes.map((route) => `${route.method} ${route.path}`));
  const registered = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'HEAD' || isBesideApi(route.url)) continue;
      const key = `${method} ${route.url}`;
      if (!declared.has(key)) throw new Error(`route ${key} has no row in the route table (each feature declares its rows beside its routes; app/api-routes.ts gathers them)`);
      registered.add(key);
    }
  });
  return () => {
    const missing = [...declared].filter((key) => !registered.has(key));
    if (missing.length > 0) throw new Error(`the route table names routes that are not registered: ${missing.join(', ')}`);
  };
}
