// How big one internal GraphQL operation may be. Every field that reads a table is a query of
// its own, so one request of two thousand aliased `allContacts { totalCount }` would make two
// thousand counts of the whole organization; and a connection read without `first` returns
// every row it reaches (a million contacts, built into one answer in the server's memory). The
// limits keep one request to what a dashboard or report asks for. Introspection (fields
// starting with __) is not counted, so GraphQL tools can read the schema.
import {
  getNamedType, isInterfaceType, isObjectType, Kind,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLNamedType, type GraphQLSchema,
  type OperationDefinitionNode, type SelectionSetNode,
} from 'postgraphile/graphql';

export const OPERATION_LIMITS = {
  /** Fields at the top of the operation (aliases count): each is at least one query. */
  rootFields: 20,
  /** Fields in the whole operation, fragments expanded. */
  fields: 1000,
  /** Nesting of selections. */
  depth: 10,
  /** `first`/`last` of a connection whose nodes or edges are read (required there). */
  pageSize: 1000,
  /** Rows one path of nested connections may read: the product of their page sizes. */
  rows: 10_000,
} as const;

type Variables = Readonly<Record<string, unknown>> | null | undefined;

class TooLarge extends Error {}

/** The page size a connection field asks for: its `first` or `last`, literal or variable. */
function pageSizeOf(field: FieldNode, variables: Variables): number | undefined {
  for (const name of ['first', 'last']) {
    const value = field.arguments?.find((a) => a.name.value === name)?.value;
    const n = value?.kind === Kind.INT ? Number(value.value) : value?.kind === Kind.VARIABLE ? variables?.[value.name.value] : undefined;
    if (typeof n === 'number') return n;
  }
  return undefined;
}

/**
 * Walks the operation with fragments expanded and the schema's types at hand, and throws
 * TooLarge with a sentence for the caller at the first limit passed.
 */
function check(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Variables): void {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  let fields = 0;
  let rootFields = 0;

  // Whether a selection reads rows of a connection (its nodes or edges), through fragments too.
  const readsRows = (set: SelectionSetNode): boolean => set.selections.some((s) =>
    s.kind === Kind.FIELD ? s.name.value === 'nodes' || s.name.value === 'edges'
      : s.kind === Kind.INLINE_FRAGMENT ? readsRows(s.selectionSet)
        : readsRows(fragments.get(s.name.value)?.selectionSet ?? { kind: Kind.SELECTION_SET, selections: [] }));

  // Validation has already refused fragment cycles and unknown fields and types.
  const walk = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, depth: number, root: boolean, rows: number): void => {
    for (const s of set.selections) {
      if (s.kind === Kind.INLINE_FRAGMENT) {
        walk(s.selectionSet, s.typeCondition ? schema.getType(s.typeCondition.name.value) : parent, depth, root, rows);
        continue;
      }
      if (s.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value), depth, root, rows);
        continue;
      }
      if (s.name.value.startsWith('__')) continue;
      if (++fields > OPERATION_LIMITS.fields) throw new TooLarge(`This operation has more than ${OPERATION_LIMITS.fields} fields`);
      if (root && ++rootFields > OPERATION_LIMITS.rootFields) {
        throw new TooLarge(`This operation has more than ${OPERATION_LIMITS.rootFields} top-level fields (aliases count)`);
      }
      if (depth > OPERATION_LIMITS.depth) {
        throw new TooLarge(`This operation nests more than ${OPERATION_LIMITS.depth} levels deep`);
      }
      if (!s.selectionSet) continue;
      const type = isObjectType(parent) || isInterfaceType(parent) ? getNamedType(parent.getFields()[s.name.value]?.type) : undefined;
      let below = rows;
      if (isObjectType(type) && type.name.endsWith('Connection') && readsRows(s.selectionSet)) {
        const name = s.alias?.value ?? s.name.value;
        const page = pageSizeOf(s, variables);
        if (page === undefined || page > OPERATION_LIMITS.pageSize) {
          throw new TooLarge(`${name}: give first or last (at most ${OPERATION_LIMITS.pageSize}) to read its nodes or edges`);
        }
        below = rows * Math.max(page, 1);
        if (below > OPERATION_LIMITS.rows) {
          throw new TooLarge(`${name}: the nested connections above it would read up to ${below} rows; at most `
            + `${OPERATION_LIMITS.rows} (the product of their first/last) are accepted`);
        }
      }
      walk(s.selectionSet, type, depth + 1, false, below);
    }
  };
  walk(operation.selectionSet, schema.getQueryType() ?? undefined, 1, true, 1);
}

/** What is over the limits, as a sentence for the caller; undefined when the operation fits. */
export function operationTooLarge(
  schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Variables,
): string | undefined {
  try {
    check(schema, document, operation, variables);
    return undefined;
  } catch (e) {
    if (e instanceof TooLarge) return e.message;
    throw e;
  }
}

// What groupedAggregates may group by: a value shared by many rows. Grouping a million
// contacts by their id, name, email or exact last-seen time answers a million groups, so those
// groupings are left out of the schema; the organization, a location, a stage, a tag, an
// audience, and timestamps truncated to the hour or the day stay (of the columns exposed.ts shows).
// The areas name those columns (Area.graphql.groupBy); every table's organization_id is one.
export function boundedGroupingsPlugin(columns: readonly string[]): GraphileConfig.Plugin {
  const allowed = new Set(['ORGANIZATION_ID', ...columns.map((c) => c.toUpperCase())]);
  const groupable = (name: string) => allowed.has(name) || /_TRUNCATED_TO_(HOUR|DAY)$/.test(name);
  return {
    name: 'SvcBoundedGroupingsPlugin',
    version: '1.0.0',
    schema: {
      hooks: {
        GraphQLEnumType_values: {
          after: ['aggregates'],
          callback(values, _build, context) {
            if (!context.scope.isPgAggregateGroupEnum) return values;
            return Object.fromEntries(Object.entries(values).filter(([name]) => groupable(name)));
          },
        },
      },
    },
  };
}
