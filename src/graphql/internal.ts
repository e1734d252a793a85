// The internal GraphQL layer (ARCHITECTURE §2, §6): PostGraphile v5 built in-process from
// the app_public tables and columns the areas expose (Area.graphql), with @graphile/pg-aggregates. Every
// operation runs as svc_request under the credential's claims, so the same row-level security
// decides what it sees as for REST. It is served at /internal/graphql for the organization's
// own tools (same bearer keys, only those REST narrows nothing for) and can be called
// in-process by handlers that would rather not write the SQL (nested records, counts).
import express, { type Request } from 'express';
import type pg from 'pg';
import { PgAggregatesPreset } from '@graphile/pg-aggregates';
import { postgraphile } from 'postgraphile';
import { makePgService } from 'postgraphile/adaptors/pg';
import { grafast, isSafeError } from 'postgraphile/grafast';
import { grafserv } from 'postgraphile/grafserv/express/v4';
import { getOperationAST, GraphQLError, type ExecutionResult } from 'postgraphile/graphql';
import { PostGraphileAmberPreset } from 'postgraphile/presets/amber';
import { bearerKey, credentialHash } from '../auth/keys.ts';
import type { Config } from '../config.ts';
import { runStatement, type Claims, type Requirement } from '../db/request.ts';
import { sql } from '../db/sql.ts';
import { toApiError, unauthorized } from '../platform/errors.ts';
import { log } from '../log.ts';
import { exposureOf } from './exposed.ts';
import { exposurePlugin } from './exposure.ts';
import { boundedGroupingsPlugin, operationTooLarge } from './limits.ts';
import { pgSettingsFor } from './pg-settings.ts';
import type { HeavyLane } from '../platform/heavy.ts';
import type { Area } from '../registry/area.ts';

export const INTERNAL_GRAPHQL_PATH = '/internal/graphql';

declare global {
  namespace Grafast {
    interface RequestContext {
      /** The claims of an in-process execution (InternalGraphql.execute). */
      svc: { claims: Claims };
    }
  }
}

// GraphQL is no operation of the registry: the policies limit its rows, but nothing limits
// its fields the way REST's functions do for a MEMBER, a MANAGER without a power or a
// scope-limited key. So over HTTP it takes only the credentials REST narrows nothing for;
// the database decides which (app_hidden.authorize_internal_graphql, right after authenticate).
const ANY_KEY: Requirement = { scope: null, memberAccess: 'open', managerPower: null };

export interface InternalGraphql {
  /** Adds /internal/graphql to the app (createApp's `mount`); adds nothing when turned off. */
  mount(app: express.Express): void;
  /**
   * Runs a query in-process under the given claims, in its own transaction. A database error
   * stays in `errors[i].originalError`, for toApiError.
   */
  execute(claims: Claims, query: string, variables?: Record<string, unknown>): Promise<ExecutionResult>;
  /** Releases PostGraphile; the pool stays the caller's to end. */
  release(): Promise<void>;
}

/**
 * Database errors become the API's codes in `extensions`, never raw messages; anything
 * unexpected is logged through pino (grafserv's default would print to the console) and masked.
 */
function maskError(error: GraphQLError): GraphQLError {
  const original = error.originalError;
  if (!original || original instanceof GraphQLError || isSafeError(original)) return error;
  const apiError = toApiError(original);
  if (apiError.statusCode >= 500) log.error({ err: original }, 'internal graphql failed');
  return new GraphQLError(apiError.message, {
    nodes: error.nodes, source: error.source, positions: error.positions, path: error.path,
    originalError: original, extensions: { statusCode: apiError.statusCode, error: apiError.code },
  });
}

/**
 * Answers anything but a query with a GraphQL error. The schema has no mutation type, but
 * graphql-js 16 has no validation rule for a missing operation type: a mutation would reach
 * Grafast's planner, which logs a stack trace and fails with an internal error. A query over
 * the size limits (limits.ts) is refused before it is planned.
 */
const QueriesOnlyPlugin: GraphileConfig.Plugin = {
  name: 'SvcQueriesOnlyPlugin',
  version: '1.0.0',
  grafast: {
    middleware: {
      execute(next, { args }) {
        const operation = getOperationAST(args.document, args.operationName);
        if (!operation) return next();
        if (operation.operation !== 'query') {
          return { errors: [new GraphQLError(`This API is read-only: a ${operation.operation} is not accepted`, { nodes: operation })] };
        }
        const tooLarge = operationTooLarge(args.schema, args.document, operation, args.variableValues);
        return tooLarge ? { errors: [new GraphQLError(tooLarge, { nodes: operation })] } : next();
      },
    },
  },
};

export async function createInternalGraphql(
  { pool, heavy, config, areas }: { pool: pg.Pool; heavy: HeavyLane; config: Config; areas: readonly Area[] },
): Promise<InternalGraphql> {
  // Claims of HTTP requests, set by the authentication step in front of grafserv.
  const claimsOf = new WeakMap<Request, Claims>();

  const pgl = postgraphile({
    extends: [PostGraphileAmberPreset, PgAggregatesPreset],
    plugins: [
      QueriesOnlyPlugin,
      boundedGroupingsPlugin(areas.flatMap((a) => a.graphql?.groupBy ?? [])),
      exposurePlugin(exposureOf(areas.flatMap((a) => (a.graphql ? [a.graphql.tables] : [])))),
    ],
    pgServices: [makePgService({
      // The heavy lane's pool (svc_login connections; pgSettings' `role` makes each
      // transaction svc_request): a query may read whole tables, so it waits its turn there
      // instead of taking the connections cheap requests need.
      pool: heavy.pool,
      schemas: ['app_public'],
      pubsub: false,
      // svc_login holds no rights until it sets a role, and it is a member of svc_worker as
      // well as svc_request: PostGraphile's RBAC counts noinherit memberships, so as
      // svc_login the schema would follow the union of both roles' grants. It is built from
      // the grants of the role that requests run as.
      pgSettingsForIntrospection: { role: 'svc_request' },
    })],
    schema: {
      // Read-only. Writes are registry operations, whose scope, role and power are checked by
      // authenticate for each operation; GraphQL authenticates with no such requirement, so it
      // must not write: no generated CRUD, and no volatile function becomes a mutation.
      defaultBehavior: '-insert -update -delete -mutationField',
    },
    grafast: {
      // The per-request role and claims, as pgSettings that PostGraphile applies with
      // set_config(…, true) in the operation's transaction (never pre-filled on the context).
      context(requestContext) {
        const req = requestContext.expressv4?.req;
        const claims = requestContext.svc?.claims ?? (req && claimsOf.get(req));
        if (!claims) throw new Error('internal GraphQL reached without claims');
        return { pgSettings: pgSettingsFor(claims) };
      },
    },
    grafserv: {
      graphqlPath: INTERNAL_GRAPHQL_PATH,
      graphiql: false,
      websockets: false,
      watch: false,
      maskError,
    },
  });
  // built now, so that a schema PostGraphile cannot read fails the start, not a request
  const { schema, resolvedPreset } = await pgl.getSchemaResult();

  let router: express.Router | undefined;
  if (config.internalGraphql) {
    router = express.Router();
    // The same authentication as REST, then the database's rule for GraphQL, in one round trip
    // before grafserv reads the body: failures are our 401 envelope (with WWW-Authenticate) or
    // 403 through the app's error handler.
    // A query is an expensive call: admitted like one (src/platform/heavy.ts) until its answer is sent.
    router.all(INTERNAL_GRAPHQL_PATH, async (req, res, next) => {
      const key = bearerKey(req.get('authorization'));
      if (!key) throw unauthorized();
      const keyHash = credentialHash(key, config.baseUrl);
      const ticket = heavy.admit(keyHash);
      res.on('close', ticket.end);
      try {
        const { claims } = await runStatement(pool, keyHash, ANY_KEY, sql`select app_hidden.authorize_internal_graphql()`);
        ticket.organization(claims);
        claimsOf.set(req, claims);
      } catch (e) {
        ticket.end();
        throw e;
      }
      next();
    });
    // addTo only calls `use` on what it is given when websockets are off, so a router does.
    await pgl.createServ(grafserv).addTo(router as unknown as express.Express, null, false);
  }

  return {
    mount(app) {
      if (router) app.use(router);
    },
    async execute(claims, query, variables) {
      const result = await grafast({
        schema,
        resolvedPreset,
        requestContext: { svc: { claims } },
        source: query,
        variableValues: variables ?? null,
      });
      if (Symbol.asyncIterator in result) {
        await result.return?.();
        throw new Error('@defer and @stream are not supported in-process');
      }
      return result;
    },
    async release() {
      await pgl.release();
    },
  };
}
