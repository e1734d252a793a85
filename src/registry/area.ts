// An area of the product (contacts, audiences, and later sequences, appointments, …) declares
// everything it adds to the service in one object, exported by src/<area>/index.ts. src/areas.ts
// lists the areas; the shared machinery (registry, HTTP and MCP faces, GraphQL, workers, the
// operator's fixtures) reads Areas and names none. An area brings its SQL in its own migration
// files (db/README.md) and its tests in test/<area>/.
import type { TaskList } from 'graphile-worker';
import type { Request, Response } from 'express';
import type pg from 'pg';
import type { FixtureSection } from '../admin/fixture.ts';
import type { Config } from '../config.ts';
import type { Transports } from '../delivery/index.ts';
import type { GraphqlExposure } from '../graphql/exposed.ts';
import type { AnyOperation } from './operation.ts';

/** What background tasks get from the process that runs them. */
export interface TaskDeps {
  transports: Transports;
  /** The service's public base URL (links in messages); the environment's (SVC_BASE_URL) when absent. */
  baseUrl?: string;
}

/**
 * A page or form endpoint outside /api/v1 that needs no API key (an unsubscribe link in an
 * email): it authenticates nothing but what its URL carries, or, for the dashboard's pages, its
 * own session cookie (src/dashboard/session.ts). Mounted as given, rate limited per route like
 * every route.
 */
export interface PublicPage {
  /** OPTIONS: a CORS preflight the page answers itself. */
  method: 'GET' | 'POST' | 'OPTIONS';
  /** An express path, not under /api/v1 (`/unsubscribe/:token`). */
  path: string;
  /**
   * `pool` is the request pool (svc_login): the page sets its own role and calls only what it is
   * granted. `config`: the service's settings (base URL, transports), for pages that need them.
   */
  handle(req: Request, res: Response, deps: PageDeps): Promise<void>;
  /**
   * A provider's signed webhook (SMS, email, voice): limited per address by
   * SVC_WEBHOOK_RATE_LIMIT instead of SVC_RATE_LIMIT, since a provider reports a whole broadcast
   * from a handful of addresses and does not retry what a 429 refuses.
   */
  provider?: boolean;
}

/** What a public page gets from the app: the request pool, the settings, the operations it serves. */
export interface PageDeps {
  pool: pg.Pool;
  config: Config;
  /** Every operation the app serves (what a page may need to know of the API, like the OAuth consent's scopes). */
  operations: readonly AnyOperation[];
}

export interface Area {
  /** The folder names: src/<name>/ and test/<name>/. */
  name: string;
  /** Its operations, in routing order (a fixed path before a parameterized one it would match). */
  operations: readonly AnyOperation[];
  /** Its graphile-worker tasks, by task identifier (each a file of the area, named after what it does). */
  tasks?: (deps: TaskDeps) => TaskList;
  /** Cron lines for its tasks, in graphile-worker's crontab syntax. */
  crontab?: readonly string[];
  /** Its part of the tenant fixture of `svc admin apply`, and of the demo organization. */
  fixture?: FixtureSection;
  /** Its public pages (no credential), outside /api/v1. */
  pages?: readonly PublicPage[];
  graphql?: {
    /** The tables internal GraphQL shows of the area, each with its shown columns (graphql/exposed.ts). */
    tables: GraphqlExposure;
    /** Columns many rows share, which groupedAggregates may group by (never ids, names or exact times). */
    groupBy?: readonly string[];
  };
}

/** Every operation of the areas, in the areas' order. */
export const operationsOf = (areas: readonly Area[]): AnyOperation[] => areas.flatMap((a) => a.operations);

/** Every public page of the areas. */
export const pagesOf = (areas: readonly Area[]): PublicPage[] => areas.flatMap((a) => a.pages ?? []);

/** The areas' task lists merged; a task identifier declared twice is a mistake caught at start. */
export function tasksOf(areas: readonly Area[], deps: TaskDeps): TaskList {
  const tasks: TaskList = {};
  for (const area of areas) {
    for (const [name, task] of Object.entries(area.tasks?.(deps) ?? {})) {
      if (name in tasks) throw new Error(`task ${name} is declared twice (area ${area.name})`);
      tasks[name] = task;
    }
  }
  return tasks;
}
