// How big one internal GraphQL operation may be. Every field that reads a table is a query of
// its own, so one request of two thousand aliased `allContacts { totalCount }` would make two
// thousand counts of the whole organization. The limits keep one request to what a dashboard
// or report asks for; introspection (fields starting with __) is not counted, so GraphQL tools
// can read the schema.
import { Kind, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode } from 'postgraphile/graphql';

export const OPERATION_LIMITS = {
  /** Fields at the top of the operation (aliases count): each is at least one query. */
  rootFields: 20,
  /** Fields in the whole operation, fragments expanded. */
  fields: 1000,
  /** Nesting of selections. */
  depth: 10,
} as const;

interface Size { rootFields: number; fields: number; depth: number }

function measure(document: DocumentNode, operation: OperationDefinitionNode): Size {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const size: Size = { rootFields: 0, fields: 0, depth: 0 };
  // Validation has already refused fragment cycles; the fields bound stops a wide expansion early.
  const walk = (set: SelectionSetNode, depth: number, root: boolean): void => {
    for (const s of set.selections) {
      if (size.fields > OPERATION_LIMITS.fields) return;
      if (s.kind === Kind.FIELD) {
        if (s.name.value.startsWith('__')) continue;
        size.fields++;
        if (root) size.rootFields++;
        size.depth = Math.max(size.depth, depth);
        if (s.selectionSet) walk(s.selectionSet, depth + 1, false);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        walk(s.selectionSet, depth, root);
      } else {
        const fragment = fragments.get(s.name.value);
        if (fragment) walk(fragment.selectionSet, depth, root);
      }
    }
  };
  walk(operation.selectionSet, 1, true);
  return size;
}

/** What is over the limits, as a sentence for the caller; undefined when the operation fits. */
export function operationTooLarge(document: DocumentNode, operation: OperationDefinitionNode): string | undefined {
  const size = measure(document, operation);
  if (size.rootFields > OPERATION_LIMITS.rootFields) {
    return `This operation has ${size.rootFields} top-level fields; at most ${OPERATION_LIMITS.rootFields} are accepted`;
  }
  if (size.fields > OPERATION_LIMITS.fields) return `This operation has more than ${OPERATION_LIMITS.fields} fields`;
  if (size.depth > OPERATION_LIMITS.depth) {
    return `This operation nests ${size.depth} levels deep; at most ${OPERATION_LIMITS.depth} are accepted`;
  }
  return undefined;
}
