// What internal GraphQL shows: an allowlist of app_public tables and, for each, its columns.
// Anything not listed — another table, another column, every app_public function — is left
// out of the schema (exposure.ts). The rule for an entry: GraphQL may show only what REST
// already shows the credentials that may use GraphQL (organization-wide, every field; see
// app_hidden.authorize_internal_graphql). A table's primary key and the keys that join it to
// other listed tables count as shown when REST shows the row. test/graphql/graphql-access.test.ts
// reads every listed column of every row through GraphQL and through REST, and fails on a
// table that has no REST mirror there: an area declares its tables in its Area (`graphql.tables`)
// and its mirror there.

/** Tables of app_public an area shows through internal GraphQL, each with its shown columns. */
export type GraphqlExposure = Readonly<Record<string, readonly string[]>>;

/** All the areas' tables, merged; a table two areas declare is a mistake caught at start. */
export function exposureOf(parts: readonly GraphqlExposure[]): GraphqlExposure {
  const all: Record<string, readonly string[]> = {};
  for (const part of parts) {
    for (const [table, columns] of Object.entries(part)) {
      if (table in all) throw new Error(`table ${table} is exposed by two areas`);
      all[table] = columns;
    }
  }
  return all;
}
